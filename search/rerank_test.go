package search

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/docent-hq/docent"
)

// searchFunc adapts a function to Searcher.
type searchFunc func(ctx context.Context, q Query) ([]docent.Hit, error)

func (f searchFunc) Search(ctx context.Context, q Query) ([]docent.Hit, error) { return f(ctx, q) }

// fakeEmbedder maps known texts to vectors and records what it embedded.
type fakeEmbedder struct {
	vecs     map[string][]float32
	embedded []string
}

func (f *fakeEmbedder) Name() string { return "fake" }
func (f *fakeEmbedder) Dim() int     { return 2 }
func (f *fakeEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		f.embedded = append(f.embedded, t)
		out[i] = f.vecs[t]
	}
	return out, nil
}

func hit(id, text string, score float64) docent.Hit {
	return docent.Hit{Chunk: docent.Chunk{ID: id, DocID: id, Text: text}, Score: score}
}

func ids(hits []docent.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Chunk.ID)
	}
	return out
}

func TestRerankerOrder(t *testing.T) {
	candidates := []docent.Hit{
		hit("a", "vaccine trial results in children", 1.0),
		hit("b", "influenza vaccine efficacy in elderly adults", 0.9),
		hit("c", "unrelated text about budgets", 0.1),
	}
	for _, tc := range []struct {
		name    string
		weights RerankWeights
		k       int
		want    []string
	}{
		{"fused only keeps inner order", RerankWeights{Fused: 1}, 3, []string{"a", "b", "c"}},
		{"coverage lifts the hit with every query term", RerankWeights{Fused: 1, Coverage: 1}, 3, []string{"b", "a", "c"}},
		{"proximity lifts adjacent query terms", RerankWeights{Fused: 0.1, Proximity: 1}, 3, []string{"b", "a", "c"}},
		{"k truncates", RerankWeights{Fused: 1}, 2, []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var innerK int
			r := &Reranker{
				Inner: searchFunc(func(_ context.Context, q Query) ([]docent.Hit, error) {
					innerK = q.K
					return slices.Clone(candidates), nil
				}),
				Depth:   50,
				Weights: tc.weights,
			}
			got, err := r.Search(context.Background(), Query{Text: "influenza vaccine efficacy", K: tc.k})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(got), tc.want) {
				t.Fatalf("order %v, want %v", ids(got), tc.want)
			}
			if innerK != 50 {
				t.Fatalf("inner K %d, want Depth 50", innerK)
			}
			for i := 1; i < len(got); i++ {
				if got[i].RerankScore > got[i-1].RerankScore {
					t.Fatalf("RerankScore not descending: %v", got)
				}
			}
		})
	}
}

func TestRerankerDenseFillsMissingScores(t *testing.T) {
	a := hit("a", "alpha", 1.0)
	a.VectorRank, a.VectorScore = 1, 0.1
	b := hit("b", "beta", 0.9) // keyword only: its vector must be computed
	emb := &fakeEmbedder{vecs: map[string][]float32{"beta": {1, 0}}}
	r := &Reranker{
		Inner: searchFunc(func(context.Context, Query) ([]docent.Hit, error) {
			return []docent.Hit{a, b}, nil
		}),
		Embedder: emb,
		Weights:  RerankWeights{Fused: 0.1, Dense: 1},
	}
	got, err := r.Search(context.Background(), Query{Text: "x", Vector: []float32{1, 0}, K: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(emb.embedded, []string{"beta"}) {
		t.Fatalf("embedded %q, want only the keyword-only hit", emb.embedded)
	}
	if !slices.Equal(ids(got), []string{"b", "a"}) {
		t.Fatalf("order %v, want b (cosine 1) before a (cosine 0.1)", ids(got))
	}

	t.Run("dimension mismatch", func(t *testing.T) {
		_, err := r.Search(context.Background(), Query{Text: "x", Vector: []float32{1, 0, 0}, K: 2})
		if err == nil {
			t.Fatal("no error for a query vector of another dimension")
		}
	})
}

func TestRerankerInnerError(t *testing.T) {
	boom := errors.New("boom")
	r := &Reranker{Inner: searchFunc(func(context.Context, Query) ([]docent.Hit, error) { return nil, boom })}
	if _, err := r.Search(context.Background(), Query{Text: "x"}); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want wrapping boom", err)
	}
}

func TestMinDistance(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []int
		want int
	}{
		{"adjacent", []int{3}, []int{4}, 1},
		{"closest pair wins", []int{0, 10, 20}, []int{14, 30}, 4},
		{"same position counts as 1", []int{5}, []int{5}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := minDistance(tc.a, tc.b); got != tc.want {
				t.Fatalf("minDistance = %d, want %d", got, tc.want)
			}
		})
	}
}
