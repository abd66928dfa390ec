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
	method := f.Method
	if method == "" {
		method = FusionScore
	}
	k := f.K
	if k <= 0 {
		k = DefaultRRFK
	}

	index := make(map[string]int, len(keyword)+len(vector))
	out := make([]docent.Hit, 0, len(keyword)+len(vector))
	get := func(h docent.Hit) *docent.Hit {
		if i, ok := index[h.Chunk.ID]; ok {
			return &out[i]
		}
		index[h.Chunk.ID] = len(out)
		out = append(out, docent.Hit{Chunk: h.Chunk, RerankScore: h.RerankScore})
		return &out[len(out)-1]
	}

	kmin, kmax := minMax(keyword, func(h docent.Hit) float64 { return h.KeywordScore })
	for i, h := range keyword {
		o := get(h)
		o.KeywordRank = i + 1
		o.KeywordScore = h.KeywordScore
		if method == FusionRRF {
			o.Score += f.KeywordWeight / (k + float64(i+1))
		} else {
			o.Score += f.KeywordWeight * normalize(h.KeywordScore, kmin, kmax)
		}
	}
	vmin, vmax := minMax(vector, func(h docent.Hit) float64 { return h.VectorScore })
	for i, h := range vector {
		o := get(h)
		o.VectorRank = i + 1
		o.VectorScore = h.VectorScore
		if method == FusionRRF {
			o.Score += f.VectorWeight / (k + float64(i+1))
		} else {
			o.Score += f.VectorWeight * normalize(h.VectorScore, vmin, vmax)
		}
	}
	SortHits(out)
	return out
}

// SortHits orders hits by Score descending, then by chunk ID ascending, so
// that equal scores always come out in the same order.
func SortHits(hits []docent.Hit) {
	slices.SortStableFunc(hits, func(a, b docent.Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Chunk.ID, b.Chunk.ID)
	})
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
