package answer

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// NotFoundText is the reply when the docs do not cover a question.
const NotFoundText = "I couldn't find this in the docs. Want me to bring in a person? " +
	"They can answer it, and the docs can be updated so I can next time."

// Searcher retrieves hits for a query. search.Index satisfies it.
type Searcher interface {
	// Search runs the query and returns at most q.K hits in fused order.
	// It returns an error when the mode needs a vector and q.Vector is empty.
	Search(ctx context.Context, q search.Query) ([]docent.Hit, error)
}

// Generator writes an answer from numbered sources. The offline
// Extractive generator is the default; model-backed generators (Gemini,
// OpenAI-compatible) implement it elsewhere.
type Generator interface {
	// Generate returns answer text that cites req.Sources as [n], n being
	// the source's Source.N. It may cite any subset, in any order; the
	// pipeline drops markers that name no source and renumbers the rest in
	// order of first use. Text that cites nothing is treated as "not
	// found". Generate returns an error only when it could not run (a
	// provider failure), never for a question it cannot answer.
	Generate(ctx context.Context, req GenerateRequest) (GenerateResult, error)
}

// Source is one numbered source given to a Generator.
type Source struct {
	// N is the source's number in the request, from 1.
	N int
	// Hit is the retrieved chunk with its ranks and scores.
	Hit docent.Hit
	// Relevance is the chunk's absolute relevance (see the package doc).
	Relevance float64
}

// Conflict names two sources that disagree, by their numbers in the request.
type Conflict struct {
	// Newer is the source from the most recently updated document; Older
	// the other one.
	Newer, Older int
	// Terms are the heading words the two sources share.
	Terms []string
}

// GenerateRequest is what a Generator answers from.
type GenerateRequest struct {
	// Question is the question as asked (trimmed).
	Question string
	// Sources are numbered from 1, best first. Sources above the relevance
	// threshold come before those below it.
	Sources []Source
	// Conflict is set when two sources disagree; a generator should prefer
	// the newer one and say that the sources differ.
	Conflict *Conflict
	// Terms maps each content term of the question (search.Analyze form) to
	// its IDF weight. Generators that do their own matching may ignore it.
	Terms map[string]float64
}

// GenerateResult is a Generator's answer.
type GenerateResult struct {
	// Text is the answer with [n] markers naming GenerateRequest.Sources.
	Text string
}

// Options tune a Pipeline. Zero values take the documented defaults.
type Options struct {
	// Mode selects the retrievers; default search.ModeHybrid.
	Mode search.Mode
	// Candidates is how many hits to retrieve and keep in the trace; default 20.
	Candidates int
	// MaxSources is how many sources (one chunk per document) the generator
	// sees; default 4. A conflicting near-duplicate may add one more.
	MaxSources int
	// MinScore is the relevance threshold; 0 means DefaultMinScore.
	MinScore float64
	// Weights combine the relevance components; zero means DefaultWeights.
	Weights Weights
	// IDF, when set, gives corpus IDF for a term (search.Analyze form);
	// terms it does not know are estimated from the candidates.
	IDF func(term string) (float64, bool)
	// Now is the clock used to time stages; default time.Now.
	Now func() time.Time
}

// Pipeline answers questions from an index. It is safe for concurrent use
// when its Searcher, Embedder and Generator are.
type Pipeline struct {
	searcher Searcher
	emb      search.Embedder
	gen      Generator
	log      *slog.Logger
	opts     Options
}

// New returns a Pipeline. emb may be nil when opts.Mode is
// search.ModeKeyword; gen nil means the offline Extractive generator; log
// nil discards logs.
func New(s Searcher, emb search.Embedder, gen Generator, log *slog.Logger, opts Options) *Pipeline {
	if opts.Mode == "" {
		opts.Mode = search.ModeHybrid
	}
	if opts.Candidates <= 0 {
		opts.Candidates = 20
	}
	if opts.MaxSources <= 0 {
		opts.MaxSources = 4
	}
	if opts.MinScore == 0 {
		opts.MinScore = DefaultMinScore
	}
	if opts.Weights == (Weights{}) {
		opts.Weights = DefaultWeights
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if gen == nil {
		gen = NewExtractive()
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Pipeline{searcher: s, emb: emb, gen: gen, log: log, opts: opts}
}

// Answer answers q. A question without text returns an error wrapping
// docent.ErrEmptyQuestion. When embedding, retrieval or generation fails it
// returns the error with an Answer of StatusError whose Trace holds the
// stages that ran. When no candidate reaches the relevance threshold, or
// the generator cites nothing, the Answer is StatusNotFound with
// NotFoundText. Trace.Stages always lists embed, retrieve, threshold and
// generate in that order; a stage that did not run has zero duration.
func (p *Pipeline) Answer(ctx context.Context, q docent.Question) (docent.Answer, error) {
	text := strings.TrimSpace(q.Text)
	if text == "" {
		return docent.Answer{Status: docent.StatusError}, fmt.Errorf("answer: %w", docent.ErrEmptyQuestion)
	}
	st := &stages{now: p.opts.Now}
	a := docent.Answer{Trace: docent.Trace{Query: text, Threshold: p.opts.MinScore}}
	fail := func(err error) (docent.Answer, error) {
		a.Status = docent.StatusError
		a.Trace.Stages = st.all()
		return a, err
	}

	// embed
	st.start()
	var vec []float32
	if p.opts.Mode != search.ModeKeyword {
		if p.emb == nil {
			return fail(fmt.Errorf("answer: embed: no embedder for mode %s", p.opts.Mode))
		}
		vs, err := p.emb.Embed(ctx, []string{text})
		if err != nil {
			st.stop("embed")
			return fail(fmt.Errorf("answer: embed: %w", err))
		}
		if len(vs) != 1 {
			st.stop("embed")
			return fail(fmt.Errorf("answer: embed: got %d vectors for 1 text", len(vs)))
		}
		vec = vs[0]
	}
	st.stop("embed")

	// retrieve
	st.start()
	hits, err := p.searcher.Search(ctx, search.Query{
		Text: text, Vector: vec, Filter: q.Filter, K: p.opts.Candidates, Mode: p.opts.Mode,
	})
	st.stop("retrieve")
	if err != nil {
		return fail(fmt.Errorf("answer: retrieve: %w", err))
	}
	if len(hits) > p.opts.Candidates {
		hits = hits[:p.opts.Candidates]
	}
	a.Trace.Candidates = hits

	// threshold
	st.start()
	terms := queryTerms(text)
	sets := make([]map[string]bool, len(hits))
	for i, h := range hits {
		sets[i] = termSet(h.Chunk.Text)
	}
	sc := newScorer(terms, sets, p.opts.IDF, p.opts.Weights)
	rels := make([]relevance, len(hits))
	best := -1
	for i, h := range hits {
		rels[i] = sc.score(h, sets[i])
		hits[i].Relevance = round4(rels[i].Score)
		if best < 0 || rels[i].Score > rels[best].Score {
			best = i
		}
	}
	if best >= 0 {
		a.Trace.TopScore = round4(rels[best].Score)
		r := rels[best]
		p.log.DebugContext(ctx, "relevance", slog.String("chunk", hits[best].Chunk.ID),
			slog.Float64("score", r.Score), slog.Float64("coverage", r.Coverage),
			slog.Float64("vector", r.Vector), slog.Float64("keyword", r.Keyword),
			slog.Any("terms", terms))
	}
	found := best >= 0 && rels[best].Score >= p.opts.MinScore
	st.stop("threshold")

	if !found {
		st.skip("generate")
		p.notFound(&a, st)
		p.log.DebugContext(ctx, "not found", slog.Float64("top_score", a.Trace.TopScore),
			slog.Float64("threshold", p.opts.MinScore))
		return a, nil
	}

	// generate
	st.start()
	srcs := p.selectSources(hits, rels, sc)
	req := GenerateRequest{Question: text, Sources: srcs, Terms: sc.idf}
	if c, desc := detectConflict(srcs, sc); c != nil {
		req.Conflict = c
		a.Trace.Conflict = desc
	}
	res, err := p.gen.Generate(ctx, req)
	st.stop("generate")
	if err != nil {
		return fail(fmt.Errorf("answer: generate: %w", err))
	}
	out, cites := renumber(res.Text, srcs)
	if len(cites) == 0 {
		a.Trace.Conflict = ""
		p.notFound(&a, st)
		return a, nil
	}
	a.Text = out
	a.Citations = cites
	a.Status = docent.StatusAnswered
	for _, c := range cites {
		a.Trace.Used = append(a.Trace.Used, c.ChunkID)
	}
	a.Trace.Stages = st.all()
	return a, nil
}

// notFound turns a into the not-found reply.
func (p *Pipeline) notFound(a *docent.Answer, st *stages) {
	a.Status = docent.StatusNotFound
	a.Text = NotFoundText
	a.Citations = nil
	a.Trace.Used = nil
	a.Trace.Stages = st.all()
}

// selectSources picks up to MaxSources hits, one per document, in fused
// (retrieval) order, skipping hits whose relevance is under half the best
// candidate's: retrieval order is the better-measured ranking, relevance
// only keeps weak matches out.
func (p *Pipeline) selectSources(hits []docent.Hit, rels []relevance, sc *scorer) []Source {
	var srcs []Source
	seen := map[string]bool{}
	top := 0.0
	for _, r := range rels {
		top = max(top, r.Score)
	}
	for i, h := range hits {
		if len(srcs) == p.opts.MaxSources {
			break
		}
		if rels[i].Score < top*minSourceShare || seen[docKey(h.Chunk)] {
			continue
		}
		seen[docKey(h.Chunk)] = true
		srcs = append(srcs, Source{N: len(srcs) + 1, Hit: h, Relevance: round4(rels[i].Score)})
	}
	// A near-duplicate of a chosen source from another document may hold a
	// different (newer or older) version of the answer: bring in the
	// best-ranked candidate that conflicts with a source, so the conflict
	// is seen and the newer version preferred.
	for i, h := range hits {
		if seen[docKey(h.Chunk)] {
			continue
		}
		for _, s := range srcs {
			if ok, _, _ := conflicts(s.Hit.Chunk, h.Chunk, sc); ok {
				seen[docKey(h.Chunk)] = true
				srcs = append(srcs, Source{N: len(srcs) + 1, Hit: h, Relevance: round4(rels[i].Score)})
				return srcs
			}
		}
	}
	return srcs
}

// minSourceShare is the smallest relevance, relative to the best
// candidate's, that a source may have.
const minSourceShare = 0.5

func docKey(c docent.Chunk) string {
	if c.DocID != "" {
		return c.DocID
	}
	return c.ID
}

var markerRE = regexp.MustCompile(`\[(\d+)\]`)

// renumber rewrites [n] markers that name a source so that sources are
// numbered in order of first use, drops markers that name none, and
// returns the citations in their new order.
func renumber(text string, srcs []Source) (string, []docent.Citation) {
	byN := make(map[int]Source, len(srcs))
	for _, s := range srcs {
		byN[s.N] = s
	}
	newN := map[int]int{}
	var cites []docent.Citation
	out := markerRE.ReplaceAllStringFunc(text, func(m string) string {
		n, err := strconv.Atoi(m[1 : len(m)-1])
		if err != nil {
			return ""
		}
		s, ok := byN[n]
		if !ok {
			return ""
		}
		k, ok := newN[n]
		if !ok {
			k = len(cites) + 1
			newN[n] = k
			cites = append(cites, citation(k, s.Hit.Chunk))
		}
		return "[" + strconv.Itoa(k) + "]"
	})
	return cleanSpaces(out), cites
}

// cleanSpaces collapses runs of spaces inside lines and trims the text,
// keeping line breaks.
func cleanSpaces(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		l = strings.Join(strings.Fields(l), " ")
		for _, p := range []string{".", ",", ";", ":", "!", "?"} {
			l = strings.ReplaceAll(l, " "+p, p)
		}
		lines[i] = l
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

func citation(n int, c docent.Chunk) docent.Citation {
	return docent.Citation{
		N: n, DocID: c.DocID, ChunkID: c.ID, Title: c.Title,
		Section: strings.Join(c.Section, " › "), URL: c.URL, UpdatedAt: c.UpdatedAt,
	}
}

func round4(f float64) float64 {
	return float64(int64(f*10000+0.5)) / 10000
}

// stages times pipeline stages with an injectable clock.
type stages struct {
	now   func() time.Time
	t0    time.Time
	list  []docent.Stage
	names map[string]bool
}

func (s *stages) start() { s.t0 = s.now() }

func (s *stages) stop(name string) {
	s.add(name, s.now().Sub(s.t0))
}

func (s *stages) skip(name string) { s.add(name, 0) }

func (s *stages) add(name string, d time.Duration) {
	if s.names == nil {
		s.names = map[string]bool{}
	}
	if s.names[name] {
		return
	}
	s.names[name] = true
	s.list = append(s.list, docent.Stage{Name: name, Duration: d})
}

// all returns the recorded stages plus zero-duration entries for the
// stages that did not run, in pipeline order.
func (s *stages) all() []docent.Stage {
	for _, n := range []string{"embed", "retrieve", "threshold", "generate"} {
		s.skip(n)
	}
	return s.list
}
