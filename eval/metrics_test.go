package eval

import (
	"math"
	"testing"
	"time"
)

func approx(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// log2(3) = 1.584962500721156, log2(4) = 2, log2(5) = 2.321928094887362.

func TestNDCG(t *testing.T) {
	graded := map[string]int{"b": 2, "d": 1, "e": 3}
	tests := []struct {
		name   string
		ranked []string
		rel    map[string]int
		k      int
		want   float64
	}{
		{
			// DCG@3  = 0/log2(2) + 2/log2(3) + 0/log2(4) = 1.2618595071429148
			// IDCG@3 = 3/log2(2) + 2/log2(3) + 1/log2(4) = 3 + 1.2618595 + 0.5 = 4.7618595071429148
			// nDCG@3 = 1.2618595 / 4.7618595 = 0.26499301486112564
			// (with exponential gain 2^rel-1 it would be 3/log2(3) / (7 + 3/log2(3) + 0.5) = 0.2018...)
			name: "graded, linear gain", ranked: []string{"a", "b", "c", "d"}, rel: graded, k: 3,
			want: 0.26499301486112564,
		},
		{
			// DCG@10  = 2/log2(3) + 1/log2(5) = 1.2618595 + 0.4306766 = 1.6925361
			// IDCG@10 = 3 + 2/log2(3) + 1/log2(4) = 4.7618595 (only 3 judged relevant)
			// nDCG@10 = 0.35543595158098623
			name: "graded, cutoff beyond ranking", ranked: []string{"a", "b", "c", "d"}, rel: graded, k: 10,
			want: 0.35543595158098623,
		},
		{
			// The ranking equals the ideal one: 1.
			name: "ideal order", ranked: []string{"e", "b", "d"}, rel: graded, k: 10, want: 1,
		},
		{
			// Fewer results than k: DCG = 1/log2(3) = 0.6309; IDCG = 1/log2(2) = 1.
			name: "fewer results than k", ranked: []string{"x", "a"}, rel: map[string]int{"a": 1}, k: 10,
			want: 0.6309297535714575,
		},
		{
			// Two relevant, one retrieved at rank 1: DCG = 1; IDCG = 1 + 1/log2(3) = 1.6309;
			// nDCG = 0.6131471927654584.
			name: "missed relevant lowers ideal", ranked: []string{"a", "x"}, rel: map[string]int{"a": 1, "b": 1}, k: 10,
			want: 0.6131471927654584,
		},
		{
			// The repeated "a" is counted once, so "b" is at rank 2:
			// DCG = 1/log2(3); IDCG = 1 + 1/log2(3); nDCG = 0.6309/1.6309 = 0.38685280723454163.
			name: "duplicates count once", ranked: []string{"x", "x", "b"}, rel: map[string]int{"a": 1, "b": 1}, k: 2,
			want: 0.38685280723454163,
		},
		{
			name: "grade 0 and negative are not relevant", ranked: []string{"a", "b"}, rel: map[string]int{"a": 0, "b": -1}, k: 10,
			want: 0,
		},
		{name: "no relevant documents", ranked: []string{"a"}, rel: nil, k: 10, want: 0},
		{name: "empty ranking", ranked: nil, rel: map[string]int{"a": 1}, k: 10, want: 0},
		{
			// k <= 0 uses the whole ranking: same as the k=10 graded case.
			name: "k zero means all", ranked: []string{"a", "b", "c", "d"}, rel: graded, k: 0,
			want: 0.35543595158098623,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NDCG(tt.ranked, tt.rel, tt.k); !approx(got, tt.want) {
				t.Errorf("NDCG = %.12f, want %.12f", got, tt.want)
			}
		})
	}
}

func TestRecallMRRHit(t *testing.T) {
	// Relevant: a, b, d (grade > 0); c is judged non-relevant.
	rel := map[string]int{"a": 1, "b": 1, "c": 0, "d": 2}
	tests := []struct {
		name      string
		ranked    []string
		rel       map[string]int
		k         int
		recall    float64
		mrr       float64
		hit       float64
		firstRank int
	}{
		// Top 2 = [c, a]: found a -> 1/3; first relevant at rank 2 -> 1/2.
		{name: "cutoff 2", ranked: []string{"c", "a", "x", "d"}, rel: rel, k: 2, recall: 1.0 / 3, mrr: 0.5, hit: 1, firstRank: 2},
		// Top 10 = all four: found a, d -> 2/3.
		{name: "cutoff beyond ranking", ranked: []string{"c", "a", "x", "d"}, rel: rel, k: 10, recall: 2.0 / 3, mrr: 0.5, hit: 1, firstRank: 2},
		// First relevant at rank 3, outside k=2: 0.
		{name: "relevant outside cutoff", ranked: []string{"x", "y", "a"}, rel: rel, k: 2, recall: 0, mrr: 0, hit: 0, firstRank: 0},
		// k=3: a at rank 3 -> MRR 1/3, recall 1/3.
		{name: "rank three", ranked: []string{"x", "y", "a"}, rel: rel, k: 3, recall: 1.0 / 3, mrr: 1.0 / 3, hit: 1, firstRank: 3},
		// All three relevant at the top.
		{name: "all found", ranked: []string{"d", "b", "a"}, rel: rel, k: 3, recall: 1, mrr: 1, hit: 1, firstRank: 1},
		// A repeated relevant doc does not count twice: [a, a] -> 1/3.
		{name: "duplicates count once", ranked: []string{"a", "a"}, rel: rel, k: 10, recall: 1.0 / 3, mrr: 1, hit: 1, firstRank: 1},
		{name: "only non-relevant judged", ranked: []string{"c"}, rel: map[string]int{"c": 0}, k: 10},
		{name: "no judgments", ranked: []string{"a"}, rel: nil, k: 10},
		{name: "empty ranking", ranked: nil, rel: rel, k: 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Recall(tt.ranked, tt.rel, tt.k); !approx(got, tt.recall) {
				t.Errorf("Recall = %v, want %v", got, tt.recall)
			}
			if got := MRR(tt.ranked, tt.rel, tt.k); !approx(got, tt.mrr) {
				t.Errorf("MRR = %v, want %v", got, tt.mrr)
			}
			if got := HitAt(tt.ranked, tt.rel, tt.k); got != tt.hit {
				t.Errorf("HitAt = %v, want %v", got, tt.hit)
			}
			if got := FirstRelevantRank(tt.ranked, tt.rel, tt.k); got != tt.firstRank {
				t.Errorf("FirstRelevantRank = %d, want %d", got, tt.firstRank)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	var hundred []time.Duration
	for i := 100; i >= 1; i-- { // unsorted on purpose
		hundred = append(hundred, time.Duration(i)*time.Millisecond)
	}
	tests := []struct {
		name string
		ds   []time.Duration
		p    float64
		want time.Duration
	}{
		// Nearest rank: ceil(p/100 * n)-th smallest value.
		{name: "p50 of 100", ds: hundred, p: 50, want: 50 * time.Millisecond},
		{name: "p95 of 100", ds: hundred, p: 95, want: 95 * time.Millisecond},
		{name: "p99 of 100", ds: hundred, p: 99, want: 99 * time.Millisecond},
		{name: "p100 of 100", ds: hundred, p: 100, want: 100 * time.Millisecond},
		// ceil(0.5*3) = 2nd of [1 2 3]; ceil(0.95*3) = 3rd.
		{name: "p50 of 3", ds: []time.Duration{3, 1, 2}, p: 50, want: 2},
		{name: "p95 of 3", ds: []time.Duration{3, 1, 2}, p: 95, want: 3},
		{name: "single", ds: []time.Duration{7}, p: 99, want: 7},
		{name: "empty", ds: nil, p: 50, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.ds, tt.p); got != tt.want {
				t.Errorf("Percentile(%v) = %v, want %v", tt.p, got, tt.want)
			}
		})
	}
	if hundred[0] != 100*time.Millisecond {
		t.Error("Percentile modified its input")
	}
}
