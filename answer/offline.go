package answer

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/docent-hq/docent"
)

// Identity is the offline Rewriter: the question is the query.
type Identity struct{}

var _ Rewriter = Identity{}

// Rewrite returns the question unchanged.
func (Identity) Rewrite(_ context.Context, req RewriteRequest) (Rewrite, error) {
	return Rewrite{Query: req.Question}, nil
}

// FusedOrder is the offline Reranker: it keeps the retrieval (fused) order,
// which measured better on SciFact than every offline reranker tried.
type FusedOrder struct{}

var _ Reranker = FusedOrder{}

// Rerank returns the hits as given.
func (FusedOrder) Rerank(_ context.Context, req RerankRequest) (Reranked, error) {
	return Reranked{Hits: req.Hits}, nil
}

// GateOptions tune the Relevance gate. Zero values take the defaults.
type GateOptions struct {
	// MaxSources is how many sources (one chunk per document) the
	// generator sees; default 4. A conflicting near-duplicate may add one.
	MaxSources int
	// MinScore is the relevance threshold; 0 means DefaultMinScore.
	MinScore float64
	// Weights combine the relevance components; zero means DefaultWeights.
	Weights Weights
	// IDF, when set, gives corpus IDF for a term (search.Analyze form);
	// terms it does not know are estimated from the candidates.
	IDF func(term string) (float64, bool)
}

// Relevance is the offline Gate: absolute relevance per candidate (IDF
// coverage of the question, cosine, BM25 presence; see the package doc),
// the best compared with a threshold, sources picked in retrieval order.
type Relevance struct {
	opts GateOptions
	log  *slog.Logger
}

var _ Gate = (*Relevance)(nil)

// NewRelevance returns the gate; log nil discards its debug logs.
func NewRelevance(opts GateOptions, log *slog.Logger) *Relevance {
	if opts.MaxSources <= 0 {
		opts.MaxSources = 4
	}
	if opts.MinScore == 0 {
		opts.MinScore = DefaultMinScore
	}
	if opts.Weights == (Weights{}) {
		opts.Weights = DefaultWeights
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Relevance{opts: opts, log: log}
}

// Gate measures every hit's relevance to the question (setting
// Hit.Relevance), answers when the best reaches the threshold, and picks
// the sources.
func (g *Relevance) Gate(ctx context.Context, req GateRequest) (Decision, error) {
	hits := req.Hits
	d := Decision{Threshold: g.opts.MinScore, Status: docent.StatusNotFound}
	terms := queryTerms(req.Question)
	sets := make([]map[string]bool, len(hits))
	for i, h := range hits {
		sets[i] = termSet(h.Chunk.Text)
	}
	sc := newScorer(terms, sets, g.opts.IDF, g.opts.Weights)
	d.Terms = sc.idf
	rels := make([]relevance, len(hits))
	best := -1
	for i, h := range hits {
		rels[i] = sc.score(h, sets[i])
		hits[i].Relevance = round4(rels[i].Score)
		if best < 0 || rels[i].Score > rels[best].Score {
			best = i
		}
	}
	if best < 0 {
		d.Detail = "no candidates"
		return d, nil
	}
	r := rels[best]
	d.TopScore = round4(r.Score)
	g.log.DebugContext(ctx, "relevance", slog.String("chunk", hits[best].Chunk.ID),
		slog.Float64("score", r.Score), slog.Float64("coverage", r.Coverage),
		slog.Float64("vector", r.Vector), slog.Float64("keyword", r.Keyword),
		slog.Any("terms", terms))
	if r.Score < g.opts.MinScore {
		d.Detail = fmt.Sprintf("not found: top relevance %.3f < %.3f", d.TopScore, d.Threshold)
		return d, nil
	}
	d.Status = docent.StatusAnswered
	d.Sources = g.selectSources(hits, rels, sc)
	d.Conflict, d.ConflictNote = detectConflict(d.Sources, sc)
	d.Detail = fmt.Sprintf("answer: top relevance %.3f >= %.3f, %d sources", d.TopScore, d.Threshold, len(d.Sources))
	return d, nil
}

// selectSources picks up to MaxSources hits, one per document, in fused
// (retrieval) order, skipping hits whose relevance is under half the best
// candidate's: retrieval order is the better-measured ranking, relevance
// only keeps weak matches out.
func (g *Relevance) selectSources(hits []docent.Hit, rels []relevance, sc *scorer) []Source {
	var srcs []Source
	seen := map[string]bool{}
	top := 0.0
	for _, r := range rels {
		top = max(top, r.Score)
	}
	for i, h := range hits {
		if len(srcs) == g.opts.MaxSources {
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

func round4(f float64) float64 {
	return float64(int64(f*10000+0.5)) / 10000
}
