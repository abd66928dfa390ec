package search

import (
	"math/rand"
	"slices"
	"strconv"
	"testing"
)

// TestSortedJaccard: the merge over sorted slices gives what Jaccard
// gives over the same sets as maps.
func TestSortedJaccard(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for n := range 500 {
		a, b := map[string]bool{}, map[string]bool{}
		for range rng.Intn(30) {
			a[strconv.Itoa(rng.Intn(40))] = true
		}
		for range rng.Intn(30) {
			b[strconv.Itoa(rng.Intn(40))] = true
		}
		sorted := func(m map[string]bool) []string {
			var out []string
			for k := range m {
				out = append(out, k)
			}
			slices.Sort(out)
			return out
		}
		if got, want := sortedJaccard(sorted(a), sorted(b)), Jaccard(a, b); got != want {
			t.Fatalf("case %d: sortedJaccard %v, Jaccard %v (a %v, b %v)", n, got, want, a, b)
		}
	}
}
