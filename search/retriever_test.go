package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/docent-hq/docent"
)

// tinyIndex is an in-memory Index with only the methods the Retriever
// calls: keyword score is the number of query words a chunk holds,
// vector score the dot product. It records every call.
type tinyIndex struct {
	Index  // nil: the Retriever must call nothing else
	chunks []docent.Chunk
	mu     sync.Mutex
	calls  []string
	kq     []KeywordQuery
	vq     []VectorQuery
	err    error
}

func (ix *tinyIndex) record(call string) {
	ix.mu.Lock()
	ix.calls = append(ix.calls, call)
	ix.mu.Unlock()
}

func (ix *tinyIndex) KeywordSearch(_ context.Context, q KeywordQuery) ([]docent.Hit, error) {
	ix.record("keyword")
	ix.mu.Lock()
	ix.kq = append(ix.kq, q)
	ix.mu.Unlock()
	if ix.err != nil {
		return nil, ix.err
	}
	var hits []docent.Hit
	for _, c := range ix.chunks {
		h := docent.Hit{Chunk: docent.Chunk{ID: c.ID, DocID: c.DocID}}
		for _, w := range strings.Fields(q.Text) {
			if slices.Contains(strings.Fields(c.Text), w) {
				h.KeywordScore++
			}
		}
		if h.KeywordScore > 0 {
			h.Score = h.KeywordScore
			hits = append(hits, h)
		}
	}
	SortHits(hits)
	return cut(hits, q.K), nil
}

func (ix *tinyIndex) VectorSearch(_ context.Context, q VectorQuery) ([]docent.Hit, error) {
	ix.record("vector")
	ix.mu.Lock()
	ix.vq = append(ix.vq, q)
	ix.mu.Unlock()
	if ix.err != nil {
		return nil, ix.err
	}
	var hits []docent.Hit
	for _, c := range ix.chunks {
		h := docent.Hit{Chunk: docent.Chunk{ID: c.ID, DocID: c.DocID}}
		for i := range q.Vector {
			h.VectorScore += float64(q.Vector[i] * c.Vector[i])
		}
		h.Score = h.VectorScore
		hits = append(hits, h)
	}
	SortHits(hits)
	return cut(hits, q.K), nil
}

func (ix *tinyIndex) Chunks(_ context.Context, ids []string) ([]docent.Chunk, error) {
	ix.record("chunks")
	var out []docent.Chunk
	for _, id := range ids {
		for _, c := range ix.chunks {
			if c.ID == id {
				c.Vector = nil
				out = append(out, c)
			}
		}
	}
	return out, nil
}

func (ix *tinyIndex) Vectors(_ context.Context, ids []string) (map[string][]float32, error) {
	ix.record("vectors")
	out := map[string][]float32{}
	for _, c := range ix.chunks {
		if slices.Contains(ids, c.ID) {
			out[c.ID] = c.Vector
		}
	}
	return out, nil
}

// tinyEmbedder embeds queries from a table and counts its calls; it
// refuses to embed documents (the Retriever must read stored vectors).
type tinyEmbedder struct {
	vecs    map[string][]float32
	queries int
	docs    int
}

func (e *tinyEmbedder) Name() string { return "tiny" }
func (e *tinyEmbedder) Dim() int     { return 3 }
func (e *tinyEmbedder) EmbedQuery(_ context.Context, text string) ([]float32, error) {
	e.queries++
	v, ok := e.vecs[text]
	if !ok {
		return nil, errors.New("tinyEmbedder: unknown text " + text)
	}
	return v, nil
}
func (e *tinyEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	e.docs++
	return nil, errors.New("tinyEmbedder: documents are not embedded at query time")
}

func unit(v ...float64) []float32 {
	n := 0.0
	for _, x := range v {
		n += x * x
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x / math.Sqrt(n))
	}
	return out
}

// tinyCorpus: "a" matches the query word; "b" shares no word with the
// query and is orthogonal to its vector, but close to "a"; "c" is a
// distractor that is a little similar to the query and far from "a".
func tinyCorpus() (*tinyIndex, *tinyEmbedder, []float32) {
	chunks := []docent.Chunk{
		{ID: "a#0", DocID: "a", Text: "pager rotation schedule", Vector: unit(0.8, 0.6, 0)},
		{ID: "b#0", DocID: "b", Text: "weekly escalation roster", Vector: unit(0, 1, 0)},
		{ID: "c#0", DocID: "c", Text: "office plants watering", Vector: unit(0.2, 0, 0.98)},
	}
	emb := &tinyEmbedder{vecs: map[string][]float32{}}
	q := unit(1, 0, 0)
	emb.vecs["pager"] = q
	return &tinyIndex{chunks: chunks}, emb, q
}

func mustRetriever(t *testing.T, ix Index, emb Embedder, opts RetrieverOptions) *Retriever {
	t.Helper()
	r, err := NewRetriever(ix, emb, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func hitIDs(hits []docent.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Chunk.ID)
	}
	return out
}

func TestRetrieverFeedbackPullsInRelatedDoc(t *testing.T) {
	tests := []struct {
		name string
		opts RetrieverOptions
		want []string
	}{
		{"no feedback: the distractor beats the related doc", RetrieverOptions{FeedbackDocs: -1}, []string{"a#0", "c#0", "b#0"}},
		{"feedback from the top hit lifts the related doc", RetrieverOptions{FeedbackDocs: 1}, []string{"a#0", "b#0", "c#0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix, emb, q := tinyCorpus()
			r := mustRetriever(t, ix, emb, tt.opts)
			res, err := r.Retrieve(context.Background(), Request{Text: "pager", Vector: q, K: 3})
			if err != nil {
				t.Fatal(err)
			}
			hits := res.Hits
			if got := hitIDs(hits); !slices.Equal(got, tt.want) {
				t.Fatalf("ranking %v, want %v", got, tt.want)
			}
			// Scores keep their meaning: BM25 for the keyword hit, the
			// cosine with the original query for vector hits.
			if hits[0].KeywordScore != 1 || hits[0].KeywordRank != 1 {
				t.Errorf("top hit keyword %v rank %d, want 1 and 1", hits[0].KeywordScore, hits[0].KeywordRank)
			}
			if math.Abs(hits[0].VectorScore-0.8) > 1e-6 {
				t.Errorf("top hit vector score %v, want 0.8 (cosine with the query)", hits[0].VectorScore)
			}
			for i := 1; i < len(hits); i++ {
				if hits[i].Score > hits[i-1].Score {
					t.Errorf("scores not descending at %d: %v", i, hits)
				}
			}
		})
	}
}

func TestRetrieverDeterministic(t *testing.T) {
	ix, emb, q := tinyCorpus()
	r := mustRetriever(t, ix, emb, RetrieverOptions{})
	first, err := r.Retrieve(context.Background(), Request{Text: "pager", Vector: q, K: 3})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		again, err := r.Retrieve(context.Background(), Request{Text: "pager", Vector: q, K: 3})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(first.Hits, again.Hits, func(a, b docent.Hit) bool { return a.Chunk.ID == b.Chunk.ID && a.Score == b.Score }) {
			t.Fatalf("run differs: %v vs %v", hitIDs(first.Hits), hitIDs(again.Hits))
		}
	}
}

func TestRetrieverModesAndInputs(t *testing.T) {
	ctx := context.Background()
	t.Run("keyword mode embeds nothing and loads chunks", func(t *testing.T) {
		ix, emb, _ := tinyCorpus()
		res, err := mustRetriever(t, ix, emb, RetrieverOptions{}).Retrieve(ctx, Request{Text: "pager", K: 5, Mode: ModeKeyword})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ix.calls, []string{"keyword", "chunks"}) || !slices.Equal(hitIDs(res.Hits), []string{"a#0"}) || emb.queries != 0 || res.Vector != nil {
			t.Fatalf("calls %v, hits %v, embed calls %d, vector %v", ix.calls, hitIDs(res.Hits), emb.queries, res.Vector)
		}
		if h := res.Hits[0]; h.Chunk.Text != "pager rotation schedule" || h.Score != h.KeywordScore || h.KeywordRank != 0 && h.KeywordRank != 1 {
			t.Errorf("hit %+v: want the loaded chunk scored by BM25", h)
		}
	})
	t.Run("vector mode", func(t *testing.T) {
		ix, emb, q := tinyCorpus()
		res, err := mustRetriever(t, ix, emb, RetrieverOptions{}).Retrieve(ctx, Request{Text: "pager", K: 1, Mode: ModeVector})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(hitIDs(res.Hits), []string{"a#0"}) || emb.queries != 1 || !slices.Equal(res.Vector, q) || res.Hits[0].Score != res.Hits[0].VectorScore {
			t.Fatalf("hits %+v, embed calls %d, vector %v", res.Hits, emb.queries, res.Vector)
		}
	})
	t.Run("query embedded once, feedback from stored vectors", func(t *testing.T) {
		ix, emb, q := tinyCorpus()
		res, err := mustRetriever(t, ix, emb, RetrieverOptions{}).Retrieve(ctx, Request{Text: "pager", K: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != 2 || res.Hits[0].Chunk.ID != "a#0" || math.Abs(res.Hits[0].VectorScore-0.8) > 1e-6 {
			t.Fatalf("hits %v", res.Hits)
		}
		if emb.queries != 1 || emb.docs != 0 {
			t.Errorf("embedder: %d query calls, %d document calls; want 1 and 0", emb.queries, emb.docs)
		}
		if !slices.Contains(ix.calls, "vectors") {
			t.Errorf("index calls %v: feedback did not read stored vectors", ix.calls)
		}
		if !slices.Equal(res.Vector, q) {
			t.Errorf("result vector %v, want the query's %v", res.Vector, q)
		}
	})
	t.Run("a given vector is not embedded again", func(t *testing.T) {
		ix, emb, q := tinyCorpus()
		if _, err := mustRetriever(t, ix, emb, RetrieverOptions{}).Retrieve(ctx, Request{Text: "pager", Vector: q}); err != nil {
			t.Fatal(err)
		}
		if emb.queries != 0 {
			t.Errorf("embedded %d times, want 0", emb.queries)
		}
	})
	t.Run("no vector and no embedder fails", func(t *testing.T) {
		ix, _, _ := tinyCorpus()
		_, err := mustRetriever(t, ix, nil, RetrieverOptions{}).Retrieve(ctx, Request{Text: "pager"})
		if !errors.Is(err, ErrNoVector) || !strings.HasPrefix(err.Error(), "search: retrieve:") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("index error is wrapped", func(t *testing.T) {
		ix, emb, q := tinyCorpus()
		boom := errors.New("boom")
		ix.err = boom
		_, err := mustRetriever(t, ix, emb, RetrieverOptions{}).Retrieve(ctx, Request{Text: "pager", Vector: q})
		if !errors.Is(err, boom) {
			t.Fatalf("err %v, want boom", err)
		}
	})
	t.Run("bad fusion", func(t *testing.T) {
		ix, emb, _ := tinyCorpus()
		if _, err := NewRetriever(ix, emb, RetrieverOptions{Fusion: Fusion{Method: "borda", KeywordWeight: 1}}); err == nil {
			t.Fatal("NewRetriever accepted an unknown fusion method")
		}
	})
	t.Run("filter and depth reach every retriever", func(t *testing.T) {
		ix, emb, q := tinyCorpus()
		f := docent.Filter{Sources: []string{"handbook"}}
		if _, err := mustRetriever(t, ix, emb, RetrieverOptions{Candidates: 7}).Retrieve(ctx, Request{Text: "pager", Vector: q, Filter: f, K: 2}); err != nil {
			t.Fatal(err)
		}
		if len(ix.kq) != 1 || len(ix.vq) != 2 {
			t.Fatalf("%d keyword and %d vector queries, want 1 and 2 (first pass, feedback)", len(ix.kq), len(ix.vq))
		}
		for _, kq := range ix.kq {
			if kq.K != 7 || !slices.Equal(kq.Filter.Sources, f.Sources) {
				t.Errorf("keyword query K %d filter %v", kq.K, kq.Filter)
			}
		}
		for _, vq := range ix.vq {
			if vq.K != 7 || !slices.Equal(vq.Filter.Sources, f.Sources) {
				t.Errorf("vector query K %d filter %v", vq.K, vq.Filter)
			}
		}
	})
}

func TestRocchio(t *testing.T) {
	got, err := rocchio([]float32{1, 0}, [][]float32{{0, 1}, {0, 1}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(float64(got[0])-math.Sqrt(0.5)) > 1e-6 || math.Abs(float64(got[1])-math.Sqrt(0.5)) > 1e-6 {
		t.Fatalf("rocchio %v, want both sqrt(0.5)", got)
	}
	if _, err := rocchio([]float32{1, 0}, [][]float32{{1}}, 1); err == nil {
		t.Fatal("want a length error")
	}
}

func TestWithTail(t *testing.T) {
	h := func(id string, score float64) docent.Hit {
		return docent.Hit{Chunk: docent.Chunk{ID: id}, Score: score, KeywordRank: len(id)}
	}
	head := []docent.Hit{h("a", 1), h("b", 0.8), h("c", 0.5), h("d", 0.4), h("e", 0.1)}
	tail := map[string]float64{"b": 0.05, "e": 0.04, "a": 0.03, "d": 0.02, "c": 0.01}
	got := withTail(head, tail, 2)
	var ids []string
	for i, g := range got {
		ids = append(ids, g.Chunk.ID)
		if i > 0 && g.Score >= got[i-1].Score {
			t.Errorf("scores not decreasing at %d: %v", i, got)
		}
	}
	if strings.Join(ids, "") != "abedc" {
		t.Errorf("order = %s, want head a,b then tail order e,d,c", strings.Join(ids, ""))
	}
	if got[2].Score >= 0.8 || got[2].KeywordRank != 1 {
		t.Errorf("tail hit = %+v, want a score below the head's last and head's ranks", got[2])
	}
	if got := withTail(head[:2], tail, 2); len(got) != 2 {
		t.Errorf("short head changed: %v", got)
	}
}

// TestTailIsRRFOrder: past the head, withTail orders the hits as an
// equal-weight RRF fusion of the same lists does (fuseLists), on random
// lists with overlaps and ties.
func TestTailIsRRFOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 200 {
		var lists []fusedList
		for l := range 3 {
			var hits []docent.Hit
			seen := map[string]bool{}
			for range rng.IntN(40) + 1 {
				id := fmt.Sprintf("c%d", rng.IntN(60))
				if seen[id] {
					continue
				}
				seen[id] = true
				hits = append(hits, docent.Hit{Chunk: docent.Chunk{ID: id}, KeywordScore: rng.Float64(), VectorScore: rng.Float64()})
			}
			lists = append(lists, fusedList{hits: hits, weight: 1 + float64(l), keyword: l == 0})
		}
		head := fuseLists(Fusion{}, lists)
		eq := slices.Clone(lists)
		for i := range eq {
			eq[i].weight = 1
		}
		rrf := fuseLists(Fusion{Method: FusionRRF, K: DefaultRRFK}, eq)
		n := min(5, len(head))
		placed := map[string]bool{}
		var want []string
		for _, h := range head[:n] {
			placed[h.Chunk.ID] = true
			want = append(want, h.Chunk.ID)
		}
		for _, h := range rrf {
			if !placed[h.Chunk.ID] {
				want = append(want, h.Chunk.ID)
			}
		}
		var got []string
		for _, h := range withTail(head, rrfScores(lists, DefaultRRFK), n) {
			got = append(got, h.Chunk.ID)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: withTail order %v, RRF fusion's %v", trial, got, want)
		}
	}
}
