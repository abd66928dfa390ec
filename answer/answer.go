package answer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

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

// Stages are the pipeline's parts. Retriever is required; a nil stage
// takes its offline implementation (Standalone without corpus
// statistics, PageOrder, a Relevance gate with default options,
// Extractive, Citations).
type Stages struct {
	Rewriter  Rewriter
	Retriever Retriever
	Reranker  Reranker
	Gate      Gate
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
}

// Pipeline answers questions through its stages. It is safe for
// concurrent use when its stages are.
type Pipeline struct {
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
	if st.Rewriter == nil {
		st.Rewriter = Standalone{}
	}
	if st.Reranker == nil {
		st.Reranker = PageOrder{}
	}
	if st.Gate == nil {
		st.Gate = NewRelevance(GateOptions{}, log)
	}
	if st.Generator == nil {
		st.Generator = NewExtractive()
	}
	if st.Verifier == nil {
		st.Verifier = Citations{}
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
// the error text. When the gate finds no answer, or the verified answer
// cites nothing, the Answer is StatusNotFound with NotFoundText.
// Trace.Stages always lists the six stages in order; a stage that did not
// run has zero duration and the detail "skipped".
func (p *Pipeline) Answer(ctx context.Context, q docent.Question) (docent.Answer, error) {
	text := strings.TrimSpace(q.Text)
	if text == "" {
		return docent.Answer{Status: docent.StatusError}, fmt.Errorf("answer: %w", docent.ErrEmptyQuestion)
	}
	st := &stages{now: p.opts.Now}
	a := docent.Answer{Trace: docent.Trace{Query: text}}
	var usage Usage
	fail := func(stage string, err error) (docent.Answer, error) {
		st.stop(stage, "failed")
		serr := &StageError{Stage: stage, Err: err}
		a.Status = docent.StatusError
		a.Trace.Error = serr.Error()
		p.finish(&a, st, usage)
		return a, serr
	}

	// rewrite
	st.start()
	rw, err := p.st.Rewriter.Rewrite(ctx, RewriteRequest{Question: text, History: q.History})
	if err != nil {
		return fail(StageRewrite, err)
	}
	usage = usage.Add(rw.Usage)
	query := strings.TrimSpace(rw.Query)
	if query == "" {
		query = text
	}
	a.Trace.Query, a.Trace.SubQueries = query, rw.SubQueries
	st.stop(StageRewrite, rewriteDetail(text, query, rw.SubQueries))

	// retrieve
	st.start()
	lists, err := p.retrieve(ctx, query, rw.SubQueries, q.Filter)
	if err != nil {
		return fail(StageRetrieve, err)
	}
	st.stop(StageRetrieve, fmt.Sprintf("%d candidates (%s)", countHits(lists), p.opts.Mode))

	// rerank: the question's candidates and each part's, each against
	// its own query
	st.start()
	queries := append([]string{query}, rw.SubQueries...)
	for i := range lists {
		rr, err := p.st.Reranker.Rerank(ctx, RerankRequest{Query: queries[i], Hits: lists[i]})
		if err != nil {
			return fail(StageRerank, err)
		}
		usage = usage.Add(rr.Usage)
		lists[i] = rr.Hits
	}
	hits := merge(lists)
	a.Trace.Candidates = hits
	st.stop(StageRerank, fmt.Sprintf("%d kept", len(hits)))

	// gate
	st.start()
	greq := GateRequest{Question: text, Query: query, SubQueries: rw.SubQueries, Asks: rw.Asks, Hits: hits}
	if len(lists) > 1 {
		greq.PartHits = lists[1:]
	}
	d, err := p.st.Gate.Gate(ctx, greq)
	if err != nil {
		return fail(StageGate, err)
	}
	a.Trace.Threshold, a.Trace.TopScore = d.Threshold, d.TopScore
	st.stop(StageGate, d.Detail)
	switch d.Status {
	case docent.StatusAnswered:
	case docent.StatusUncertain:
		p.uncertain(&a, d)
		p.finish(&a, st, usage)
		return a, nil
	default:
		p.log.DebugContext(ctx, "not found", slog.Float64("top_score", d.TopScore), slog.Float64("threshold", d.Threshold))
		p.notFound(&a)
		p.finish(&a, st, usage)
		return a, nil
	}

	// generate
	st.start()
	res, err := p.st.Generator.Generate(ctx, GenerateRequest{
		Question: text, Query: query, History: q.History,
		Sources: d.Sources, Conflict: d.Conflict, Terms: d.Terms, Parts: d.Parts,
	})
	usage = usage.Add(res.Usage)
	a.Trace.Model, a.Trace.Prompt = res.Model, res.Prompt
	if err != nil {
		return fail(StageGenerate, err)
	}
	st.stop(StageGenerate, generateDetail(res))
	if res.NotFound {
		p.notFound(&a)
		p.finish(&a, st, usage)
		return a, nil
	}

	// verify
	st.start()
	v, err := p.st.Verifier.Verify(ctx, VerifyRequest{Text: res.Text, Sources: d.Sources})
	if err != nil {
		return fail(StageVerify, err)
	}
	a.Trace.CitationsRemoved, a.Trace.Uncited = v.Removed, v.Uncited
	st.stop(StageVerify, fmt.Sprintf("%d citations, %d removed", len(v.Citations), v.Removed))
	if len(v.Citations) == 0 {
		p.notFound(&a)
		p.finish(&a, st, usage)
		return a, nil
	}
	a.Text = v.Text
	a.Citations = v.Citations
	a.Status = docent.StatusAnswered
	a.Trace.Conflict = d.ConflictNote
	for _, c := range v.Citations {
		a.Trace.Used = append(a.Trace.Used, c.ChunkID)
	}
	p.finish(&a, st, usage)
	return a, nil
}

// retrieve runs the query and each sub-query, returning one ranking per
// query (the query's first), each cut to Candidates.
func (p *Pipeline) retrieve(ctx context.Context, query string, parts []string, f docent.Filter) ([][]docent.Hit, error) {
	queries := append([]string{query}, parts...)
	lists := make([][]docent.Hit, len(queries))
	for i, qt := range queries {
		res, err := p.st.Retriever.Retrieve(ctx, search.Request{Text: qt, Filter: f, K: p.opts.Candidates, Mode: p.opts.Mode})
		if err != nil {
			return nil, err
		}
		lists[i] = res.Hits
		if len(lists[i]) > p.opts.Candidates {
			lists[i] = lists[i][:p.opts.Candidates]
		}
	}
	return lists, nil
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
// closest page linked with a one-line excerpt, a person offered. When the
// gate found specific details of the question missing from the sources,
// the reply names them and what the page covers instead.
func (p *Pipeline) uncertain(a *docent.Answer, d Decision) {
	if len(d.Sources) == 0 {
		p.notFound(a)
		return
	}
	src := d.Sources[0]
	a.Status = docent.StatusUncertain
	a.Citations = []docent.Citation{citation(1, src.Hit.Chunk)}
	a.Trace.Used = []string{src.Hit.Chunk.ID}
	a.Text = UncertainText(d.Missing, d.Covered, a.Citations[0], excerpt(src.Hit.Chunk, d.Terms))
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
