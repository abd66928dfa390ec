package search

import "math"

// Normalize scales v to unit L2 length in place; a zero vector stays zero.
// The sum of squares is accumulated in float64.
func Normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
}
