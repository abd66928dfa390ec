package search

import (
	"math"
	"slices"
	"testing"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name string
		in   []float32
		want []float32
	}{
		{"3-4-5", []float32{3, 4}, []float32{0.6, 0.8}},
		{"negative", []float32{0, -2, 0}, []float32{0, -1, 0}},
		{"unit stays", []float32{1, 0}, []float32{1, 0}},
		{"zero stays zero", []float32{0, 0, 0}, []float32{0, 0, 0}},
		{"empty", []float32{}, []float32{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := slices.Clone(tt.in)
			Normalize(v)
			if len(v) != len(tt.want) {
				t.Fatalf("len %d, want %d", len(v), len(tt.want))
			}
			for i := range v {
				if math.Abs(float64(v[i]-tt.want[i])) > 1e-6 {
					t.Fatalf("Normalize(%v) = %v, want %v", tt.in, v, tt.want)
				}
			}
		})
	}
}
