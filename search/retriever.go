package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/docent-hq/docent"
)

// Feedback defaults, chosen on the BEIR SciFact train split through the
// real local index (a research harness since retired; see docs/retrieval.md
// and research/doc.go). Against plain hybrid
// (nDCG@10 / R@100): train 0.7055 / 0.9396 -> 0.7069 / 0.9452,
// test 0.6868 / 0.9337 -> 0.6907 / 0.9453.
const (
	// DefaultFeedbackDocs is how many top fused hits feed the second
	// vector pass (3, 5 and 10 measured; 5 best on train).
	DefaultFeedbackDocs = 5
	// DefaultFeedbackWeight is β in q' = q + β·mean(feedback vectors)
	// (0.5, 1 and 2 measured).
	DefaultFeedbackWeight = 2.0
	// DefaultFirstPassShare is the first-pass vector list's weight in the
	// final fusion, as a share of the fusion's vector weight; the feedback
	// list gets the full vector weight (0 and 0.5 measured: 0.5 lifts
	// recall@100 on both splits).
	DefaultFirstPassShare = 0.5
	// DefaultTailFrom is where the RRF-ordered tail starts. On SciFact
	// train (512-token chunks, vector weight 0.3) it lifts recall@100
	// 0.9510 -> 0.9532 (from 10: 0.9526) with nDCG@10 unchanged; at vector
	// weight 0.4 it is neutral on train (0.9516 / 0.9514) and lifts test
	// 0.9450 -> 0.9550.
	DefaultTailFrom = 20
)

// Retriever is the retrieval pipeline every caller uses, over any Index:
// it embeds the query (once per request), runs the keyword and vector
// retrievers, fuses their rankings, applies vector pseudo-relevance
// feedback from stored vectors, and loads the chunks of the final hits.
//
// In ModeDefault it runs BM25 and vector search (Candidates deep each),
// fuses them with Fusion, reads the stored vectors of the top FeedbackDocs
// fused hits, and searches vectors again with the Rocchio query
// q' = normalize(q + FeedbackWeight·mean(hit vectors)). The final ranking
// fuses three lists: BM25 with the keyword weight, the feedback vector list
// with the vector weight, and the first vector list with
// FirstPassShare·vector weight. The feedback pass pulls in documents that
// share no term with the query but sit near the documents that match it.
// ModeHybrid stops after the first fusion; ModeKeyword and ModeVector
// return one retriever's ranking.
//
// Every hit reports KeywordRank/KeywordScore (BM25) and VectorRank/
// VectorScore (cosine with the original query vector), 0 where that
// retriever did not return it, and Score, the fused score that orders
// the hits (the raw score in single-retriever modes).
type Retriever struct {
	idx  Index
	emb  Embedder
	opts RetrieverOptions
}

// RetrieverOptions tune a Retriever.
type RetrieverOptions struct {
	// Fusion fuses the lists; DefaultFusion when its weights are both zero.
	Fusion Fusion
	// Candidates is how many hits each retriever contributes (at least
	// the query's K); zero means 100.
	Candidates int
	// FeedbackDocs is how many top fused hits feed the second vector pass;
	// zero means DefaultFeedbackDocs, negative turns feedback off.
	FeedbackDocs int
	// FeedbackWeight is β; zero means DefaultFeedbackWeight.
	FeedbackWeight float64
	// FirstPassShare weights the first vector list in the final fusion
	// relative to Fusion.VectorWeight; zero means DefaultFirstPassShare,
	// negative drops the list.
	FirstPassShare float64
	// TailFrom keeps the score-fused order for the first TailFrom hits and
	// orders the rest by equal-weight RRF over the same lists, which
	// favours hits that several retrievers found (recall@100); zero means
	// DefaultTailFrom, negative turns it off. RRF fusion has no tail.
	TailFrom int
	// MaxQueryTerms caps the distinct keyword terms of a long query: the
	// keyword retriever gets the words of the most salient ones (highest
	// IDF, on an index that keeps term statistics); zero means
	// DefaultMaxQueryTerms, negative keeps every term.
	MaxQueryTerms int
	// SectionDepth is how many fused hits the last stage reads (copies
	// left out, the chunks of a page put in order); zero means
	// DefaultSectionDepth, negative skips the stage.
	SectionDepth int
	// SectionWeight weighs what a chunk's own section says against its
	// fused score when the chunks of one page are ordered; zero means
	// DefaultSectionWeight, negative keeps the fused order.
	SectionWeight float64
	// LongQueryTerms is the number of distinct keyword terms from which a
	// query is long (a pasted paragraph, a log with the question in it):
	// its one vector blurs what it pastes, so the feedback pass, which
	// would follow the blur, is skipped, and the vector weight of a query
	// of n terms is scaled by ((2L − n)/L)² for L = LongQueryTerms < n <
	// 2L, and is zero from 2L terms on: such a query is served by its
	// keywords. Zero means DefaultLongQueryTerms, negative treats no
	// query as long.
	LongQueryTerms int
	// NearCopyJaccard is the share of body terms from which two sections
	// are near-identical: the last stage keeps one of them among the
	// first NearCopyTop hits and moves the other after those; zero means
	// DefaultNearCopyJaccard, negative keeps them both.
	NearCopyJaccard float64
	// NearCopyTop is how many first places hold one of each group of
	// near-identical sections; zero means DefaultNearCopyTop.
	NearCopyTop int
}

// DefaultLongQueryTerms: see RetrieverOptions.LongQueryTerms.
const DefaultLongQueryTerms = 16

func (o RetrieverOptions) withDefaults() RetrieverOptions {
	if o.Fusion.KeywordWeight == 0 && o.Fusion.VectorWeight == 0 {
		o.Fusion = DefaultFusion()
	}
	if o.Candidates <= 0 {
		o.Candidates = 100
	}
	if o.FeedbackDocs == 0 {
		o.FeedbackDocs = DefaultFeedbackDocs
	}
	if o.FeedbackWeight == 0 {
		o.FeedbackWeight = DefaultFeedbackWeight
	}
	if o.FirstPassShare == 0 {
		o.FirstPassShare = DefaultFirstPassShare
	}
	if o.TailFrom == 0 {
		o.TailFrom = DefaultTailFrom
	}
	if o.MaxQueryTerms == 0 {
		o.MaxQueryTerms = DefaultMaxQueryTerms
	}
	if o.SectionDepth == 0 {
		o.SectionDepth = DefaultSectionDepth
	}
	if o.SectionWeight == 0 {
		o.SectionWeight = DefaultSectionWeight
	}
	if o.LongQueryTerms == 0 {
		o.LongQueryTerms = DefaultLongQueryTerms
	}
	if o.NearCopyJaccard == 0 {
		o.NearCopyJaccard = DefaultNearCopyJaccard
	}
	if o.NearCopyTop <= 0 {
		o.NearCopyTop = DefaultNearCopyTop
	}
	return o
}

// fusionFor returns the fusion for a query of text, and whether the
// feedback pass runs: a long query weighs its vector less and skips it.
func (r *Retriever) fusionFor(text string) (Fusion, bool) {
	f := r.opts.Fusion
	if r.opts.LongQueryTerms < 0 {
		return f, true
	}
	seen := map[string]bool{}
	AnalyzeKeywordQuery(text, func(t string) { seen[t] = true })
	n, long := float64(len(seen)), float64(r.opts.LongQueryTerms)
	if n <= long {
		return f, true
	}
	// Full weight at LongQueryTerms terms, none from twice as many.
	share := max(0, (2*long-n)/long)
	f.VectorWeight *= share * share
	return f, false
}

// NewRetriever returns the pipeline over idx. emb embeds queries that come
// without a vector; nil allows only ModeKeyword and requests that carry
// their vector. It returns an error for an invalid Fusion.
func NewRetriever(idx Index, emb Embedder, opts RetrieverOptions) (*Retriever, error) {
	opts = opts.withDefaults()
	if err := opts.Fusion.Validate(); err != nil {
		return nil, err
	}
	return &Retriever{idx: idx, emb: emb, opts: opts}, nil
}

// Request is one retrieval.
type Request struct {
	// Text is the query text (keyword retriever, and what is embedded).
	Text string
	// Vector is the query embedding when the caller already has it; the
	// Retriever then does not embed Text.
	Vector []float32
	// Filter restricts every retriever before its ranking is cut.
	Filter docent.Filter
	// K is how many hits to return; zero or less means 10.
	K int
	// Mode picks the retrievers; empty means ModeDefault.
	Mode Mode
}

// Result is what a retrieval found.
type Result struct {
	// Hits are at most K hits, best first, with their chunks loaded.
	Hits []docent.Hit
	// Vector is the query vector the vector retriever used; nil in
	// ModeKeyword.
	Vector []float32
}

// Retrieve runs req. Errors are prefixed "search: retrieve:"; a mode that
// needs a vector when the request has none and the Retriever no embedder
// is ErrNoVector.
func (r *Retriever) Retrieve(ctx context.Context, req Request) (Result, error) {
	mode, err := ParseMode(string(req.Mode))
	if err != nil {
		return Result{}, err
	}
	k := req.K
	if k <= 0 {
		k = 10
	}
	// The query as the retrievers see it: log noise out, and for the
	// keyword retriever the salient terms of a long query.
	req.Text = CleanQuery(req.Text)
	keywords, err := r.keywordText(ctx, req.Text)
	if err != nil {
		return Result{}, fmt.Errorf("search: retrieve: %w", err)
	}
	var res Result
	if mode != ModeKeyword {
		if res.Vector, err = r.queryVector(ctx, req); err != nil {
			return Result{}, err
		}
	}
	var hits []docent.Hit
	switch mode {
	case ModeKeyword:
		hits, err = r.idx.KeywordSearch(ctx, KeywordQuery{Text: keywords, Filter: req.Filter, K: k})
		setScores(hits, func(h docent.Hit) float64 { return h.KeywordScore })
	case ModeVector:
		hits, err = r.idx.VectorSearch(ctx, VectorQuery{Vector: res.Vector, Filter: req.Filter, K: k})
		setScores(hits, func(h docent.Hit) float64 { return h.VectorScore })
	default:
		hits, err = r.hybrid(ctx, req, keywords, res.Vector, k, mode == ModeDefault)
		if err == nil && r.opts.SectionDepth > 0 {
			hits, err = r.refine(ctx, req.Text, req.Filter, hits)
		}
		hits = cut(hits, k)
	}
	if err != nil {
		return Result{}, fmt.Errorf("search: retrieve: %w", err)
	}
	if err := r.load(ctx, hits); err != nil {
		return Result{}, fmt.Errorf("search: retrieve: %w", err)
	}
	for i := range hits {
		hits[i].Injection = hits[i].Chunk.Injection // derived at Upsert
	}
	res.Hits = hits
	return res, nil
}

// keywordText is the text the keyword retriever gets: text itself, or the
// words of its MaxQueryTerms most salient terms when it has more and the
// index keeps term statistics; then, with statistics, any two neighbouring
// words joined that the index holds as one term (see joinedWords).
func (r *Retriever) keywordText(ctx context.Context, text string) (string, error) {
	ts, ok := r.idx.(TermStats)
	if !ok || r.opts.MaxQueryTerms < 0 {
		return text, nil
	}
	var ferr error
	out := salientWords(text, r.opts.MaxQueryTerms, func(terms []string) map[string]float64 {
		w, err := idfWeights(ctx, ts, terms)
		ferr = err
		return w
	})
	if ferr != nil {
		return out, ferr
	}
	// Words written apart that the documents write as one identifier.
	joined := joinedWords(out, func(terms []string) map[string]bool {
		df, _, err := ts.DocFreq(ctx, terms)
		if err != nil {
			ferr = err
		}
		held := make(map[string]bool, len(df))
		for t, f := range df {
			held[t] = f > 0
		}
		return held
	})
	if len(joined) > 0 {
		out += " " + strings.Join(joined, " ")
	}
	return out, ferr
}

// queryVector returns the request's vector, embedding its text if needed.
func (r *Retriever) queryVector(ctx context.Context, req Request) ([]float32, error) {
	if len(req.Vector) > 0 {
		return req.Vector, nil
	}
	if r.emb == nil {
		return nil, fmt.Errorf("search: retrieve: %w (no embedder)", ErrNoVector)
	}
	v, err := r.emb.EmbedQuery(ctx, req.Text)
	if err != nil {
		return nil, fmt.Errorf("search: retrieve: embed query: %w", err)
	}
	if len(v) == 0 {
		return nil, fmt.Errorf("search: retrieve: embed query: %w", ErrNoVector)
	}
	return v, nil
}

// setScores sets each hit's Score from one retriever's raw score.
func setScores(hits []docent.Hit, score func(docent.Hit) float64) {
	for i := range hits {
		hits[i].Score = score(hits[i])
	}
}

// both runs the two first-pass retrievers, in one round trip when the
// backend can.
func (r *Retriever) both(ctx context.Context, kq KeywordQuery, vq VectorQuery) (kw, vs []docent.Hit, err error) {
	if b, ok := r.idx.(BothSearcher); ok {
		return b.SearchBoth(ctx, kq, vq)
	}
	var (
		kwErr error
		wg    sync.WaitGroup
	)
	wg.Go(func() { kw, kwErr = r.idx.KeywordSearch(ctx, kq) })
	vs, err = r.idx.VectorSearch(ctx, vq)
	wg.Wait()
	return kw, vs, errors.Join(kwErr, err)
}

// hybrid fuses the keyword and vector rankings, with the feedback pass
// when feedback is set.
func (r *Retriever) hybrid(ctx context.Context, req Request, keywords string, vec []float32, k int, feedback bool) ([]docent.Hit, error) {
	depth := max(r.opts.Candidates, k)
	kw, vs, err := r.both(ctx,
		KeywordQuery{Text: keywords, Filter: req.Filter, K: depth},
		VectorQuery{Vector: vec, Filter: req.Filter, K: depth})
	if err != nil {
		return nil, err
	}
	f, short := r.fusionFor(req.Text)
	first := f.Fuse(kw, vs)
	if !feedback || !short || r.opts.FeedbackDocs < 0 || len(first) == 0 {
		return first, nil
	}

	n := min(r.opts.FeedbackDocs, len(first))
	ids := make([]string, n)
	for i := range n {
		ids[i] = first[i].Chunk.ID
	}
	stored, err := r.idx.Vectors(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("feedback vectors: %w", err)
	}
	dvecs := make([][]float32, 0, n)
	for _, id := range ids {
		if v, ok := stored[id]; ok {
			dvecs = append(dvecs, v)
		}
	}
	if len(dvecs) == 0 {
		return first, nil
	}
	q2, err := rocchio(vec, dvecs, r.opts.FeedbackWeight)
	if err != nil {
		return nil, err
	}
	fb, err := r.idx.VectorSearch(ctx, VectorQuery{Vector: q2, Filter: req.Filter, K: depth})
	if err != nil {
		return nil, err
	}
	lists := []fusedList{
		{hits: kw, weight: f.KeywordWeight, keyword: true},
		{hits: fb, weight: f.VectorWeight},
	}
	if r.opts.FirstPassShare > 0 {
		lists = append(lists, fusedList{hits: vs, weight: r.opts.FirstPassShare * f.VectorWeight, original: true})
	}
	fused := fuseLists(f, lists)
	if r.opts.TailFrom > 0 && f.Method != FusionRRF {
		fused = withTail(fused, rrfScores(lists, DefaultRRFK), r.opts.TailFrom)
	}
	// Hits only the feedback list found keep VectorScore 0 (the contract:
	// the cosine with the original query, which that list did not measure).
	return fused, nil
}

// load fills in the chunks of hits that came back without their text.
func (r *Retriever) load(ctx context.Context, hits []docent.Hit) error {
	var ids []string
	for _, h := range hits {
		if h.Chunk.Text == "" {
			ids = append(ids, h.Chunk.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	chunks, err := r.idx.Chunks(ctx, ids)
	if err != nil {
		return fmt.Errorf("load chunks: %w", err)
	}
	byID := make(map[string]docent.Chunk, len(chunks))
	for _, c := range chunks {
		byID[c.ID] = c
	}
	for i := range hits {
		if c, ok := byID[hits[i].Chunk.ID]; ok && hits[i].Chunk.Text == "" {
			hits[i].Chunk = c
		}
	}
	return nil
}

// withTail keeps head's first n hits and continues with the rest in the
// order of their tail scores (rrfScores), highest first, then by chunk
// ID: the order an equal-weight RRF fusion of the same lists gives them.
// Their scores are rescaled below the head's last score, so Score still
// orders the result; ranks and retriever scores are head's.
func withTail(head []docent.Hit, tail map[string]float64, n int) []docent.Hit {
	if len(head) <= n {
		return head
	}
	rest := make([]docent.Hit, len(head)-n)
	copy(rest, head[n:])
	slices.SortFunc(rest, func(a, b docent.Hit) int {
		if c := cmp.Compare(tail[b.Chunk.ID], tail[a.Chunk.ID]); c != 0 {
			return c
		}
		return cmp.Compare(a.Chunk.ID, b.Chunk.ID)
	})
	floor, top := head[n-1].Score, tail[rest[0].Chunk.ID]
	out := append(make([]docent.Hit, 0, len(head)), head[:n]...)
	for _, h := range rest {
		if top > 0 {
			h.Score = floor * 0.999 * tail[h.Chunk.ID] / top
		}
		out = append(out, h)
	}
	return out
}

// rrfScores returns each hit's equal-weight Reciprocal Rank Fusion score
// over lists (each list weighs 1; k is RRF's constant), summed in list
// order as fuseLists sums it.
func rrfScores(lists []fusedList, k float64) map[string]float64 {
	n := 0
	for _, l := range lists {
		n += len(l.hits)
	}
	out := make(map[string]float64, n)
	for _, l := range lists {
		for i, h := range l.hits {
			out[h.Chunk.ID] += 1 / (k + float64(i+1))
		}
	}
	return out
}

// rocchio returns normalize(q + beta·mean(docs)).
func rocchio(q []float32, docs [][]float32, beta float64) ([]float32, error) {
	sum := make([]float64, len(q))
	for i, x := range q {
		sum[i] = float64(x)
	}
	for _, d := range docs {
		if len(d) != len(q) {
			return nil, fmt.Errorf("feedback vector has length %d, query %d", len(d), len(q))
		}
		for i, x := range d {
			sum[i] += beta / float64(len(docs)) * float64(x)
		}
	}
	norm := 0.0
	for _, x := range sum {
		norm += x * x
	}
	out := make([]float32, len(q))
	if norm == 0 {
		return out, nil
	}
	s := 1 / math.Sqrt(norm)
	for i, x := range sum {
		out[i] = float32(x * s)
	}
	return out, nil
}

func cut(h []docent.Hit, k int) []docent.Hit {
	if len(h) > k {
		return h[:k]
	}
	return h
}
