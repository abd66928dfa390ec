package local

import (
	"math"
	"math/rand"
	"runtime"
	"slices"
	"sync"

	"github.com/viterin/vek/vek32"
)

// ivf is an inverted-file approximate index: vectors are grouped by their
// nearest of nlist centroids (spherical k-means), and a query scans only
// the lists of the centroids nearest to it.
//
// It was chosen over an HNSW graph because it builds from the in-memory
// vectors in about a second at 200k chunks and deterministically (seeded
// k-means), updates in O(nlist) per vector with no graph repair on delete,
// adds only 8 bytes per vector, and lets the filter predicate run during
// the list scan: a filtered query simply keeps probing lists until it has
// enough hits.
type ivf struct {
	dim       int
	centroids []float32 // nlist*dim, unit length
	lists     [][]int32 // slots per centroid
	listOf    []int32   // per slot: its list
	posOf     []int32   // per slot: its index in that list
	trainedOn int
}

const (
	kmeansIters     = 10
	samplePerList   = 32
	minSlotsPerList = 64
)

func (x *ivf) nlist() int { return len(x.lists) }

func (x *ivf) centroid(c int) []float32 {
	return x.centroids[c*x.dim : (c+1)*x.dim : (c+1)*x.dim]
}

// nearest returns the centroid with the largest dot product with v.
func (x *ivf) nearest(v []float32) int32 {
	best, bestScore := 0, float32(math.Inf(-1))
	for c := range x.lists {
		if d := vek32.Dot(v, x.centroid(c)); d > bestScore {
			best, bestScore = c, d
		}
	}
	return int32(best)
}

// buildIVF trains centroids on a seeded sample of the store's vectors and
// assigns every vector to its nearest centroid.
func buildIVF(s *vectorStore, seed int64) *ivf {
	n := s.len()
	nlist := int(math.Sqrt(float64(n)))
	if nlist > n/minSlotsPerList {
		nlist = max(1, n/minSlotsPerList)
	}
	x := &ivf{dim: s.dim, trainedOn: n}
	rng := rand.New(rand.NewSource(seed))

	sample := rng.Perm(n)
	if m := nlist * samplePerList; m < n {
		sample = sample[:m]
	}
	x.centroids = make([]float32, nlist*s.dim)
	for c := range nlist {
		copy(x.centroid(c), s.vec(sample[c]))
	}
	x.lists = make([][]int32, nlist)

	assign := make([]int32, len(sample))
	for range kmeansIters {
		parallel(len(sample), func(i int) { assign[i] = x.nearest(s.vec(sample[i])) })
		sums := make([]float64, nlist*s.dim)
		counts := make([]int, nlist)
		for i, c := range assign {
			counts[c]++
			row := sums[int(c)*s.dim : (int(c)+1)*s.dim]
			for j, v := range s.vec(sample[i]) {
				row[j] += float64(v)
			}
		}
		for c := range nlist {
			cen := x.centroid(c)
			if counts[c] == 0 {
				copy(cen, s.vec(sample[rng.Intn(len(sample))]))
				continue
			}
			row := sums[c*s.dim : (c+1)*s.dim]
			var norm float64
			for _, v := range row {
				norm += v * v
			}
			norm = math.Sqrt(norm)
			if norm == 0 {
				continue
			}
			for j, v := range row {
				cen[j] = float32(v / norm)
			}
		}
	}

	x.listOf = make([]int32, n)
	x.posOf = make([]int32, n)
	parallel(n, func(i int) { x.listOf[i] = x.nearest(s.vec(i)) })
	for slot, c := range x.listOf {
		x.posOf[slot] = int32(len(x.lists[c]))
		x.lists[c] = append(x.lists[c], int32(slot))
	}
	return x
}

// add files a slot appended to the store (slot == len(listOf)).
func (x *ivf) add(s *vectorStore, slot int) {
	c := x.nearest(s.vec(slot))
	x.listOf = append(x.listOf, c)
	x.posOf = append(x.posOf, int32(len(x.lists[c])))
	x.lists[c] = append(x.lists[c], int32(slot))
}

// remove unfiles slot; then, if slot was not the last slot, the store moves
// the last slot into it and move must be called.
func (x *ivf) remove(slot int) {
	c, p := x.listOf[slot], x.posOf[slot]
	l := x.lists[c]
	end := len(l) - 1
	if int(p) != end {
		l[p] = l[end]
		x.posOf[l[p]] = p
	}
	x.lists[c] = l[:end]
	if slot == len(x.listOf)-1 {
		x.listOf, x.posOf = x.listOf[:slot], x.posOf[:slot]
	}
}

// move records that the store moved slot from (the last) into slot to.
func (x *ivf) move(from, to int) {
	c, p := x.listOf[from], x.posOf[from]
	x.lists[c][p] = int32(to)
	x.listOf[to], x.posOf[to] = c, p
	x.listOf, x.posOf = x.listOf[:from], x.posOf[:from]
}

// search scans the lists of the nprobe centroids nearest to q, and keeps
// scanning further lists (nearest first) until k hits pass the filter or
// every list has been scanned.
func (x *ivf) search(s *vectorStore, q []float32, k int, cf *compiledFilter, nprobe int) []scored {
	order := make([]scored, x.nlist())
	for c := range x.lists {
		order[c] = scored{slot: c, score: vek32.Dot(q, x.centroid(c))}
	}
	slices.SortFunc(order, func(a, b scored) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return a.slot - b.slot
	})
	t := newTopK(k, len(s.meta), s.meta)
	for i, c := range order {
		if i >= nprobe && t.Len() >= k {
			break
		}
		for _, slot := range x.lists[c.slot] {
			if !cf.match(&s.meta[slot]) {
				continue
			}
			t.Offer(scored{int(slot), vek32.Dot(q, s.vec(int(slot)))})
		}
	}
	return t.Sorted()
}

// parallel calls fn(i) for i in [0,n) on GOMAXPROCS goroutines.
func parallel(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for w := range workers {
		lo, hi := w*chunk, min(n, (w+1)*chunk)
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				fn(i)
			}
		})
	}
	wg.Wait()
}
