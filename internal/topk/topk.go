// Package topk keeps the k best of a stream of values: a min-heap of at
// most k values with the worst on top, so a value that cannot enter costs
// one comparison. The keyword index and the vector store rank with it.
package topk

import "slices"

// Heap keeps the k best values offered, by worse.
type Heap[T any] struct {
	k     int
	items []T
	worse func(a, b T) bool
}

// New returns an empty Heap of the k best values; worse(a, b) reports
// whether a ranks below b and must be a strict total order for the
// result not to depend on the order of offers. capHint bounds the
// storage allocated up front (how many values may be offered).
func New[T any](k int, worse func(a, b T) bool, capHint int) *Heap[T] {
	return &Heap[T]{k: k, items: make([]T, 0, max(0, min(k, capHint))), worse: worse}
}

// Len returns how many values it holds.
func (h *Heap[T]) Len() int { return len(h.items) }

// Admits reports whether x would be kept if offered now.
func (h *Heap[T]) Admits(x T) bool {
	return h.k > 0 && (len(h.items) < h.k || h.worse(h.items[0], x))
}

// Offer keeps x when it is among the k best offered so far.
func (h *Heap[T]) Offer(x T) {
	switch {
	case h.k <= 0:
	case len(h.items) < h.k:
		h.items = append(h.items, x)
		h.up(len(h.items) - 1)
	case h.worse(h.items[0], x):
		h.items[0] = x
		h.down(0)
	}
}

// Sorted returns the values kept, best first.
func (h *Heap[T]) Sorted() []T {
	out := slices.Clone(h.items)
	slices.SortFunc(out, func(a, b T) int {
		switch {
		case h.worse(b, a):
			return -1
		case h.worse(a, b):
			return 1
		}
		return 0
	})
	return out
}

func (h *Heap[T]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.worse(h.items[i], h.items[p]) {
			return
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *Heap[T]) down(i int) {
	n := len(h.items)
	for {
		m := 2*i + 1
		if m >= n {
			return
		}
		if r := m + 1; r < n && h.worse(h.items[r], h.items[m]) {
			m = r
		}
		if !h.worse(h.items[m], h.items[i]) {
			return
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
}
