package synthetic

import (
	"slices"
	"testing"
)

func TestChunksDeterministic(t *testing.T) {
	a, b := Chunks(300, 32, 42), Chunks(300, 32, 42)
	c := Chunks(300, 32, 43)
	for i := range a {
		if !slices.Equal(a[i].Vector, b[i].Vector) || a[i].Text != b[i].Text || a[i].ID != b[i].ID ||
			!a[i].UpdatedAt.Equal(b[i].UpdatedAt) || !slices.Equal(a[i].Labels, b[i].Labels) {
			t.Fatalf("chunk %d differs between runs with the same seed", i)
		}
	}
	if slices.Equal(a[0].Vector, c[0].Vector) {
		t.Error("different seeds gave the same first vector")
	}
	for i, ch := range a {
		var n float64
		for _, x := range ch.Vector {
			n += float64(x) * float64(x)
		}
		if n < 0.999 || n > 1.001 {
			t.Fatalf("chunk %d vector has squared norm %v, want 1", i, n)
		}
	}
}
