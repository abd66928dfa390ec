package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/store"
	"github.com/docent-hq/docent/templates"
)

// ErrRunInProgress is returned when a golden run is asked for while one runs.
var ErrRunInProgress = errors.New("console: a golden run is in progress")

// rankedDocs is how many top documents a run row keeps ("what ranked").
const rankedDocs = 5

// runGolden starts a run of the golden set in the background.
func (h *handler) runGolden(w http.ResponseWriter, r *http.Request) {
	calibrate := r.PostFormValue("calibrate") == "1" && h.opts.Tuner != nil
	id, err := h.startGoldenRun(r.Context(), sessionOf(r.Context()).user, calibrate)
	switch {
	case errors.Is(err, ErrRunInProgress):
		h.renderError(w, r, http.StatusConflict, "A golden run is already in progress.")
		return
	case err != nil:
		h.serverError(w, r, err)
		return
	}
	redirect(w, r, "/golden/runs/"+templates.I64(id), "run")
}

// StartGoldenRun records a run of the stored golden set and runs it in
// the background through the server's answer pipeline (eval.RunGolden),
// storing the report, one row per question and the redacted
// configuration. It returns the run's ID, or ErrRunInProgress.
func (h *handler) StartGoldenRun(ctx context.Context, by string) (int64, error) {
	return h.startGoldenRun(ctx, by, false)
}

// startGoldenRun is StartGoldenRun; with calibrate, the run also fits the
// offline answerer on the set (Tuner.Calibrate) and stores the fit.
func (h *handler) startGoldenRun(ctx context.Context, by string, calibrate bool) (int64, error) {
	h.runMu.Lock()
	defer h.runMu.Unlock()
	if h.runID != 0 {
		return 0, ErrRunInProgress
	}
	qs, err := h.store.ListGolden(ctx)
	if err != nil {
		return 0, err
	}
	g := toEval(qs)
	if err := g.Validate(); err != nil {
		return 0, err
	}
	run := docent.GoldenRun{StartedBy: by, Config: h.opts.Config(), Questions: len(g.Questions)}
	if err := h.store.StartGoldenRun(ctx, &run); err != nil {
		return 0, err
	}
	h.runID = run.ID
	h.runs.Add(1)
	go func() {
		defer h.runs.Done()
		h.finishRun(run, qs, g)
		if calibrate {
			h.calibrate(run.ID, g)
		}
		h.runMu.Lock()
		h.runID = 0
		h.runMu.Unlock()
	}()
	return run.ID, nil
}

// finishRun asks every question and records the outcome. A run stopped
// by shutdown is recorded as failed.
func (h *handler) finishRun(run docent.GoldenRun, qs []docent.GoldenQuestion, g *eval.Golden) {
	ctx := h.runCtx
	rec := &rankRecorder{a: h.opts.Answerer, store: h.store, run: run.ID, qs: qs, now: h.now, log: h.log}
	rep, err := eval.RunGolden(ctx, g, rec)
	errText := ""
	if err != nil {
		errText = err.Error()
		h.log.Error("console: golden run failed", slog.Int64("run", run.ID), slog.Any("error", err))
	}
	rows := make([]docent.GoldenRunRow, 0, len(rep.Rows))
	for i, row := range rep.Rows {
		b, merr := json.Marshal(row)
		if merr != nil {
			errText = merr.Error()
			break
		}
		rows = append(rows, docent.GoldenRunRow{Position: i, QuestionID: row.ID, Question: qs[i].Question,
			Kind: string(row.Kind), Status: string(row.Status), Pass: row.Pass, FirstRank: row.FirstRank,
			Ranked: rec.ranked(i), Expect: expectText(qs[i].Expect), TurnID: rec.turn(i), Row: b})
	}
	rep.Rows = nil
	report, merr := json.Marshal(rep)
	if merr != nil && errText == "" {
		errText = merr.Error()
	}
	if err := h.store.FinishGoldenRun(context.WithoutCancel(ctx), run.ID, report, rows, errText); err != nil {
		h.log.Error("console: record golden run", slog.Int64("run", run.ID), slog.Any("error", err))
		return
	}
	h.log.Info("console: golden run finished", slog.Int64("run", run.ID), slog.Int("questions", rep.Questions),
		slog.Float64("hit_at_5", rep.HitAt5), slog.Float64("mrr_at_10", rep.MRR10),
		slog.Float64("not_found_accuracy", rep.NotFoundAccuracy))
}

// calibrate fits the offline answerer on g and stores the fit with run
// id; a failure is logged and stored as the fit's absence.
func (h *handler) calibrate(id int64, g *eval.Golden) {
	ctx := h.runCtx
	fit, err := h.opts.Tuner.Calibrate(ctx, g)
	if err != nil {
		h.log.Error("console: calibration failed", slog.Int64("run", id), slog.Any("error", err))
		return
	}
	b, err := json.Marshal(fit)
	if err == nil {
		err = h.store.SetCalibration(context.WithoutCancel(ctx), id, b)
	}
	if err != nil {
		h.log.Error("console: record calibration", slog.Int64("run", id), slog.Any("error", err))
	}
}

// applyCalibration puts the fit stored with a run in force.
func (h *handler) applyCalibration(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(r)
	if !ok || h.opts.Tuner == nil {
		h.renderError(w, r, http.StatusNotFound, "No such run.")
		return
	}
	run, err := h.store.GoldenRunByID(r.Context(), id)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	var fit eval.Fit
	if len(run.Calibration) == 0 || json.Unmarshal(run.Calibration, &fit) != nil {
		h.renderError(w, r, http.StatusConflict, "This run has no calibration to apply.")
		return
	}
	if err := h.opts.Tuner.Apply(r.Context(), fit, sessionOf(r.Context()).user); err != nil {
		h.serverError(w, r, err)
		return
	}
	redirect(w, r, "/golden/runs/"+templates.I64(id), "applied")
}

// addSynonym adds a synonym entry from the misses page.
func (h *handler) addSynonym(w http.ResponseWriter, r *http.Request) {
	if h.opts.Tuner == nil {
		h.renderError(w, r, http.StatusNotFound, "Synonyms are the offline answerer's; this server answers with a model.")
		return
	}
	from, to := strings.TrimSpace(r.PostFormValue("from")), strings.TrimSpace(r.PostFormValue("to"))
	if from == "" || to == "" || strings.ContainsAny(from+to, "=\n#") {
		h.renderError(w, r, http.StatusBadRequest, "Give the asker's words and the docs' words, without = or #.")
		return
	}
	if err := h.opts.Tuner.AddSynonym(r.Context(), from+" => "+to, sessionOf(r.Context()).user); err != nil {
		h.renderError(w, r, http.StatusBadRequest, err.Error())
		return
	}
	redirect(w, r, "/misses", "synonym")
}

// rankRecorder answers through a and keeps, per question in order (the
// runner asks them one after the other), the documents that ranked
// first and the turn that stores the answer's trace: a golden turn
// (platform eval, channel "run-N", thread the question's ID), which the
// logs, misses and overview leave out.
type rankRecorder struct {
	a     eval.Answerer
	store *store.DB
	run   int64
	qs    []docent.GoldenQuestion
	now   func() time.Time
	log   *slog.Logger

	mu    sync.Mutex
	tops  [][]string
	turns []int64
}

func (r *rankRecorder) Answer(ctx context.Context, q docent.Question) (docent.Answer, error) {
	ans, err := r.a.Answer(ctx, q)
	var top []string
	for _, h := range ans.Trace.Candidates {
		if len(top) == rankedDocs {
			break
		}
		if id := h.Chunk.DocID; id != "" && !contains(top, id) {
			top = append(top, id)
		}
	}
	r.mu.Lock()
	i := len(r.tops)
	r.tops = append(r.tops, top)
	r.mu.Unlock()
	var turnID int64
	if r.store != nil {
		q.Channel = "run-" + strconv.FormatInt(r.run, 10)
		if i < len(r.qs) {
			q.Thread = r.qs[i].ID
		}
		stored := ans
		if err != nil {
			stored.Status = docent.StatusError
			if stored.Trace.Error == "" {
				stored.Trace.Error = err.Error()
			}
		}
		t := docent.Turn{Question: q, Answer: stored, CreatedAt: r.now().UTC()}
		if serr := r.store.CreateTurn(context.WithoutCancel(ctx), &t); serr != nil {
			r.log.Warn("console: golden run: store the trace", slog.Int64("run", r.run), slog.Any("error", serr))
		} else {
			turnID = t.ID
		}
	}
	r.mu.Lock()
	r.turns = append(r.turns, turnID)
	r.mu.Unlock()
	return ans, err
}

// ranked and turn return what was kept for the i-th question.
func (r *rankRecorder) ranked(i int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i < len(r.tops) {
		return r.tops[i]
	}
	return nil
}

func (r *rankRecorder) turn(i int) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i < len(r.turns) {
		return r.turns[i]
	}
	return 0
}

// expectText lists a question's expected documents, "doc › section".
func expectText(es []docent.GoldenExpect) []string {
	var out []string
	for _, e := range es {
		if e.Section != "" {
			out = append(out, e.Doc+" › "+e.Section)
		} else {
			out = append(out, e.Doc)
		}
	}
	return out
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// showGoldenRun renders one run: numbers, rows and configuration.
func (h *handler) showGoldenRun(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(r)
	if !ok {
		h.renderError(w, r, http.StatusNotFound, "No such run.")
		return
	}
	run, err := h.store.GoldenRunByID(r.Context(), id)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	v, err := runView(run)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	rows, err := h.store.GoldenRunRows(r.Context(), id)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	p := templates.GoldenRunPage{Meta: h.meta(r, fmt.Sprintf("Golden run #%d", id), "golden"), GoldenRunView: v,
		CanTune: h.opts.Tuner != nil}
	if len(run.Calibration) > 0 {
		var fit eval.Fit
		if err := json.Unmarshal(run.Calibration, &fit); err != nil {
			h.serverError(w, r, fmt.Errorf("console: calibration of golden run %d: %w", id, err))
			return
		}
		var b strings.Builder
		if err := fit.WriteConfig(&b); err != nil {
			h.serverError(w, r, err)
			return
		}
		c := calibrationView(fit)
		p.Calibration, p.CalibrationConfig = &c, b.String()
	}
	for _, row := range rows {
		var o eval.GoldenRow
		if err := json.Unmarshal(row.Row, &o); err != nil {
			h.serverError(w, r, fmt.Errorf("console: row %s of golden run %d: %w", row.QuestionID, id, err))
			return
		}
		p.Rows = append(p.Rows, templates.GoldenRowView{GoldenRunRow: row, Outcome: outcomeView(o)})
	}
	runs, err := h.store.ListGoldenRuns(r.Context(), 50)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	for _, o := range runs {
		if o.ID != id && o.Status == "ok" {
			p.Others = append(p.Others, o)
		}
	}
	h.render(w, r, templates.GoldenRunDetail(p))
}

// calibrationView is the view of a fit: what the fitted rule and the
// rule in force give, set by set.
func calibrationView(f eval.Fit) templates.Calibration {
	outcomes := func(in []eval.Outcome) []templates.RuleOutcome {
		var out []templates.RuleOutcome
		for _, o := range in {
			out = append(out, templates.RuleOutcome{Answerable: o.Answerable, Unanswerable: o.Unanswerable,
				AnsweredCorrect: o.AnsweredCorrect, AnsweredWrong: o.AnsweredWrong, Declined: o.Declined})
		}
		return out
	}
	c := templates.Calibration{BySet: outcomes(f.BySet), Current: outcomes(f.Current)}
	if len(f.Separation) > 0 {
		sep := f.Separation[len(f.Separation)-1] // all the sets together
		c.Evidence = append(c.Evidence, templates.MeasureAUC{Name: "fitted rule", AUC: sep.Rule})
		for _, name := range answer.FeatureNames {
			c.Evidence = append(c.Evidence, templates.MeasureAUC{Name: name, AUC: sep.Features[name]})
		}
	}
	return c
}

// outcomeView is the view of a question's outcome in a run: what says
// why it failed.
func outcomeView(o eval.GoldenRow) templates.RowOutcome {
	return templates.RowOutcome{Kind: o.Kind, Status: o.Status, Error: o.Error, FirstRank: o.FirstRank,
		FirstCitedOK: o.FirstCitedOK, FactsOK: o.FactsOK, MissingFacts: o.MissingFacts}
}
