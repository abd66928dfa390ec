package answer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/internal/question"
	"github.com/docent-hq/docent/llm"
	"github.com/docent-hq/docent/search"
)

// ErrUnavailable marks a model provider failure that retries could not
// fix: an outage, a rate limit, an exhausted quota. It is
// llm.ErrUnavailable, which every provider wraps (llm.ErrRateLimited
// too). A rewrite, retrieval, rerank or generation that fails with it
// does not fail the answer: the Pipeline falls back (question as the
// query, keyword-only retrieval, fused order) and, when no answer can be
// written, replies uncertain with the closest page and the offer of a
// person. Trace.Error keeps what failed. Any other stage error fails the
// answer with a *StageError.
var ErrUnavailable = llm.ErrUnavailable

// OutageLead opens the reply when the model that writes answers could
// not be reached; the uncertain reply follows it.
const OutageLead = "I can't reach the answer service right now."

// NotFoundText is the reply when the docs do not cover a question.
const NotFoundText = "I couldn't find this in the docs. Want me to bring in a person? " +
	"They can answer it, and the docs can be updated so I can next time."

// Stage names, in pipeline order.
const (
	StageRewrite  = "rewrite"
	StageRetrieve = "retrieve"
	StageRerank   = "rerank"
	StageGate     = "gate"
	StageGenerate = "generate"
	StageVerify   = "verify"
)

// stageOrder lists every stage; the trace always holds all of them.
var stageOrder = []string{StageRewrite, StageRetrieve, StageRerank, StageGate, StageGenerate, StageVerify}

// StageError is the error of a failed stage. Callers show Stage (which is
// safe) and log Err (which may hold provider details).
type StageError struct {
	// Stage is the stage that failed, one of the Stage* names.
	Stage string
	// Err is what went wrong.
	Err error
}

// Error implements error: "answer: STAGE: ERR".
func (e *StageError) Error() string { return "answer: " + e.Stage + ": " + e.Err.Error() }

// Unwrap returns Err.
func (e *StageError) Unwrap() error { return e.Err }

// Stages are the pipeline's parts. Retriever, Gate, Rule and Generator
// are required (answer/offline and answer/llmstage build whole sets); a
// nil Rewriter takes Identity, a nil Reranker FusedOrder and a nil
// Verifier Citations.
type Stages struct {
	Rewriter  Rewriter
	Retriever Retriever
	Reranker  Reranker
	Gate      Gate
	Rule      Rule
	Generator Generator
	Verifier  Verifier
}

// Options tune a Pipeline. Zero values take the documented defaults.
type Options struct {
	// Mode selects the retrievers; default search.ModeDefault.
	Mode search.Mode
	// Candidates is how many hits to retrieve (per query) and keep in the
	// trace; default 30.
	Candidates int
	// Now is the clock used to time stages; default time.Now.
	Now func() time.Time
	// Uncited is the outcome of a generated answer left with no valid
	// citation: StatusNotFound (the default) or StatusUncertain, which
	// flags it as low confidence: no fact asserted, the best source
	// linked, a person offered.
	Uncited docent.Status
}

// Pipeline answers questions through its stages. It is safe for
// concurrent use when its stages are.
type Pipeline struct {
	mu   sync.RWMutex // guards st.Rule
	st   Stages
	log  *slog.Logger
	opts Options
}

// New returns a Pipeline. It fails when st has no Retriever. log nil
// discards logs.
func New(st Stages, log *slog.Logger, opts Options) (*Pipeline, error) {
	if st.Retriever == nil {
		return nil, errors.New("answer: new pipeline: no retriever")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	switch {
	case st.Gate == nil:
		return nil, errors.New("answer: new pipeline: no gate")
	case st.Rule == nil:
		return nil, errors.New("answer: new pipeline: no decision rule")
	case st.Generator == nil:
		return nil, errors.New("answer: new pipeline: no generator")
	}
	if st.Rewriter == nil {
		st.Rewriter = Identity{}
	}
	if st.Reranker == nil {
		st.Reranker = FusedOrder{}
	}
	if st.Verifier == nil {
		st.Verifier = Citations{Log: log}
	}
	switch opts.Uncited {
	case "":
		opts.Uncited = docent.StatusNotFound
	case docent.StatusNotFound, docent.StatusUncertain:
	default:
		return nil, fmt.Errorf("answer: new pipeline: uncited status %q (want not_found or uncertain)", opts.Uncited)
	}
	if opts.Mode == "" {
		opts.Mode = search.ModeDefault
	}
	if opts.Candidates <= 0 {
		opts.Candidates = 30
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Pipeline{st: st, log: log, opts: opts}, nil
}

// Answer answers q through the stages rewrite, retrieve, rerank, gate,
// generate and verify. A question without text returns an error wrapping
// docent.ErrEmptyQuestion. When a stage fails it returns a *StageError
// with an Answer of StatusError whose Trace holds the stages that ran and
// the error text, except for model provider outages (ErrUnavailable),
// which degrade the answer instead (see ErrUnavailable). When the gate
// finds no answer, or the verified answer cites nothing, the Answer is
// StatusNotFound with NotFoundText (or uncertain; see Options.Uncited).
// Trace.Stages always lists the six stages in order; a stage that did not
// run has zero duration and the detail "skipped".
func (p *Pipeline) Answer(ctx context.Context, q docent.Question) (docent.Answer, error) {
	return p.answer(ctx, q, nil)
}

// answer is Answer; onDelta, when not nil, receives the answer text as a
// streaming generator produces it (see AnswerStream).
func (p *Pipeline) answer(ctx context.Context, q docent.Question, onDelta func(string)) (docent.Answer, error) {
	text := strings.TrimSpace(q.Text)
	if text == "" {
		return docent.Answer{Status: docent.StatusError}, fmt.Errorf("answer: %w", docent.ErrEmptyQuestion)
	}
	st := &stages{now: p.opts.Now}
	a := docent.Answer{Trace: docent.Trace{Query: text}}
	if reply, ok := question.SmallTalk(text); ok {
		a.Status, a.Text = docent.StatusSmallTalk, reply
		a.Trace.Stages = st.all()
		return a, nil
	}
	var usage Usage
	fail := func(stage string, err error) (docent.Answer, error) {
		st.stop(stage, "failed")
		serr := &StageError{Stage: stage, Err: err}
		a.Status = docent.StatusError
		a.Trace.Error = joinErr(a.Trace.Error, serr.Error())
		p.finish(&a, st, usage)
		return a, serr
	}
	// degrade records a provider outage in a stage that can do without
	// its model, and reports whether it is one.
	degrade := func(stage string, err error) bool {
		if !errors.Is(err, ErrUnavailable) || ctx.Err() != nil {
			return false
		}
		serr := &StageError{Stage: stage, Err: err}
		a.Trace.Error = joinErr(a.Trace.Error, serr.Error())
		p.log.WarnContext(ctx, "model provider unavailable; answering without it", slog.String("stage", stage), slog.Any("error", err))
		return true
	}

	// rewrite
	st.start()
	rw, err := p.st.Rewriter.Rewrite(ctx, RewriteRequest{Question: text, History: q.History})
	usage = usage.Add(rw.Usage)
	rewriteNote := rw.Detail
	if err != nil {
		if !degrade(StageRewrite, err) {
			return fail(StageRewrite, err)
		}
		rw, rewriteNote = Rewrite{Query: text}, "model unavailable, question used as is"
	}
	query := strings.TrimSpace(rw.Query)
	if query == "" {
		query = text
	}
	a.Trace.Query, a.Trace.SubQueries = query, rw.SubQueries
	st.stop(StageRewrite, withNote(rewriteDetail(text, query, rw.SubQueries), rewriteNote))

	// retrieve: the query (with a HyDE passage, when the rewriter wrote
	// one) and each part of a multi-part question
	st.start()
	var extra []string
	if h := strings.TrimSpace(rw.Hypothetical); h != "" {
		extra = []string{h}
	}
	mode := p.opts.Mode
	hits, parts, err := p.retrieve(ctx, mode, query, extra, rw.SubQueries, q.Filter)
	keywordOnly := false
	if err != nil && mode != search.ModeKeyword && degrade(StageRetrieve, err) {
		mode, keywordOnly = search.ModeKeyword, true
		hits, parts, err = p.retrieve(ctx, mode, query, extra, rw.SubQueries, q.Filter)
	}
	if err != nil {
		return fail(StageRetrieve, err)
	}
	retrieveNote := ""
	if keywordOnly {
		retrieveNote = "embedder unavailable, keyword search only"
	}
	st.stop(StageRetrieve, withNote(fmt.Sprintf("%d candidates (%s)", len(hits)+countHits(parts), mode), retrieveNote))

	// rerank: the question's candidates with the configured reranker; each
	// part's stay in fused order, so that a model reranker runs once per
	// question
	st.start()
	rr, err := p.st.Reranker.Rerank(ctx, RerankRequest{Query: query, Hits: hits})
	usage = usage.Add(rr.Usage)
	rerankNote := rr.Detail
	if err != nil {
		if !degrade(StageRerank, err) {
			return fail(StageRerank, err)
		}
		rr, rerankNote = Reranked{Hits: hits}, "model unavailable, fused order kept"
	}
	// The kept hits come first; the ones the reranker dropped follow in
	// fused order, in the trace and for the gate, which measures relevance
	// against every candidate (its term weights come from them, so its
	// scale, and the calibrated threshold, do not depend on the reranker)
	// and picks sources in this order.
	kept := len(rr.Hits)
	hits = append(slices.Clip(rr.Hits), dropped(hits, rr.Hits)...)
	hits = merge(append([][]docent.Hit{hits}, parts...))
	a.Trace.Candidates = hits
	st.stop(StageRerank, withNote(fmt.Sprintf("%d kept", kept), rerankNote))

	// gate: the evidence, then the answerer's rule
	st.start()
	greq := GateRequest{Question: text, Query: query, SubQueries: rw.SubQueries, Asks: rw.Asks, Hits: hits}
	if len(parts) > 0 {
		greq.PartHits = parts
	}
	ev, err := p.st.Gate.Gate(ctx, greq)
	if err != nil {
		return fail(StageGate, err)
	}
	rule := p.Rule()
	v, genParts := decide(rule, ev)
	a.Trace.Threshold, a.Trace.TopScore = v.Threshold, v.Score
	a.Trace.Decision = &docent.Decision{Rule: ruleName(rule), Features: ev.Features.Map(), Reason: v.Reason, NotSent: ev.Omitted}
	st.stop(StageGate, withNote(ev.Detail, v.Reason))
	switch v.Status {
	case docent.StatusAnswered:
	case docent.StatusUncertain:
		a.Trace.Decision.NotAsked = v.Reason
		if keywordOnly {
			// Without the embedder the gate's doubt may be the outage's.
			p.outage(&a, hits)
		} else {
			p.uncertain(&a, ev)
		}
		p.finish(&a, st, usage)
		return a, nil
	default:
		a.Trace.Decision.NotAsked = v.Reason
		p.log.DebugContext(ctx, "not found", slog.Float64("score", v.Score), slog.Float64("threshold", v.Threshold))
		if keywordOnly && len(hits) > 0 {
			// Without the embedder the gate cannot tell; link the best
			// candidate rather than say the docs lack it.
			p.outage(&a, hits)
		} else {
			p.notFound(&a)
		}
		p.finish(&a, st, usage)
		return a, nil
	}

	// generate
	st.start()
	genReq := GenerateRequest{
		Question: text, Query: query, History: q.History,
		Sources: ev.Sources, Conflict: ev.Conflict, Terms: ev.Terms, Parts: genParts, Basis: ev.Basis,
	}
	for _, s := range ev.Sources {
		a.Trace.Decision.Sources = append(a.Trace.Decision.Sources, s.Hit.Chunk.ID)
	}
	var res GenerateResult
	if sg, ok := p.st.Generator.(StreamGenerator); ok && onDelta != nil {
		live := newLiveCitations(ev.Sources, onDelta)
		res, err = sg.GenerateStream(ctx, genReq, live.write)
	} else {
		res, err = p.st.Generator.Generate(ctx, genReq)
	}
	usage = usage.Add(res.Usage)
	a.Trace.Model, a.Trace.Prompt = res.Model, res.Prompt
	a.Trace.Decision.ModelAsked = res.Model != "" || res.Prompt != ""
	if err != nil {
		if !degrade(StageGenerate, err) {
			return fail(StageGenerate, err)
		}
		st.stop(StageGenerate, "failed: model unavailable")
		a.Trace.Decision.ModelAsked = true
		p.outage(&a, hits)
		p.finish(&a, st, usage)
		return a, nil
	}
	st.stop(StageGenerate, generateDetail(res))
	if res.NotFound {
		p.notFound(&a)
		p.finish(&a, st, usage)
		return a, nil
	}

	// verify
	st.start()
	vf, err := p.st.Verifier.Verify(ctx, VerifyRequest{Text: res.Text, Sources: ev.Sources})
	if err != nil {
		return fail(StageVerify, err)
	}
	a.Trace.CitationsRemoved, a.Trace.Uncited = vf.Removed, vf.Uncited
	st.stop(StageVerify, fmt.Sprintf("%d citations, %d removed, %d uncited sentences", len(vf.Citations), vf.Removed, vf.Uncited))
	if len(vf.Citations) == 0 {
		if p.opts.Uncited == docent.StatusUncertain {
			p.uncertain(&a, ev)
		} else {
			p.notFound(&a)
		}
		p.finish(&a, st, usage)
		return a, nil
	}
	a.Text = vf.Text
	a.Citations = vf.Citations
	a.Status = docent.StatusAnswered
	a.Trace.Conflict = ev.ConflictNote
	for _, c := range vf.Citations {
		a.Trace.Used = append(a.Trace.Used, c.ChunkID)
	}
	p.finish(&a, st, usage)
	return a, nil
}

// decide applies rule to the evidence and, for a multi-part question, to
// each part: the outcome is the best part's (answered over uncertain over
// not found) when any part finds something, else the whole question's.
func decide(rule Rule, ev Evidence) (Verdict, []Part) {
	whole := rule.Decide(ev.Features)
	if len(ev.Parts) == 0 {
		return whole, nil
	}
	parts := make([]Part, len(ev.Parts))
	best := Verdict{Status: docent.StatusNotFound}
	for i, pe := range ev.Parts {
		pv := rule.Decide(pe.Features)
		parts[i] = Part{Ask: pe.Ask, Status: pv.Status, Sources: pe.Sources, Missing: pe.Missing, Terms: pe.Terms}
		if len(pe.Sources) == 0 && pv.Status != docent.StatusNotFound {
			parts[i].Status = docent.StatusNotFound
			continue
		}
		if outcomeRank(pv.Status) > outcomeRank(best.Status) || (pv.Status == best.Status && pv.Score > best.Score) {
			best = pv
		}
	}
	if best.Status == docent.StatusNotFound {
		return whole, nil
	}
	best.Reason = describeParts(parts) + "; " + best.Reason
	return best, parts
}

// outcomeRank orders outcomes: answered over uncertain over not found.
func outcomeRank(s docent.Status) int {
	switch s {
	case docent.StatusAnswered:
		return 2
	case docent.StatusUncertain:
		return 1
	}
	return 0
}

// describeParts is a short trace line for part statuses.
func describeParts(parts []Part) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "part %d %s", i+1, p.Status)
	}
	return b.String()
}

// ruleName names a rule for the trace.
func ruleName(r Rule) string {
	switch r.(type) {
	case Logistic, *Logistic:
		return "logistic"
	case Plausible, *Plausible:
		return "plausible"
	case Always, *Always:
		return "always"
	}
	return fmt.Sprintf("%T", r)
}

// Rule returns the decision rule in force.
func (p *Pipeline) Rule() Rule {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.st.Rule
}

// SetRule replaces the decision rule, for questions asked from now on
// (the console applies a calibration so). A nil rule is ignored.
func (p *Pipeline) SetRule(r Rule) {
	if r == nil {
		return
	}
	p.mu.Lock()
	p.st.Rule = r
	p.mu.Unlock()
}

// dropped returns the hits of all that are not in kept, in order.
func dropped(all, kept []docent.Hit) []docent.Hit {
	in := make(map[string]bool, len(kept))
	for _, h := range kept {
		in[h.Chunk.ID] = true
	}
	var out []docent.Hit
	for _, h := range all {
		if !in[h.Chunk.ID] {
			out = append(out, h)
		}
	}
	return out
}

// joinErr appends msg to the trace's error text.
func joinErr(prev, msg string) string {
	if prev == "" {
		return msg
	}
	return prev + "; " + msg
}

// withNote appends a stage's own note to its detail.
func withNote(detail, note string) string {
	if note == "" {
		return detail
	}
	return detail + "; " + note
}

// retrieve runs the query and its extra queries (a HyDE passage) and
// merges their rankings round-robin into the question's candidates; it
// runs each part of a multi-part question on its own and returns its
// ranking apart. Every ranking is cut to Candidates.
func (p *Pipeline) retrieve(ctx context.Context, mode search.Mode, query string, extra, parts []string, f docent.Filter) ([]docent.Hit, [][]docent.Hit, error) {
	run := func(qt string) ([]docent.Hit, error) {
		res, err := p.st.Retriever.Retrieve(ctx, search.Request{Text: qt, Filter: f, K: p.opts.Candidates, Mode: mode})
		if err != nil {
			return nil, err
		}
		hits := res.Hits
		if len(hits) > p.opts.Candidates {
			hits = hits[:p.opts.Candidates]
		}
		return hits, nil
	}
	lists := make([][]docent.Hit, 0, 1+len(extra))
	for _, qt := range append([]string{query}, extra...) {
		hits, err := run(qt)
		if err != nil {
			return nil, nil, err
		}
		lists = append(lists, hits)
	}
	var partLists [][]docent.Hit
	for _, qt := range parts {
		hits, err := run(qt)
		if err != nil {
			return nil, nil, err
		}
		partLists = append(partLists, hits)
	}
	return merge(lists), partLists, nil
}

// merge merges rankings round-robin (each one's best first), without
// duplicates.
func merge(lists [][]docent.Hit) []docent.Hit {
	if len(lists) == 1 {
		return lists[0]
	}
	var out []docent.Hit
	seen := map[string]bool{}
	for r := 0; ; r++ {
		more := false
		for _, l := range lists {
			if r >= len(l) {
				continue
			}
			more = true
			if !seen[l[r].Chunk.ID] {
				seen[l[r].Chunk.ID] = true
				out = append(out, l[r])
			}
		}
		if !more {
			return out
		}
	}
}

func countHits(lists [][]docent.Hit) int {
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	return n
}

// notFound turns a into the not-found reply.
func (p *Pipeline) notFound(a *docent.Answer) {
	a.Status = docent.StatusNotFound
	a.Text = NotFoundText
	a.Citations = nil
	a.Trace.Used = nil
	a.Trace.Conflict = ""
}

// uncertain turns a into the honest middle reply: no fact asserted, the
// closest pages linked (at most MaxPages), each with its best passage, a
// person offered. When the gate found specific details of the question
// missing from the sources, the reply names them and what the closest
// page covers instead. A page flagged for text addressed to the assistant
// is linked without its passage: that text is never quoted.
func (p *Pipeline) uncertain(a *docent.Answer, ev Evidence) {
	pages := ev.Pages
	if len(pages) == 0 && len(ev.Sources) > 0 {
		pages = []Page{{Hit: ev.Sources[0].Hit}}
	}
	if len(pages) == 0 {
		p.notFound(a)
		return
	}
	a.Status = docent.StatusUncertain
	a.Citations, a.Trace.Used = nil, nil
	passages := make([]string, 0, len(pages))
	for i, pg := range pages[:min(len(pages), MaxPages)] {
		a.Citations = append(a.Citations, citation(i+1, pg.Hit.Chunk))
		a.Trace.Used = append(a.Trace.Used, pg.Hit.Chunk.ID)
		if pg.Hit.Injection != "" {
			pg.Passage = ""
		}
		passages = append(passages, pg.Passage)
	}
	a.Text = UncertainText(ev.Missing, ev.Covered, a.Citations, passages)
}

// outage turns a into the reply when the model could not be reached: the
// uncertain reply after OutageLead, linking the closest distinct pages
// among the candidates (by the relevance a gate measured, else in rank
// order), or not found without any.
func (p *Pipeline) outage(a *docent.Answer, candidates []docent.Hit) {
	order := slices.Clone(candidates)
	slices.SortStableFunc(order, func(x, y docent.Hit) int { return cmpDesc(x.Relevance, y.Relevance) })
	var pages []Page
	seen := map[string]bool{}
	for _, h := range order {
		if !seen[h.Chunk.DocID] && len(pages) < MaxPages {
			seen[h.Chunk.DocID] = true
			pages = append(pages, Page{Hit: h})
		}
	}
	p.uncertain(a, Evidence{Pages: pages})
	if a.Status == docent.StatusUncertain {
		a.Text = OutageLead + " " + a.Text
	}
}

func cmpDesc(x, y float64) int {
	switch {
	case x > y:
		return -1
	case x < y:
		return 1
	}
	return 0
}

// finish fills the trace's token counts and stage list.
func (p *Pipeline) finish(a *docent.Answer, st *stages, u Usage) {
	a.Trace.TokensIn, a.Trace.TokensOut = u.InputTokens, u.OutputTokens
	a.Trace.Stages = st.all()
}

func rewriteDetail(question, query string, parts []string) string {
	d := "query unchanged"
	if query != question {
		d = "rewritten"
	}
	if len(parts) > 0 {
		d += fmt.Sprintf(", %d parts", len(parts))
	}
	return d
}

func generateDetail(res GenerateResult) string {
	who := "extractive"
	if res.Model != "" {
		who = res.Model
	}
	if res.NotFound {
		return who + ": the sources do not say"
	}
	return fmt.Sprintf("%s, %d characters", who, len(res.Text))
}

// stages times pipeline stages with an injectable clock.
type stages struct {
	now   func() time.Time
	t0    time.Time
	list  []docent.Stage
	names map[string]bool
}

func (s *stages) start() { s.t0 = s.now() }

func (s *stages) stop(name, detail string) {
	s.add(docent.Stage{Name: name, Duration: s.now().Sub(s.t0), Detail: detail})
}

func (s *stages) add(st docent.Stage) {
	if s.names == nil {
		s.names = map[string]bool{}
	}
	if s.names[st.Name] {
		return
	}
	s.names[st.Name] = true
	s.list = append(s.list, st)
}

// all returns the recorded stages plus zero-duration "skipped" entries
// for the stages that did not run, in pipeline order.
func (s *stages) all() []docent.Stage {
	byName := map[string]docent.Stage{}
	for _, st := range s.list {
		byName[st.Name] = st
	}
	out := make([]docent.Stage, 0, len(stageOrder))
	for _, n := range stageOrder {
		st, ok := byName[n]
		if !ok {
			st = docent.Stage{Name: n, Detail: "skipped"}
		}
		out = append(out, st)
	}
	return out
}
