package search

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/docent-hq/docent"
)

// tinyIndex is an in-memory Searcher: keyword score is the number of query
// words a chunk holds, vector score the dot product.
type tinyIndex struct {
	chunks  []docent.Chunk
	mu      sync.Mutex
	queries []Query
	err     error
}

func (ix *tinyIndex) Search(_ context.Context, q Query) ([]docent.Hit, error) {
	ix.mu.Lock()
	ix.queries = append(ix.queries, q)
	ix.mu.Unlock()
	if ix.err != nil {
		return nil, ix.err
	}
	var hits []docent.Hit
	for _, c := range ix.chunks {
		h := docent.Hit{Chunk: c}
		switch q.Mode {
		case ModeKeyword:
			for _, w := range strings.Fields(q.Text) {
				if slices.Contains(strings.Fields(c.Text), w) {
					h.KeywordScore++
				}
			}
			if h.KeywordScore == 0 {
				continue
			}
			h.Score = h.KeywordScore
		case ModeVector:
			for i := range q.Vector {
				h.VectorScore += float64(q.Vector[i] * c.Vector[i])
			}
			h.Score = h.VectorScore
		default:
			return nil, errors.New("tinyIndex: hybrid not supported")
		}
		hits = append(hits, h)
	}
	SortHits(hits)
	return cut(hits, q.K), nil
}

// tinyEmbedder maps each chunk text to its vector.
type tinyEmbedder struct {
	vecs  map[string][]float32
	calls int
}

func (e *tinyEmbedder) Name() string { return "tiny" }
func (e *tinyEmbedder) Dim() int     { return 3 }
func (e *tinyEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.calls++
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v, ok := e.vecs[t]
		if !ok {
			return nil, errors.New("tinyEmbedder: unknown text " + t)
		}
		out[i] = v
	}
	return out, nil
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
	for _, c := range chunks {
		emb.vecs[c.Text] = c.Vector
	}
	q := unit(1, 0, 0)
	emb.vecs["pager"] = q
	return &tinyIndex{chunks: chunks}, emb, q
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
			r := NewRetriever(ix, emb, tt.opts)
			hits, err := r.Search(context.Background(), Query{Text: "pager", Vector: q, K: 3})
			if err != nil {
				t.Fatal(err)
			}
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
	r := NewRetriever(ix, emb, RetrieverOptions{})
	first, err := r.Search(context.Background(), Query{Text: "pager", Vector: q, K: 3})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		again, err := r.Search(context.Background(), Query{Text: "pager", Vector: q, K: 3})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(first, again, func(a, b docent.Hit) bool { return a.Chunk.ID == b.Chunk.ID && a.Score == b.Score }) {
			t.Fatalf("run differs: %v vs %v", hitIDs(first), hitIDs(again))
		}
	}
}

func TestRetrieverModesAndInputs(t *testing.T) {
	t.Run("keyword mode goes straight to the index", func(t *testing.T) {
		ix, emb, _ := tinyCorpus()
		r := NewRetriever(ix, emb, RetrieverOptions{})
		hits, err := r.Search(context.Background(), Query{Text: "pager", K: 5, Mode: ModeKeyword})
		if err != nil {
			t.Fatal(err)
		}
		if len(ix.queries) != 1 || !slices.Equal(hitIDs(hits), []string{"a#0"}) || emb.calls != 0 {
			t.Fatalf("queries %d, hits %v, embed calls %d", len(ix.queries), hitIDs(hits), emb.calls)
		}
	})
	t.Run("query without a vector is embedded", func(t *testing.T) {
		ix, emb, _ := tinyCorpus()
		r := NewRetriever(ix, emb, RetrieverOptions{})
		hits, err := r.Search(context.Background(), Query{Text: "pager", K: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 2 || hits[0].Chunk.ID != "a#0" || math.Abs(hits[0].VectorScore-0.8) > 1e-6 {
			t.Fatalf("hits %v", hits)
		}
	})
	t.Run("no vector and no embedder fails", func(t *testing.T) {
		ix, _, _ := tinyCorpus()
		_, err := NewRetriever(ix, nil, RetrieverOptions{}).Search(context.Background(), Query{Text: "pager"})
		if err == nil || !strings.HasPrefix(err.Error(), "search: retrieve:") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("index error is wrapped", func(t *testing.T) {
		ix, emb, q := tinyCorpus()
		boom := errors.New("boom")
		ix.err = boom
		_, err := NewRetriever(ix, emb, RetrieverOptions{}).Search(context.Background(), Query{Text: "pager", Vector: q})
		if !errors.Is(err, boom) {
			t.Fatalf("err %v, want boom", err)
		}
	})
	t.Run("filter and depth reach every retriever", func(t *testing.T) {
		ix, emb, q := tinyCorpus()
		f := docent.Filter{Sources: []string{"handbook"}}
		if _, err := NewRetriever(ix, emb, RetrieverOptions{Candidates: 7}).Search(context.Background(), Query{Text: "pager", Vector: q, Filter: f, K: 2}); err != nil {
			t.Fatal(err)
		}
		if len(ix.queries) != 3 {
			t.Fatalf("%d index queries, want 3 (keyword, vector, feedback)", len(ix.queries))
		}
		for _, iq := range ix.queries {
			if iq.K != 7 || !slices.Equal(iq.Filter.Sources, f.Sources) {
				t.Errorf("index query K %d filter %v", iq.K, iq.Filter)
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
	tail := []docent.Hit{h("b", 0.05), h("e", 0.04), h("a", 0.03), h("d", 0.02), h("c", 0.01)}
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
