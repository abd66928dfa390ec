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

// defaultParams won the SciFact train sweep (a research harness since
// retired; see docs/retrieval.md): the
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
// small to be worth one. The model is not finished (see model.finish).
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
	var db *docBlock
	if pr.docMix > 0 {
		db = newDocBlock(docs, df, V, pr.docMix)
	}
	a := assemble(ppmiRows(docs, V, o.Window, pr), V, db)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("offline: train: %w", err)
	}
	sd := o.Dim - pr.triDims
	vecs, err := truncatedSVD(ctx, a, sd, pr)
	if err != nil {
		return nil, err
	}
	// The matrices are garbage now, several times the model's size: collect
	// them before pooling and encoding allocate more.
	runtime.GC()
	m := &model{dim: o.Dim, triDims: pr.triDims, docs: st.docs, tokens: st.tokens, terms: terms, counts: counts, df: df,
		vecs: vecs, sifA: pr.sifA, idfPool: pr.idfPool}
	// Pooling weights are needed for the principal components; the
	// caller's finish derives them again with the rest.
	m.index = index
	m.setWeights()
	m.pcs = principalComponents(m, docs, pr.npc)
	return m, nil
}

// csr is a sparse matrix in compressed sparse row form. Values are
// float32 (PPMI and tf-idf need no more), which saves a third of the
// memory the SVD's two copies (A and Aᵀ) take; products accumulate in
// float64.
type csr struct {
	n      int // rows
	nc     int // columns
	rowPtr []int
	col    []int32
	val    []float32
}

// ppmi counts co-occurrences within window (weighted window-d+1 for
// distance d, or 1/d when harmonic) and returns the positive PMI matrix
// with context distribution smoothing, shifted by log(shift).
func ppmi(docs [][]int32, V, window int, pr params) *csr {
	return assemble(ppmiRows(docs, V, window, pr), V, nil)
}

// rowBlock holds the entries of rows lo..hi-1 of a sparse matrix, in row
// order: ptr[i] entries for row lo+i.
type rowBlock struct {
	lo, hi int
	ptr    []int
	col    []int32
	val    []float32
}

// ppmiRows returns ppmi's matrix as row blocks.
//
// It works row by row: the texts are laid end to end with window empty
// slots between them, each term's positions are listed, and a row is the
// weighted count of what surrounds its term's positions. Rows are
// independent, so they are built in parallel, each in a fixed order: the
// result does not depend on scheduling.
func ppmiRows(docs [][]int32, V, window int, pr params) []rowBlock {
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

	const block = 64
	blocks := make([]rowBlock, (V+block-1)/block)
	inBlocks(V, block, func() func(lo, hi int) {
		acc := make([]float64, V)
		var touched []int32
		return func(lo, hi int) {
			r := rowBlock{lo: lo, hi: hi}
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
					r.val = append(r.val, float32(pmi))
					r.ptr[w-r.lo]++
				}
			}
			blocks[lo/block] = r
		}
	})
	return blocks
}

// inBlocks splits [0, n) into blocks of size block and hands them out in
// order to GOMAXPROCS goroutines, each running the function newWorker
// returned for it (which may keep scratch state) on one block at a time.
// The work must not depend on which goroutine runs a block.
func inBlocks(n, block int, newWorker func() func(lo, hi int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		work := newWorker()
		wg.Go(func() {
			for {
				lo := int(next.Add(int64(block))) - block
				if lo >= n {
					return
				}
				work(lo, min(lo+block, n))
			}
		})
	}
	wg.Wait()
}

// docBlock is the term × document matrix X with (1+ln tf)·idf entries,
// as postings per term.
type docBlock struct {
	docs  int
	mix   float64     // X is scaled to mix times the PPMI block's norm
	norm2 float64     // ‖X‖², unscaled
	posts [][]docPost // by term
}

type docPost struct {
	doc int32
	v   float64
}

func newDocBlock(docs [][]int32, df []int64, V int, mix float64) *docBlock {
	D := len(docs)
	db := &docBlock{docs: D, mix: mix, posts: make([][]docPost, V)}
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
			v := (1 + math.Log(float64(tf[i]))) * idf
			db.posts[i] = append(db.posts[i], docPost{int32(d), v})
			db.norm2 += v * v
		}
	}
	return db
}

// assemble concatenates the row blocks of a V-column matrix A into one
// csr, as [A | s·X] when db is set: X's columns follow A's, scaled so that
// ‖s·X‖ = db.mix·‖A‖.
func assemble(blocks []rowBlock, V int, db *docBlock) *csr {
	m := &csr{n: V, nc: V, rowPtr: make([]int, V+1)}
	nnz := 0
	var na float64
	for _, r := range blocks {
		nnz += len(r.col)
		for _, v := range r.val {
			na += float64(v) * float64(v)
		}
	}
	s := 0.0
	if db != nil {
		m.nc += db.docs
		for _, ps := range db.posts {
			nnz += len(ps)
		}
		if db.norm2 > 0 {
			s = db.mix * math.Sqrt(na/db.norm2)
		}
	}
	m.col = make([]int32, 0, nnz)
	m.val = make([]float32, 0, nnz)
	for _, r := range blocks {
		p := 0
		for w := r.lo; w < r.hi; w++ {
			n := r.ptr[w-r.lo]
			m.col = append(m.col, r.col[p:p+n]...)
			m.val = append(m.val, r.val[p:p+n]...)
			p += n
			if db != nil {
				for _, dp := range db.posts[w] {
					m.col = append(m.col, int32(V)+dp.doc)
					m.val = append(m.val, float32(s*dp.v))
				}
			}
			m.rowPtr[w+1] = len(m.col)
		}
	}
	return m
}

// transpose returns mᵀ.
func (m *csr) transpose() *csr {
	t := &csr{n: m.nc, nc: m.n, rowPtr: make([]int, m.nc+1), col: make([]int32, len(m.col)), val: make([]float32, len(m.val))}
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

// mulInto sets out = m·x for a dense x with m.nc rows; out has m.n rows
// and x's columns. Rows are handed out to goroutines in blocks; each
// output row is summed in a fixed order (see mulRows), so the result does
// not depend on scheduling.
func (m *csr) mulInto(out, x blas64.General) {
	inBlocks(m.n, 64, func() func(lo, hi int) {
		return func(lo, hi int) {
			m.mulRows(lo, hi, out.Data[lo*out.Stride:], out.Stride, x)
		}
	})
}

// mulRows sets rows lo..hi-1 of m·x into dst, one row every stride
// values from dst[0]. Each row is summed in a fixed order, four stored
// entries at a time.
func (m *csr) mulRows(lo, hi int, dst []float64, stride int, x blas64.General) {
	l := x.Cols
	for i := lo; i < hi; i++ {
		row := dst[(i-lo)*stride:][:l]
		clear(row)
		p, end := m.rowPtr[i], m.rowPtr[i+1]
		for ; p+4 <= end; p += 4 {
			v0, v1, v2, v3 := float64(m.val[p]), float64(m.val[p+1]), float64(m.val[p+2]), float64(m.val[p+3])
			s0 := x.Data[int(m.col[p])*x.Stride:][:l]
			s1 := x.Data[int(m.col[p+1])*x.Stride:][:l]
			s2 := x.Data[int(m.col[p+2])*x.Stride:][:l]
			s3 := x.Data[int(m.col[p+3])*x.Stride:][:l]
			for k := range row {
				row[k] += v0*s0[k] + v1*s1[k] + v2*s2[k] + v3*s3[k]
			}
		}
		for ; p < end; p++ {
			v := float64(m.val[p])
			src := x.Data[int(m.col[p])*x.Stride:][:l]
			for k := range row {
				row[k] += v * src[k]
			}
		}
	}
}

// dense returns a rows×cols matrix, reusing buf's storage when it is big
// enough.
func dense(buf []float64, rows, cols int) blas64.General {
	if cap(buf) < rows*cols {
		buf = make([]float64, rows*cols)
	}
	return blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: buf[:rows*cols]}
}

// Blocking of gramOf: rows are summed gramChunk at a time, within
// gramStripes fixed stripes of the rows whose partial sums are added in
// stripe order, so the result depends neither on GOMAXPROCS nor on
// scheduling.
const (
	gramChunk   = 256
	gramStripes = 8
)

// gramOf returns ZᵀZ, exactly symmetric, for the n×l matrix Z whose rows
// lo..hi-1 the function newFill returns (one per goroutine, so it may
// keep scratch state) writes row-major into dst. Z is never held whole:
// a chunk of its rows is transposed into a scratch block and the upper
// triangle summed as dot products of the block's rows (gonum's assembly
// kernel), about half the work of a general product.
func gramOf(n, l int, newFill func() func(lo, hi int, dst []float64)) blas64.General {
	parts := make([][]float64, gramStripes)
	inBlocks(gramStripes, 1, func() func(lo, hi int) {
		fill := newFill()
		rows := make([]float64, gramChunk*l)
		t := make([]float64, l*gramChunk)
		impl := blas64.Implementation()
		return func(s, _ int) {
			part := make([]float64, l*l)
			for lo := s * n / gramStripes; lo < (s+1)*n/gramStripes; lo += gramChunk {
				hi := min(lo+gramChunk, (s+1)*n/gramStripes)
				c := hi - lo
				fill(lo, hi, rows)
				for r := range c {
					for k, v := range rows[r*l : (r+1)*l] {
						t[k*c+r] = v
					}
				}
				for i := range l {
					ti := t[i*c : (i+1)*c]
					gi := part[i*l:]
					for j := i; j < l; j++ {
						gi[j] += impl.Ddot(c, ti, 1, t[j*c:(j+1)*c], 1)
					}
				}
			}
			parts[s] = part
		}
	})
	g := dense(parts[0], l, l)
	for _, part := range parts[1:] {
		for i := range l {
			for j := i; j < l; j++ {
				g.Data[i*l+j] += part[i*l+j]
			}
		}
	}
	for i := range l {
		for j := i + 1; j < l; j++ {
			g.Data[j*l+i] = g.Data[i*l+j]
		}
	}
	return g
}

// gram returns yᵀy, exactly symmetric.
func gram(y blas64.General) blas64.General {
	return gramOf(y.Rows, y.Cols, func() func(lo, hi int, dst []float64) {
		return func(lo, hi int, dst []float64) {
			for i := lo; i < hi; i++ {
				copy(dst[(i-lo)*y.Cols:(i-lo+1)*y.Cols], y.Data[i*y.Stride:])
			}
		}
	})
}

// normalizeColumns scales every non-zero column of y to unit length; it
// keeps repeated products with A in range without changing their span.
func normalizeColumns(y blas64.General) {
	norms := make([]float64, y.Cols)
	for i := range y.Rows {
		for j, v := range y.Data[i*y.Stride:][:y.Cols] {
			norms[j] += v * v
		}
	}
	for j, n := range norms {
		if n > 0 {
			norms[j] = 1 / math.Sqrt(n)
		}
	}
	for i := range y.Rows {
		row := y.Data[i*y.Stride:][:y.Cols]
		for j := range row {
			row[j] *= norms[j]
		}
	}
}

// truncatedSVD returns the word vectors U_k·Σ_k^eigPower of a (row-major,
// a.n×dim, columns beyond the rank left zero): the top left singular
// vectors of a, found by a randomized range finder with a fixed seed.
//
// The range is Y = (A·Aᵀ)^q·A·Ω for a Gaussian Ω with oversampled
// columns, q = powerIters; only Y's span matters, so its columns are
// rescaled between products rather than orthonormalized. The singular
// vectors come from a Rayleigh–Ritz step that needs no orthonormal basis
// of Y (see ritz), so the only dense products as tall as Y are YᵀY and
// the final U = Y·X.
func truncatedSVD(ctx context.Context, a *csr, dim int, pr params) ([]float32, error) {
	V := a.n
	k := min(dim, V, a.nc)
	l := min(k+oversample, V, a.nc)
	at := a.transpose()
	// Building A left as much garbage as the dense matrices below take
	// (about 90 MB on SciFact): collect it first, so that they reuse its
	// memory rather than raise the process's peak.
	runtime.GC()
	rng := rand.New(rand.NewPCG(svdSeed1, svdSeed2))
	wide := dense(nil, a.nc, l) // Ω, then Aᵀ·Y
	for i := range wide.Data {
		wide.Data[i] = rng.NormFloat64()
	}
	y := dense(nil, V, l)
	a.mulInto(y, wide)
	for range pr.powerIters {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("offline: train: %w", err)
		}
		normalizeColumns(y)
		at.mulInto(wide, y)
		a.mulInto(y, wide)
	}
	normalizeColumns(y)

	wide = blas64.General{} // Aᵀ·Y: no longer needed
	x, vals, err := ritz(y, at)
	if err != nil {
		return nil, err
	}
	r := min(k, len(vals))
	// Top r Ritz vectors, largest first, scaled by λ^(eigPower/2) = σ^eigPower,
	// as the rows of Eᵀ (r×l).
	et := make([]float64, r*l)
	for j := range r {
		src := len(vals) - 1 - j
		scale := math.Pow(math.Max(vals[src], 0), pr.eigPower/2)
		for i := range l {
			et[j*l+i] = x.At(i, src) * scale
		}
	}
	// U = Y·E, written straight into the word vectors: U[i][j] is row i
	// of Y dotted with row j of Eᵀ (gonum's assembly kernel).
	vecs := make([]float32, V*dim)
	inBlocks(V, 64, func() func(lo, hi int) {
		impl := blas64.Implementation()
		return func(lo, hi int) {
			for i := lo; i < hi; i++ {
				yi := y.Data[i*y.Stride:][:l]
				row := vecs[i*dim:][:r]
				for j := range row {
					row[j] = float32(impl.Ddot(l, yi, 1, et[j*l:(j+1)*l], 1))
				}
			}
		}
	})
	// Fix each column's sign: its largest-magnitude entry is positive.
	for j := range r {
		var best float32
		bi := 0
		for i := range V {
			if x := abs32(vecs[i*dim+j]); x > best {
				best, bi = x, i
			}
		}
		if vecs[bi*dim+j] < 0 {
			for i := range V {
				vecs[i*dim+j] = -vecs[i*dim+j]
			}
		}
	}
	if pr.rowNorm {
		for i := range V {
			search.Normalize(vecs[i*dim : (i+1)*dim])
		}
	}
	return vecs, nil
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// ritz is the Rayleigh–Ritz step of A·Aᵀ on span(y). With G = YᵀY and
// H = (AᵀY)ᵀ(AᵀY), the small generalized eigenproblem H·x = λ·G·x gives
// approximate eigenpairs of A·Aᵀ: eigenvectors Y·x (unit length, since
// xᵀ·G·x = 1) and eigenvalues λ = σ². It returns X (l×l, columns by
// ascending eigenvalue) and the eigenvalues.
//
// Solving through G's Cholesky factor loses about κ(G)·ε of accuracy, so
// it is used only while G is well conditioned, as it is when A's singular
// values decay slowly (σ₁/σₗ ≈ 8 on SciFact: κ(G) ≈ 10⁹). Above
// maxGramCond (a steep spectrum, or a degenerate corpus) y is first
// replaced by an orthonormal basis of its span (Householder QR), and G by
// the identity.
func ritz(y blas64.General, at *csr) (*mat.Dense, []float64, error) {
	l := y.Cols
	g := mat.NewSymDense(l, gram(y).Data)
	var ge mat.EigenSym
	var chol mat.Cholesky
	if !ge.Factorize(g, false) || !wellConditioned(ge.Values(nil)) || !chol.Factorize(g) {
		orthonormalize(y)
		id := mat.NewSymDense(l, nil)
		for i := range l {
			id.SetSym(i, i, 1)
		}
		chol.Factorize(id)
	}
	// H is summed from chunks of AᵀY's rows as they are computed: AᵀY is
	// never held whole.
	hg := gramOf(at.n, l, func() func(lo, hi int, dst []float64) {
		return func(lo, hi int, dst []float64) { at.mulRows(lo, hi, dst, l, y) }
	})
	h := mat.NewDense(l, l, hg.Data)
	// With G = RᵀR, H·x = λ·G·x becomes (R⁻ᵀ·H·R⁻¹)·w = λ·w, x = R⁻¹·w.
	var r mat.TriDense
	chol.UTo(&r)
	var t1, t2 mat.Dense
	if err := t1.Solve(r.T(), h); err != nil { // R⁻ᵀ·H
		return nil, nil, fmt.Errorf("offline: train: rayleigh-ritz: %w", err)
	}
	if err := t2.Solve(r.T(), t1.T()); err != nil { // R⁻ᵀ·(R⁻ᵀ·H)ᵀ = R⁻ᵀ·H·R⁻¹
		return nil, nil, fmt.Errorf("offline: train: rayleigh-ritz: %w", err)
	}
	sym := mat.NewSymDense(l, nil)
	for i := range l {
		for j := i; j < l; j++ {
			sym.SetSym(i, j, (t2.At(i, j)+t2.At(j, i))/2)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, true) {
		return nil, nil, fmt.Errorf("offline: train: eigendecomposition failed")
	}
	var w, x mat.Dense
	eig.VectorsTo(&w)
	if err := x.Solve(&r, &w); err != nil { // R⁻¹·W
		return nil, nil, fmt.Errorf("offline: train: rayleigh-ritz: %w", err)
	}
	return &x, eig.Values(nil), nil
}

// maxGramCond is the largest condition number of YᵀY that ritz solves
// through a Cholesky factor (accurate to about 1e-6).
const maxGramCond = 1e10

// wellConditioned reports whether ascending eigenvalues vals have a
// condition number of at most maxGramCond.
func wellConditioned(vals []float64) bool {
	return len(vals) > 0 && vals[0] > 0 && vals[len(vals)-1] <= maxGramCond*vals[0]
}

// orthonormalize replaces y's columns by an orthonormal basis of their
// span (Householder QR); y must have at least as many rows as columns.
func orthonormalize(y blas64.General) {
	tau := make([]float64, y.Cols)
	work := []float64{0}
	lapack64.Geqrf(y, tau, work, -1)
	work = make([]float64, int(work[0]))
	lapack64.Geqrf(y, tau, work, len(work))
	work = []float64{0}
	lapack64.Orgqr(y, tau, work, -1)
	work = make([]float64, int(work[0]))
	lapack64.Orgqr(y, tau, work, len(work))
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
