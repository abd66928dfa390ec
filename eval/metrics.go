package eval

import (
	"math"
	"slices"
)

// The metric functions below take a ranking of document ids, best first,
// and the judged relevance of documents for one query (rel maps a document
// id to its graded relevance; unjudged documents count as 0). A document
// is relevant when its grade is > 0. Only the first occurrence of an id in
// ranked counts, so a ranking with repeated ids cannot score above 1.
// A cutoff k <= 0 means "the whole ranking".

// NDCG returns the normalized discounted cumulative gain at cutoff k:
//
//	DCG@k  = sum over ranks i = 1..min(k, len(ranked)) of gain(ranked[i]) / log2(i + 1)
//	IDCG@k = the same sum over the judged grades sorted in decreasing order
//	NDCG@k = DCG@k / IDCG@k, or 0 when IDCG@k is 0 (no relevant document)
//
// The gain is the grade itself (linear gain, gain = rel, with negative
// grades counted as 0), which is what trec_eval's ndcg_cut measure does
// and so what pytrec_eval and the BEIR benchmark report; it is not the
// exponential 2^rel - 1 gain of some other toolkits. For binary judgments
// the two are identical. The ideal ranking is built from the qrels, not
// from the retrieved documents, so relevant documents that were never
// retrieved lower the score.
func NDCG(ranked []string, rel map[string]int, k int) float64 {
	grades := make([]int, 0, len(rel))
	for _, g := range rel {
		if g > 0 {
			grades = append(grades, g)
		}
	}
	if len(grades) == 0 {
		return 0
	}
	// The ideal ranking: grades in decreasing order.
	slices.Sort(grades)
	slices.Reverse(grades)
	var idcg float64
	for i, g := range grades {
		if k > 0 && i >= k {
			break
		}
		idcg += float64(g) / math.Log2(float64(i+2))
	}
	var dcg float64
	forEachUnique(ranked, k, func(i int, id string) {
		if g := rel[id]; g > 0 {
			dcg += float64(g) / math.Log2(float64(i+2))
		}
	})
	return dcg / idcg
}

// Recall returns the share of relevant documents found within the top k:
//
//	Recall@k = |{relevant documents in ranked[:k]}| / |{relevant documents}|
//
// It is 0 when the query has no relevant document.
func Recall(ranked []string, rel map[string]int, k int) float64 {
	total := countRelevant(rel)
	if total == 0 {
		return 0
	}
	found := 0
	forEachUnique(ranked, k, func(_ int, id string) {
		if rel[id] > 0 {
			found++
		}
	})
	return float64(found) / float64(total)
}

// MRR returns the reciprocal rank of the first relevant document within
// the top k:
//
//	MRR@k = 1 / r, where r is the 1-based rank of the first relevant
//	        document in ranked[:k]; 0 when there is none.
//
// Averaged over queries this is the mean reciprocal rank.
func MRR(ranked []string, rel map[string]int, k int) float64 {
	r := FirstRelevantRank(ranked, rel, k)
	if r == 0 {
		return 0
	}
	return 1 / float64(r)
}

// HitAt returns 1 when at least one relevant document is within the top k
// and 0 otherwise (success@k); averaged over queries it is the hit rate.
func HitAt(ranked []string, rel map[string]int, k int) float64 {
	if FirstRelevantRank(ranked, rel, k) > 0 {
		return 1
	}
	return 0
}

// FirstRelevantRank returns the 1-based rank of the first relevant document
// within the top k of ranked, or 0 when there is none.
func FirstRelevantRank(ranked []string, rel map[string]int, k int) int {
	rank := 0
	forEachUnique(ranked, k, func(i int, id string) {
		if rank == 0 && rel[id] > 0 {
			rank = i + 1
		}
	})
	return rank
}

// forEachUnique calls fn with the 0-based rank and id of each distinct id
// in ranked, in order, up to k distinct ids (all when k <= 0).
func forEachUnique(ranked []string, k int, fn func(i int, id string)) {
	seen := make(map[string]bool, len(ranked))
	i := 0
	for _, id := range ranked {
		if k > 0 && i >= k {
			return
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		fn(i, id)
		i++
	}
}

func countRelevant(rel map[string]int) int {
	n := 0
	for _, g := range rel {
		if g > 0 {
			n++
		}
	}
	return n
}
