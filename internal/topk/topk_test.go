package topk

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestHeap: the k best of a random stream, best first, whatever the
// order of offers; k larger than the stream keeps all; k 0 keeps none.
func TestHeap(t *testing.T) {
	type v struct{ score, id int }
	worse := func(a, b v) bool {
		if a.score != b.score {
			return a.score < b.score
		}
		return a.id > b.id
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n, k := rng.IntN(60), rng.IntN(12)
		var all []v
		for i := range n {
			all = append(all, v{rng.IntN(10), i})
		}
		h := New(k, worse, n)
		for _, i := range rng.Perm(n) {
			kept := h.Sorted()
			admits := k > 0 && (len(kept) < k || worse(kept[len(kept)-1], all[i]))
			if h.Admits(all[i]) != admits {
				t.Fatalf("trial %d: Admits disagrees with the kept values", trial)
			}
			h.Offer(all[i])
		}
		want := slices.Clone(all)
		slices.SortFunc(want, func(a, b v) int {
			if worse(b, a) {
				return -1
			}
			return 1
		})
		want = want[:min(k, n)]
		if got := h.Sorted(); !slices.Equal(got, want) {
			t.Fatalf("trial %d (n %d, k %d): %v, want %v", trial, n, k, got, want)
		}
	}
}
