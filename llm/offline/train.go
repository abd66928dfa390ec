package offline

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/docent-hq/docent/search"
)

// params are the training choices; defaultParams is what Fit uses. They
// are part of the model version: change modelVersion when changing them.
type params struct {
	cds        float64 // context distribution smoothing exponent
	eigPower   float64 // word vectors are U·Σ^eigPower
	rowNorm    bool    // normalize word vectors to unit length
	shift      float64 // PMI shift: log(shift) is subtracted (0 or 1: none)
	harmonic   bool    // weight co-occurrences 1/d rather than window-d+1
	sifA       float64 // SIF a
	npc        int     // principal components removed
	idfPool    bool    // pool with IDF weights rather than SIF
	powerIters int     // subspace iterations of the range finder
	docMix     float64 // weight of the term-document block beside PPMI
	triDims    int     // dims given to hashed character trigrams
}

// defaultParams won the SciFact train sweep (research_sweep_test.go): the
// document block (docMix 2) and IDF pooling lift vector-only nDCG@10 from
// 0.620 to 0.646 and R@100 from 0.929 to 0.938 through the product eval;
// shifted PMI, eigenvalue weighting, other SIF a, 0 or 2 components, more
// power iterations and a trigram block did not help.
var defaultParams = params{cds: 0.75, eigPower: 0, rowNorm: true, sifA: sifA, npc: 1, powerIters: 2, docMix: 2, idfPool: true}

// Training constants (part of the model version: change modelVersion when
// changing them).
const (
	oversample = 10             // extra random directions in the range finder
	pcIters    = 50             // power iterations for the principal component
	svdSeed1   = 0x646f63656e74 // "docent"
	svdSeed2   = 0x6f66666c696e65
	maxPCDocs  = 20000
)

// train builds a model from st, or returns nil when the vocabulary is too
// small to be worth one.
func train(ctx context.Context, st stats, o Options, pr params) (*model, error) {
	var vocab []int32 // corpus term IDs that get a vector
	for id, c := range st.counts {
		if c >= int64(o.MinCount) {
			vocab = append(vocab, int32(id))
		}
	}
	slices.SortFunc(vocab, func(a, b int32) int {
		if c := cmp.Compare(st.counts[b], st.counts[a]); c != 0 {
			return c
		}
		return cmp.Compare(st.words[a], st.words[b])
	})
	if len(vocab) > o.MaxVocab {
		vocab = vocab[:o.MaxVocab]
	}
	if len(vocab) < minVocab {
		return nil, nil
	}
	V := len(vocab)
	terms := make([]string, V)
	index := make(map[string]int32, V)
	counts := make([]int64, V)
	remap := make([]int32, len(st.words)) // corpus term ID -> vocabulary index, or -1
	for i := range remap {
		remap[i] = -1
	}
	for i, id := range vocab {
		terms[i] = st.words[id]
		index[terms[i]] = int32(i)
		counts[i] = st.counts[id]
		remap[id] = int32(i)
	}
	docs := make([][]int32, len(st.texts))
	df := make([]int64, V)
	last := make([]int, V)
	for d, ts := range st.texts {
		ids := make([]int32, 0, len(ts))
		for _, t := range ts {
			if i := remap[t]; i >= 0 {
				ids = append(ids, i)
				if last[i] != d+1 {
					last[i] = d + 1
					df[i]++
				}
			}
		}
		docs[d] = ids
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("offline: train: %w", err)
	}
	a := ppmi(docs, V, o.Window, pr)
	if pr.docMix > 0 {
		a = withDocBlock(a, docs, df, pr.docMix)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("offline: train: %w", err)
	}
	sd := o.Dim - pr.triDims
	vecs, err := truncatedSVD(ctx, a, sd, pr)
	if err != nil {
		return nil, err
	}
	m := &model{dim: o.Dim, triDims: pr.triDims, docs: st.docs, tokens: st.tokens, terms: terms, counts: counts, df: df,
		vecs: vecs, sifA: pr.sifA, idfPool: pr.idfPool}
	// Pooling weights are needed for the principal components; finish
	// again after they are set to encode and name the model.
	m.index = index
	m.setWeights()
	m.pcs = principalComponents(m, docs, pr.npc)
	m.finish()
	return m, nil
}

// csr is a sparse matrix in compressed sparse row form.
type csr struct {
	n      int // rows
	nc     int // columns
	rowPtr []int
	col    []int32
	val    []float64
}

// ppmi counts co-occurrences within window (weighted window-d+1 for
// distance d, or 1/d when harmonic) and returns the positive PMI matrix
// with context distribution smoothing, shifted by log(shift).
//
// It works row by row: the texts are laid end to end with window empty
// slots between them, each term's positions are listed, and a row is the
// weighted count of what surrounds its term's positions. Rows are
// independent, so they are built in parallel, each in a fixed order: the
// result does not depend on scheduling.
func ppmi(docs [][]int32, V, window int, pr params) *csr {
	wts := make([]float64, window+1)
	for d := 1; d <= window; d++ {
		wts[d] = float64(window - d + 1)
		if pr.harmonic {
			wts[d] = 1 / float64(d)
		}
	}
	// flat holds the texts separated by window slots of -1, with window
	// more at each end, so that no window crosses a text boundary.
	n := window
	for _, ids := range docs {
		n += len(ids) + window
	}
	flat := make([]int32, n)
	for i := range window {
		flat[i] = -1
	}
	pos := make([]int, V+1) // term i's positions are at[pos[i]:pos[i+1]]
	p := window
	for _, ids := range docs {
		for _, w := range ids {
			flat[p] = w
			pos[w+1]++
			p++
		}
		for range window {
			flat[p] = -1
			p++
		}
	}
	for i := range V {
		pos[i+1] += pos[i]
	}
	at := make([]int32, pos[V])
	next := slices.Clone(pos[:V])
	for i, w := range flat {
		if w >= 0 {
			at[next[w]] = int32(i)
			next[w]++
		}
	}

	// Row sums: every pair is counted from both of its ends.
	rowSum := make([]float64, V)
	for i, w := range flat {
		if w < 0 {
			continue
		}
		for d := 1; d <= window; d++ {
			if c := flat[i+d]; c >= 0 {
				rowSum[w] += wts[d]
				rowSum[c] += wts[d]
			}
		}
	}
	ctxPow := make([]float64, V)
	var z float64
	for j, s := range rowSum {
		ctxPow[j] = math.Pow(s, pr.cds)
		z += ctxPow[j]
	}
	shift := 0.0
	if pr.shift > 1 {
		shift = math.Log(pr.shift)
	}

	type rows struct {
		lo, hi int
		ptr    []int // entries per row, then prefix sums
		col    []int32
		val    []float64
	}
	const block = 64
	blocks := make([]rows, (V+block-1)/block)
	var nextBlock atomic.Int64
	parallel(func() {
		acc := make([]float64, V)
		var touched []int32
		for {
			b := int(nextBlock.Add(1)) - 1
			if b >= len(blocks) {
				return
			}
			r := rows{lo: b * block, hi: min(V, (b+1)*block)}
			r.ptr = make([]int, r.hi-r.lo)
			for w := r.lo; w < r.hi; w++ {
				touched = touched[:0]
				for _, q := range at[pos[w]:pos[w+1]] {
					for d := 1; d <= window; d++ {
						for _, c := range [2]int32{flat[int(q)-d], flat[int(q)+d]} {
							if c < 0 {
								continue
							}
							if acc[c] == 0 {
								touched = append(touched, c)
							}
							acc[c] += wts[d]
						}
					}
				}
				slices.Sort(touched)
				for _, c := range touched {
					pmi := math.Log(acc[c]*z/(rowSum[w]*ctxPow[c])) - shift
					acc[c] = 0
					if pmi <= 0 {
						continue
					}
					r.col = append(r.col, c)
					r.val = append(r.val, pmi)
					r.ptr[w-r.lo]++
				}
			}
			blocks[b] = r
		}
	})
	m := &csr{n: V, nc: V, rowPtr: make([]int, V+1)}
	nnz := 0
	for _, r := range blocks {
		nnz += len(r.col)
	}
	m.col = make([]int32, 0, nnz)
	m.val = make([]float64, 0, nnz)
	for _, r := range blocks {
		for w := r.lo; w < r.hi; w++ {
			m.rowPtr[w+1] = m.rowPtr[w] + r.ptr[w-r.lo]
		}
		m.col = append(m.col, r.col...)
		m.val = append(m.val, r.val...)
	}
	return m
}

// parallel runs fn on GOMAXPROCS goroutines and waits for them.
func parallel(fn func()) {
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(fn)
	}
	wg.Wait()
}

// withDocBlock returns [a | s·X], where X is the term-document matrix with
// (1+ln tf)·idf entries, scaled so that its Frobenius norm is mix times a's.
func withDocBlock(a *csr, docs [][]int32, df []int64, mix float64) *csr {
	V, D := a.n, len(docs)
	type post struct {
		doc int32
		v   float64
	}
	posts := make([][]post, V)
	tf := map[int32]int{}
	for d, ids := range docs {
		clear(tf)
		for _, i := range ids {
			tf[i]++
		}
		keys := make([]int32, 0, len(tf))
		for i := range tf {
			keys = append(keys, i)
		}
		slices.Sort(keys)
		for _, i := range keys {
			idf := math.Log(float64(D) / float64(df[i]))
			posts[i] = append(posts[i], post{int32(d), (1 + math.Log(float64(tf[i]))) * idf})
		}
	}
	var na, nx float64
	for _, v := range a.val {
		na += v * v
	}
	for _, ps := range posts {
		for _, p := range ps {
			nx += p.v * p.v
		}
	}
	s := 0.0
	if nx > 0 {
		s = mix * math.Sqrt(na/nx)
	}
	out := &csr{n: V, nc: V + D, rowPtr: make([]int, V+1)}
	for i := range V {
		out.col = append(out.col, a.col[a.rowPtr[i]:a.rowPtr[i+1]]...)
		out.val = append(out.val, a.val[a.rowPtr[i]:a.rowPtr[i+1]]...)
		for _, p := range posts[i] {
			out.col = append(out.col, int32(V)+p.doc)
			out.val = append(out.val, s*p.v)
		}
		out.rowPtr[i+1] = len(out.col)
	}
	return out
}

// transpose returns mᵀ.
func (m *csr) transpose() *csr {
	t := &csr{n: m.nc, nc: m.n, rowPtr: make([]int, m.nc+1), col: make([]int32, len(m.col)), val: make([]float64, len(m.val))}
	for _, j := range m.col {
		t.rowPtr[j+1]++
	}
	for i := range m.nc {
		t.rowPtr[i+1] += t.rowPtr[i]
	}
	next := slices.Clone(t.rowPtr[:m.nc])
	for i := range m.n {
		for p := m.rowPtr[i]; p < m.rowPtr[i+1]; p++ {
			j := m.col[p]
			t.col[next[j]] = int32(i)
			t.val[next[j]] = m.val[p]
			next[j]++
		}
	}
	return t
}

// mul returns m·x for a dense x with m.nc rows. Rows are split across
// goroutines; each output row is summed in a fixed order, so the result
// does not depend on scheduling.
func (m *csr) mul(x blas64.General) blas64.General {
	out := blas64.General{Rows: m.n, Cols: x.Cols, Stride: x.Cols, Data: make([]float64, m.n*x.Cols)}
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	chunk := (m.n + workers - 1) / workers
	for w := range workers {
		lo, hi := w*chunk, min((w+1)*chunk, m.n)
		if lo >= hi {
			break
		}
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				dst := out.Data[i*out.Stride : i*out.Stride+out.Cols]
				for p := m.rowPtr[i]; p < m.rowPtr[i+1]; p++ {
					v := m.val[p]
					src := x.Data[int(m.col[p])*x.Stride : int(m.col[p])*x.Stride+x.Cols]
					for k, s := range src {
						dst[k] += v * s
					}
				}
			}
		})
	}
	wg.Wait()
	return out
}

// orth returns an orthonormal basis of y's columns (thin QR).
func orth(y blas64.General) blas64.General {
	k := min(y.Rows, y.Cols)
	tau := make([]float64, k)
	work := []float64{0}
	lapack64.Geqrf(y, tau, work, -1)
	work = make([]float64, int(work[0]))
	lapack64.Geqrf(y, tau, work, len(work))
	q := blas64.General{Rows: y.Rows, Cols: k, Stride: y.Stride, Data: y.Data}
	work = []float64{0}
	lapack64.Orgqr(q, tau, work, -1)
	work = make([]float64, int(work[0]))
	lapack64.Orgqr(q, tau, work, len(work))
	if k == y.Cols {
		return q
	}
	out := blas64.General{Rows: y.Rows, Cols: k, Stride: k, Data: make([]float64, y.Rows*k)}
	for i := range y.Rows {
		copy(out.Data[i*k:(i+1)*k], y.Data[i*y.Stride:i*y.Stride+k])
	}
	return out
}

// truncatedSVD returns the word vectors U_k·Σ_k^eigPower of a (row-major,
// a.n×dim, columns beyond the rank left zero), found by a randomized range
// finder with a fixed seed and subspace iterations.
func truncatedSVD(ctx context.Context, a *csr, dim int, pr params) ([]float32, error) {
	V := a.n
	k := min(dim, V, a.nc)
	l := min(k+oversample, V, a.nc)
	rng := rand.New(rand.NewPCG(svdSeed1, svdSeed2))
	omega := blas64.General{Rows: a.nc, Cols: l, Stride: l, Data: make([]float64, a.nc*l)}
	for i := range omega.Data {
		omega.Data[i] = rng.NormFloat64()
	}
	at := a.transpose()
	q := orth(a.mul(omega))
	for range pr.powerIters {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("offline: train: %w", err)
		}
		z := orth(at.mul(q))
		q = orth(a.mul(z))
	}
	// Bᵀ = Aᵀ·Q; the eigenvectors of B·Bᵀ = (Bᵀ)ᵀ·Bᵀ are B's left singular vectors.
	bt := at.mul(q)
	c := blas64.General{Rows: q.Cols, Cols: q.Cols, Stride: q.Cols, Data: make([]float64, q.Cols*q.Cols)}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, bt, bt, 0, c)
	for i := range c.Rows { // symmetrize exactly
		for j := i + 1; j < c.Cols; j++ {
			s := (c.Data[i*c.Stride+j] + c.Data[j*c.Stride+i]) / 2
			c.Data[i*c.Stride+j], c.Data[j*c.Stride+i] = s, s
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(mat.NewSymDense(c.Rows, c.Data), true) {
		return nil, fmt.Errorf("offline: train: eigendecomposition failed")
	}
	vals := eig.Values(nil) // ascending
	var ev mat.Dense
	eig.VectorsTo(&ev)
	r := min(k, len(vals))
	// Top r eigenvectors, largest first, scaled by λ^(eigPower/2) = σ^eigPower.
	e := blas64.General{Rows: q.Cols, Cols: r, Stride: r, Data: make([]float64, q.Cols*r)}
	for j := range r {
		src := len(vals) - 1 - j
		scale := math.Pow(math.Max(vals[src], 0), pr.eigPower/2)
		for i := range q.Cols {
			e.Data[i*r+j] = ev.At(i, src) * scale
		}
	}
	u := blas64.General{Rows: V, Cols: r, Stride: r, Data: make([]float64, V*r)}
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, q, e, 0, u)
	// Fix each column's sign: its largest-magnitude entry is positive.
	for j := range r {
		best, bi := 0.0, 0
		for i := range V {
			if x := math.Abs(u.Data[i*r+j]); x > best {
				best, bi = x, i
			}
		}
		if u.Data[bi*r+j] < 0 {
			for i := range V {
				u.Data[i*r+j] = -u.Data[i*r+j]
			}
		}
	}
	vecs := make([]float32, V*dim)
	for i := range V {
		row := vecs[i*dim : (i+1)*dim]
		for j := range r {
			row[j] = float32(u.Data[i*r+j])
		}
		if pr.rowNorm {
			search.Normalize(row)
		}
	}
	return vecs, nil
}

// principalComponents returns the first n principal components
// (uncentred, as in SIF) of the pooled vectors of up to maxPCDocs
// documents, found by power iteration from a fixed start with deflation,
// row-major n×m.sdim().
func principalComponents(m *model, docs [][]int32, n int) []float32 {
	dim := m.sdim()
	var rows [][]float64
	for d, ids := range docs {
		if d >= maxPCDocs {
			break
		}
		if len(ids) == 0 {
			continue
		}
		v := make([]float64, dim)
		for _, i := range ids {
			w := float64(m.weights[i])
			for k, x := range m.vecs[int(i)*dim : int(i+1)*dim] {
				v[k] += w * float64(x)
			}
		}
		inv := 1 / float64(len(ids))
		for k := range v {
			v[k] *= inv
		}
		rows = append(rows, v)
	}
	pcs := make([]float32, n*dim)
	if len(rows) < 2 {
		return pcs
	}
	for c := range n {
		u := make([]float64, dim)
		for k := range u {
			u[k] = 1 / math.Sqrt(float64(dim))
		}
		next := make([]float64, dim)
		for range pcIters {
			clear(next)
			for _, r := range rows {
				var d float64
				for k := range r {
					d += r[k] * u[k]
				}
				for k := range r {
					next[k] += d * r[k]
				}
			}
			var s float64
			for _, x := range next {
				s += x * x
			}
			if s == 0 {
				return pcs
			}
			s = 1 / math.Sqrt(s)
			for k := range next {
				u[k] = next[k] * s
			}
		}
		for k := range u {
			pcs[c*dim+k] = float32(u[k])
		}
		// Deflate: remove this component from every row.
		for _, r := range rows {
			var d float64
			for k := range r {
				d += r[k] * u[k]
			}
			for k := range r {
				r[k] -= d * u[k]
			}
		}
	}
	return pcs
}
