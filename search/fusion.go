package search

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/docent-hq/docent"
)

// Fusion methods.
const (
	// FusionScore is min-max normalized weighted score fusion.
	FusionScore = "score"
	// FusionRRF is Reciprocal Rank Fusion.
	FusionRRF = "rrf"
)

// Default fusion parameters. DefaultKeywordWeight and DefaultVectorWeight
// are starting values; the eval runner measures which weights are best.
const (
	DefaultRRFK          = 60
	DefaultKeywordWeight = 1.0
	DefaultVectorWeight  = 0.4
)

// Fusion combines a keyword ranking and a vector ranking into one.
//
// With Method FusionScore, each retriever's scores are min-max normalized to
// [0,1] over its own candidate list (a list whose scores are all equal
// normalizes to 1), and a hit's fused score is
// KeywordWeight*normKeyword + VectorWeight*normVector, a missing retriever
// contributing 0. With Method FusionRRF, a hit's fused score is
// KeywordWeight/(K+keywordRank) + VectorWeight/(K+vectorRank), summed over
// the lists that contain it.
type Fusion struct {
	// Method is FusionScore or FusionRRF; empty means FusionScore.
	Method string `json:"method" yaml:"method"`
	// K is the RRF rank constant; zero or less means DefaultRRFK.
	K float64 `json:"k" yaml:"k"`
	// KeywordWeight and VectorWeight weight each retriever. They are used as
	// given (a zero weight ignores that retriever's contribution to Score).
	KeywordWeight float64 `json:"keyword_weight" yaml:"keyword_weight"`
	VectorWeight  float64 `json:"vector_weight" yaml:"vector_weight"`
}

// DefaultFusion returns score fusion with the default weights.
func DefaultFusion() Fusion {
	return Fusion{Method: FusionScore, K: DefaultRRFK, KeywordWeight: DefaultKeywordWeight, VectorWeight: DefaultVectorWeight}
}

// Validate reports an unknown Method or a negative weight.
func (f Fusion) Validate() error {
	switch f.Method {
	case "", FusionScore, FusionRRF:
	default:
		return fmt.Errorf("search: unknown fusion method %q (want %q or %q)", f.Method, FusionScore, FusionRRF)
	}
	if f.KeywordWeight < 0 || f.VectorWeight < 0 || math.IsNaN(f.KeywordWeight) || math.IsNaN(f.VectorWeight) {
		return fmt.Errorf("search: fusion weights must be >= 0 (keyword %v, vector %v)", f.KeywordWeight, f.VectorWeight)
	}
	return nil
}

// Fuse merges the two rankings. keyword and vector must each be sorted best
// first and hold at most one hit per chunk ID; keyword hits carry their BM25
// score in KeywordScore and vector hits their similarity in VectorScore.
//
// The result holds each chunk once, with KeywordRank/KeywordScore and
// VectorRank/VectorScore set from the lists (ranks are the 1-based positions
// in the input lists, 0 when absent) and Score set to the fused score,
// sorted by Score descending and then by chunk ID ascending. Chunk fields
// come from the keyword hit when both lists hold the chunk.
func (f Fusion) Fuse(keyword, vector []docent.Hit) []docent.Hit {
	return fuseLists(f, []fusedList{
		{hits: keyword, weight: f.KeywordWeight, keyword: true},
		{hits: vector, weight: f.VectorWeight, original: true},
	})
}

// fusedList is one ranking in the final fusion.
type fusedList struct {
	hits   []docent.Hit
	weight float64
	// keyword marks the BM25 list (scores in KeywordScore); otherwise the
	// list is a vector list (scores in VectorScore).
	keyword bool
	// original marks the vector list of the original query vector, whose
	// ranks and similarities the hits report.
	original bool
}

// fuseLists is the one fusion implementation, over any number of lists: each list's scores
// min-max normalized (or its ranks, for RRF), weighted and summed, a
// missing hit contributing 0. Ties go by chunk ID.
func fuseLists(f Fusion, lists []fusedList) []docent.Hit {
	k := f.K
	if k <= 0 {
		k = DefaultRRFK
	}
	n := 0
	for _, l := range lists {
		n += len(l.hits)
	}
	index := make(map[string]int, n)
	out := make([]docent.Hit, 0, n)
	for _, l := range lists {
		score := func(h docent.Hit) float64 { return h.VectorScore }
		if l.keyword {
			score = func(h docent.Hit) float64 { return h.KeywordScore }
		}
		lo, hi := minMax(l.hits, score)
		for i, h := range l.hits {
			j, ok := index[h.Chunk.ID]
			if !ok {
				j = len(out)
				index[h.Chunk.ID] = j
				out = append(out, docent.Hit{Chunk: h.Chunk})
			}
			o := &out[j]
			switch {
			case l.keyword:
				o.KeywordRank, o.KeywordScore = i+1, h.KeywordScore
			case l.original:
				o.VectorRank, o.VectorScore = i+1, h.VectorScore
			}
			if f.Method == FusionRRF {
				o.Score += l.weight / (k + float64(i+1))
			} else {
				o.Score += l.weight * normalize(score(h), lo, hi)
			}
		}
	}
	// SortHits' order; the IDs are distinct, so an unstable sort gives it
	// too, with fewer moves of these large values.
	slices.SortFunc(out, compareHits)
	return out
}

// SortHits orders hits by Score descending, then by chunk ID ascending, so
// that equal scores always come out in the same order.
func SortHits(hits []docent.Hit) {
	slices.SortStableFunc(hits, compareHits)
}

func compareHits(a, b docent.Hit) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	return cmp.Compare(a.Chunk.ID, b.Chunk.ID)
}

func minMax(hits []docent.Hit, score func(docent.Hit) float64) (lo, hi float64) {
	for i, h := range hits {
		s := score(h)
		if i == 0 || s < lo {
			lo = s
		}
		if i == 0 || s > hi {
			hi = s
		}
	}
	return lo, hi
}

// normalize maps s from [lo,hi] to [0,1]; a degenerate range maps to 1.
func normalize(s, lo, hi float64) float64 {
	if hi <= lo {
		return 1
	}
	return (s - lo) / (hi - lo)
}
