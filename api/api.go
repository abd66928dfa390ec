// Package api serves docent's JSON API and operational endpoints:
// POST /api/ask, POST /api/feedback, /healthz, /readyz, /metrics, and /docs/{source}/{path} for
// sources that live on this machine (the bundled handbook, local folders),
// so that their citations are clickable.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/admission"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/internal/lograte"
)

// Asker answers a question and records the turn.
type Asker interface {
	// Ask returns the stored turn. It returns an error wrapping
	// docent.ErrEmptyQuestion for a blank question.
	Ask(ctx context.Context, q docent.Question) (docent.Turn, error)
}

// Formatter renders an answer as plain text with its source list.
type Formatter func(docent.Answer) string

// Admission admits an ask before any work is done on it: the admission
// control every entrance shares (admission.Controller).
type Admission interface {
	// Acquire waits for a slot for a question from channel on platform
	// and returns the function that frees it. It returns an error
	// wrapping admission.ErrBusy (a *admission.BusyError, with
	// RetryAfter) when the ask is refused, or ctx's error.
	Acquire(ctx context.Context, platform, channel string) (release func(), err error)
}

// Readiness is whether the index is loaded and can serve; the sync side
// owns it (connectors.Readiness).
type Readiness interface {
	// Loaded reports whether the index holds something to answer from:
	// /api/ask answers 503 not_ready before.
	Loaded() bool
	// Check returns nil when the index can serve now (/readyz), else why
	// not.
	Check(ctx context.Context) error
}

// Server holds the HTTP handlers.
type Server struct {
	asker    Asker
	format   Formatter
	gatherer prometheus.Gatherer
	docs     *Docs
	log      *slog.Logger
	ready    Readiness
	checks   []func(context.Context) error
	admit    Admission
	onShed   func(code string)
	fb       FeedbackStore
	flags    FlagFunc
	// quiet rate-limits the log lines of failures that repeat (storage,
	// readiness): one line per interval, with the count of the others.
	quiet map[string]*lograte.Quiet
}

// Options configure a Server. Zero fields take the defaults.
type Options struct {
	// Admission is the admission control shared with the other
	// entrances; nil gives the server one of its own with the defaults.
	Admission Admission
	// OnShed, when set, is called with the code (CodeNotReady or
	// CodeOverloaded) of every ask refused with 503, for metrics.
	OnShed func(code string)
	// Ready is the index's readiness; nil serves as always ready.
	Ready Readiness
	// Feedback, when set, stores the ratings of POST /api/feedback;
	// without it the route is a 404.
	Feedback FeedbackStore
	// Flags, when set, says which cited documents are flagged stale, so
	// that an answer citing them says so.
	Flags FlagFunc
}

// FlagFunc returns, for the IDs among docIDs that are flagged stale,
// what they are flagged for; stale.Checker.Flagged implements it.
type FlagFunc func(ctx context.Context, docIDs []string) (map[string]string, error)

// New builds the API server. docs may be nil when no local source is served.
func New(asker Asker, format Formatter, gatherer prometheus.Gatherer, docs *Docs, log *slog.Logger, opts Options) *Server {
	admit := opts.Admission
	if admit == nil {
		admit = admission.New(admission.Options{})
	}
	return &Server{asker: asker, format: format, gatherer: gatherer, docs: docs, log: log,
		admit: admit, onShed: opts.OnShed, ready: opts.Ready, fb: opts.Feedback, flags: opts.Flags,
		quiet: map[string]*lograte.Quiet{"readyz": lograte.New(10 * time.Second)}}
}

// loaded reports whether the index holds something to answer from.
func (s *Server) loaded() bool { return s.ready == nil || s.ready.Loaded() }

// AddCheck adds a readiness check that /readyz runs once the index is
// loaded, beside the Readiness's own (the store's write health); /readyz
// answers 503 while any fails. Call it before serving.
func (s *Server) AddCheck(check func(context.Context) error) { s.checks = append(s.checks, check) }

// LastAsk is when the last admitted ask ended, on any entrance that
// shares the admission control (zero before the first, or when the
// admission control does not say).
func (s *Server) LastAsk() time.Time {
	if l, ok := s.admit.(interface{ LastRelease() time.Time }); ok {
		return l.LastRelease()
	}
	return time.Time{}
}

// Handler returns the routes. Requests that match none get a JSON 404 or
// 405.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.gatherer, promhttp.HandlerOpts{}))
	mux.HandleFunc("POST /api/ask", s.ask)
	mux.HandleFunc("POST /api/feedback", s.feedback)
	if s.docs != nil {
		mux.Handle("GET /docs/{source}/{path...}", s.docs)
	}
	return routeErrors(mux)
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if !s.loaded() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "loading"})
		return
	}
	checks := s.checks
	if s.ready != nil {
		checks = append([]func(context.Context) error{s.ready.Check}, checks...)
	}
	for _, check := range checks {
		if err := check(r.Context()); err != nil {
			s.quiet["readyz"].Log(func(heldBack int) {
				s.log.WarnContext(r.Context(), "not ready", slog.Any("error", err), slog.Int("repeats_not_logged", heldBack))
			})
			status := "unavailable"
			if errors.Is(err, docent.ErrStorageUnavailable) {
				status = CodeStorageUnavailable
			}
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": status, "error": err.Error()})
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// AskRequest is the body of POST /api/ask.
type AskRequest struct {
	// Question is the question text (required).
	Question string `json:"question"`
	// Filter optionally scopes retrieval.
	Filter docent.Filter `json:"filter"`
	// Trace asks for the full retrieval trace in the response.
	Trace bool `json:"trace"`
}

// AskResponse is the reply of POST /api/ask.
type AskResponse struct {
	// TurnID identifies the stored turn.
	TurnID int64 `json:"turn_id"`
	// Status is answered, not_found or error.
	Status docent.Status `json:"status"`
	// Answer is the answer text with [n] markers.
	Answer string `json:"answer"`
	// Citations are the numbered sources.
	Citations []docent.Citation `json:"citations"`
	// Text is the answer rendered with its source list, as a terminal shows it.
	Text string `json:"text"`
	// Flagged lists the cited sources flagged stale (older than their
	// source's policy, in conflict with a newer page, ...): the answer
	// may rest on out-of-date text. Text says so too.
	Flagged []FlaggedSource `json:"flagged,omitempty"`
	// Trace is present when the request asked for it.
	Trace *docent.Trace `json:"trace,omitempty"`
}

// FlaggedSource is a cited source flagged stale.
type FlaggedSource struct {
	// N is the citation's number; DocID and Title name the document.
	N     int    `json:"n"`
	DocID string `json:"doc_id"`
	Title string `json:"title"`
	// Why says what it is flagged for.
	Why string `json:"why"`
}

// Flag marks the response's citations of flagged documents (doc ID to
// why): Flagged lists them, and Text ends with a line for each.
func (r *AskResponse) Flag(flags map[string]string) {
	for _, c := range r.Citations {
		why, ok := flags[c.DocID]
		if !ok {
			continue
		}
		r.Flagged = append(r.Flagged, FlaggedSource{N: c.N, DocID: c.DocID, Title: c.Title, Why: why})
		r.Text += "Note: [" + strconv.Itoa(c.N) + "] " + c.Title + " may be out of date (" + why + ").\n"
	}
}

// AskTimeout bounds the work one POST /api/ask may do.
const AskTimeout = 30 * time.Second

// Retry-After values of the 503s.
const (
	retryNotReady   = 5 * time.Second
	retryOverloaded = 1 * time.Second
	retryStorage    = 10 * time.Second
)

// StageStore is the AskFailure stage of an answer that could not be
// stored.
const StageStore = "store"

// ask answers POST /api/ask. The cheap refusals come first: not ready,
// then a malformed body, then no free slot; only an admitted ask does any
// retrieval.
func (s *Server) ask(w http.ResponseWriter, r *http.Request) {
	if !s.loaded() {
		s.shed(w, &apiError{status: http.StatusServiceUnavailable, code: CodeNotReady, retryAfter: retryNotReady,
			msg: "docent is indexing its sources for the first time; retry when GET /readyz answers 200"})
		return
	}
	req, aerr := readAsk(w, r)
	if aerr != nil {
		aerr.write(w)
		return
	}
	q := docent.Question{Text: req.Question, Platform: "api", Filter: req.Filter}
	if c, ok := docent.CallerFromContext(r.Context()); ok {
		// A token's scope narrows the filter inside retrieval; a filter
		// that names a source or label outside it is refused.
		f, err := c.Scope.Restrict(req.Filter)
		if err != nil {
			writeError(w, http.StatusForbidden, CodeOutOfScope, "This token may not read that: "+err.Error()+".")
			return
		}
		q.Filter, q.User = f, c.Name
	}
	release, err := s.admit.Acquire(r.Context(), q.Platform, q.User)
	if err != nil {
		if r.Context().Err() != nil {
			return // the client has gone
		}
		retry := retryOverloaded
		if be, ok := errors.AsType[*admission.BusyError](err); ok {
			retry = be.RetryAfter
		}
		s.shed(w, &apiError{status: http.StatusServiceUnavailable, code: CodeOverloaded, retryAfter: retry,
			msg: "too many questions at once; retry shortly"})
		return
	}
	defer release()
	ctx, cancel := context.WithTimeout(r.Context(), AskTimeout)
	defer cancel()
	turn, err := s.asker.Ask(ctx, q)
	switch {
	case errors.Is(err, docent.ErrEmptyQuestion):
		writeError(w, http.StatusBadRequest, CodeEmptyQuestion, "question is empty")
		return
	case errors.Is(err, docent.ErrStorageUnavailable):
		// The Recorder logged it (rate-limited); one line is enough.
		w.Header().Set("Retry-After", strconv.Itoa(int(retryStorage/time.Second)))
		writeJSON(w, http.StatusServiceUnavailable, AskFailure{Error: CodeStorageUnavailable, Stage: StageStore,
			Message: "The answer was made but could not be stored, so it is not given: the database cannot take writes " +
				"(is the disk full?). Nothing was recorded for this question; retry later."})
		return
	case err != nil:
		s.log.ErrorContext(r.Context(), "ask", slog.Int64("turn", turn.ID), slog.String("error", turn.Answer.Trace.Error))
		writeJSON(w, http.StatusInternalServerError, failure(turn, err))
		return
	}
	resp := NewAskResponse(turn, s.format, req.Trace)
	if s.flags != nil && len(turn.Answer.Citations) > 0 {
		var ids []string
		for _, c := range turn.Answer.Citations {
			ids = append(ids, c.DocID)
		}
		if flags, err := s.flags(ctx, ids); err != nil {
			s.log.WarnContext(r.Context(), "ask: stale flags", slog.Any("error", err))
		} else {
			resp.Flag(flags)
		}
	}
	writeJSON(w, http.StatusOK, resp)
}

// shed refuses an ask with 503 and Retry-After.
func (s *Server) shed(w http.ResponseWriter, e *apiError) {
	if s.onShed != nil {
		s.onShed(e.code)
	}
	e.write(w)
}

// NewAskResponse builds the reply for a stored turn; the API and
// `docent ask --json` print the same shape.
func NewAskResponse(turn docent.Turn, format Formatter, withTrace bool) AskResponse {
	resp := AskResponse{
		TurnID:    turn.ID,
		Status:    turn.Answer.Status,
		Answer:    turn.Answer.Text,
		Citations: turn.Answer.Citations,
		Text:      format(turn.Answer),
	}
	if resp.Citations == nil {
		resp.Citations = []docent.Citation{}
	}
	if withTrace {
		resp.Trace = &turn.Answer.Trace
	}
	return resp
}

// AskFailure is the body of a failed POST /api/ask: which step failed and
// the stored turn to look up, never the error's internals.
type AskFailure struct {
	// Error is the stable code: CodeAnswerFailed, or
	// CodeStorageUnavailable (stage "store", no turn).
	Error string `json:"error"`
	// Stage is the answer stage that failed ("retrieve", "generate", ...),
	// "" when the failure was outside the stages.
	Stage string `json:"stage,omitempty"`
	// Message says what failed, safe to show.
	Message string `json:"message"`
	// TurnID is the stored turn that holds the full error, 0 if none.
	TurnID int64 `json:"turn_id,omitempty"`
}

// failure describes a failed ask without its internals.
func failure(turn docent.Turn, err error) AskFailure {
	f := AskFailure{Error: CodeAnswerFailed, TurnID: turn.ID, Message: "The answer could not be made."}
	var se *answer.StageError
	if errors.As(err, &se) {
		f.Stage = se.Stage
		f.Message = "The " + se.Stage + " step failed, so no answer was made."
	}
	if turn.ID != 0 {
		f.Message += " The error is recorded with turn " + strconv.FormatInt(turn.ID, 10) + "."
	}
	return f
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
