package offline

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

var topics = [][]string{
	{"cat", "kitten", "dog", "puppy", "pet", "fur", "veterinarian", "leash", "collar", "paw"},
	{"bank", "loan", "money", "interest", "credit", "mortgage", "deposit", "savings", "account", "payment"},
	{"rocket", "orbit", "launch", "satellite", "astronaut", "spacecraft", "gravity", "moon", "thrust", "planet"},
	{"database", "query", "index", "table", "schema", "transaction", "replica", "backup", "column", "row"},
}

// corpus makes n deterministic documents, each about one topic (cycling
// through the topics), plus a few shared filler words.
func corpus(n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 7))
	filler := []string{"report", "team", "update", "note", "weekly"}
	docs := make([]string, n)
	for i := range docs {
		topic := topics[i%len(topics)]
		var words []string
		for range 30 {
			if rng.IntN(5) == 0 {
				words = append(words, filler[rng.IntN(len(filler))])
			} else {
				words = append(words, topic[rng.IntN(len(topic))])
			}
		}
		docs[i] = strings.Join(words, " ")
	}
	return docs
}

func mustFit(tb testing.TB, e *Embedder, docs []string) bool {
	tb.Helper()
	changed, err := e.Fit(context.Background(), docs)
	if err != nil {
		tb.Fatal(err)
	}
	return changed
}

func mustEmbed(tb testing.TB, e *Embedder, texts ...string) [][]float32 {
	tb.Helper()
	v, err := e.EmbedDocuments(context.Background(), texts)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func TestFitDeterministic(t *testing.T) {
	docs := corpus(80, 1)
	a, b := NewEmbedder(Options{Dim: 32}), NewEmbedder(Options{Dim: 32})
	if !mustFit(t, a, docs) || !mustFit(t, b, docs) {
		t.Fatal("first Fit reported no change")
	}
	if a.Name() != b.Name() {
		t.Fatalf("names differ: %s vs %s", a.Name(), b.Name())
	}
	if !strings.HasPrefix(a.Name(), "offline-ppmi-svd-32@") {
		t.Fatalf("name %q", a.Name())
	}
	texts := []string{"the kitten and the puppy", "mortgage interest rates", docs[3]}
	va, vb := mustEmbed(t, a, texts...), mustEmbed(t, b, texts...)
	for i := range va {
		if !slices.Equal(va[i], vb[i]) {
			t.Errorf("text %d: vectors differ", i)
		}
	}
}

func TestNormalizedAndEmpty(t *testing.T) {
	trained := NewEmbedder(Options{Dim: 32})
	mustFit(t, trained, corpus(80, 1))
	for _, tc := range []struct {
		name string
		e    *Embedder
	}{
		{"fallback", NewEmbedder(Options{Dim: 32})},
		{"trained", trained},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := mustEmbed(t, tc.e, "a rocket launch into orbit", "", "the and of", "loan")
			for i, v := range vs {
				if len(v) != 32 {
					t.Fatalf("text %d: dim %d", i, len(v))
				}
			}
			for _, i := range []int{0, 3} {
				if n := norm(vs[i]); math.Abs(n-1) > 1e-5 {
					t.Errorf("text %d: norm %v, want 1", i, n)
				}
			}
			for _, i := range []int{1, 2} { // empty, stopwords only
				if n := norm(vs[i]); n != 0 {
					t.Errorf("text %d: norm %v, want 0", i, n)
				}
			}
		})
	}
}

func TestTrainedModelGroupsTopics(t *testing.T) {
	e := NewEmbedder(Options{Dim: 32})
	mustFit(t, e, corpus(200, 3))
	// Queries share no term with the documents they should match best.
	vs := mustEmbed(t, e, "kitten leash", "dog collar paw", "credit deposit", "bank savings account")
	pets1, pets2, money1, money2 := vs[0], vs[1], vs[2], vs[3]
	if same, cross := dot(pets1, pets2), dot(pets1, money2); same <= cross {
		t.Errorf("pets·pets %.3f <= pets·money %.3f", same, cross)
	}
	if same, cross := dot(money1, money2), dot(money1, pets2); same <= cross {
		t.Errorf("money·money %.3f <= money·pets %.3f", same, cross)
	}
}

func TestPersistenceRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "model.bin")
	docs := corpus(80, 1)
	a := NewEmbedder(Options{Dim: 32, ModelPath: path})
	fallback := a.Name()
	mustFit(t, a, docs)
	if a.Name() == fallback || !a.Trained() {
		t.Fatalf("name after Fit %q (fallback %q)", a.Name(), fallback)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "model.bin" {
		t.Fatalf("model dir holds %v, want only model.bin", entries)
	}
	b := NewEmbedder(Options{Dim: 32, ModelPath: path})
	if b.Name() != a.Name() {
		t.Fatalf("reloaded name %q, want %q", b.Name(), a.Name())
	}
	va, vb := mustEmbed(t, a, "satellite orbit"), mustEmbed(t, b, "satellite orbit")
	if !slices.Equal(va[0], vb[0]) {
		t.Fatal("reloaded model embeds differently")
	}
	if mustFit(t, b, docs) {
		t.Fatal("Fit on the trained corpus after reload reported a change")
	}

	t.Run("other dimension ignored", func(t *testing.T) {
		c := NewEmbedder(Options{Dim: 64, ModelPath: path})
		if c.Trained() {
			t.Fatal("loaded a 32-d model as 64-d")
		}
	})
	t.Run("corrupt file ignored", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.bin")
		raw, _ := os.ReadFile(path)
		if err := os.WriteFile(bad, raw[:len(raw)/2], 0o644); err != nil {
			t.Fatal(err)
		}
		c := NewEmbedder(Options{Dim: 32, ModelPath: bad})
		if c.Trained() || c.Name() != fallback {
			t.Fatalf("corrupt model loaded as %q", c.Name())
		}
	})
}

// TestReloadFollowsAnotherProcess: an embedder over the model file
// another embedder trains (a reader beside the syncing server) keeps its
// model until Reload, which then takes the new one and embeds as it does.
func TestReloadFollowsAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.bin")
	writer := NewEmbedder(Options{Dim: 32, ModelPath: path})
	reader := NewEmbedder(Options{Dim: 32, ModelPath: path})
	if reader.Reload() {
		t.Fatal("Reload with no model file reported a change")
	}
	mustFit(t, writer, corpus(80, 1))
	if reader.Trained() {
		t.Fatal("the reader took the new model before Reload")
	}
	if !reader.Reload() || reader.Name() != writer.Name() {
		t.Fatalf("after Reload the reader is %q, want %q", reader.Name(), writer.Name())
	}
	if reader.Reload() {
		t.Error("a second Reload of the same model reported a change")
	}
	// A retrain on a drifted corpus replaces the file; Reload follows.
	mustFit(t, writer, append(corpus(80, 1), repeat(strings.Repeat("glacier fjord tundra permafrost iceberg ", 6), 80)...))
	if !reader.Reload() || reader.Name() != writer.Name() {
		t.Fatalf("after the retrain the reader is %q, want %q", reader.Name(), writer.Name())
	}
	if a, b := mustEmbed(t, writer, "satellite orbit"), mustEmbed(t, reader, "satellite orbit"); !slices.Equal(a[0], b[0]) {
		t.Error("the reloaded model embeds differently from the one trained")
	}
}

func TestFitChangeRule(t *testing.T) {
	base := corpus(100, 1)
	for _, tc := range []struct {
		name    string
		next    []string
		changed bool
	}{
		{"same corpus", base, false},
		{"a few documents added", append(slices.Clone(base), corpus(8, 2)...), false},
		{"a few documents removed", base[:90], false},
		{"doc count grew by half", append(slices.Clone(base), corpus(50, 2)...), true},
		{"half the documents replaced by a new topic", append(slices.Clone(base[:50]), repeat(strings.Repeat("glacier fjord tundra permafrost iceberg ", 6), 50)...), true},
		{"empty corpus", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEmbedder(Options{Dim: 32})
			mustFit(t, e, base)
			before := e.Name()
			changed := mustFit(t, e, tc.next)
			if changed != tc.changed {
				t.Fatalf("changed = %v, want %v", changed, tc.changed)
			}
			if (e.Name() != before) != tc.changed {
				t.Fatalf("name %q -> %q with changed = %v", before, e.Name(), changed)
			}
		})
	}
}

func TestFitTinyCorpusKeepsFallback(t *testing.T) {
	e := NewEmbedder(Options{Dim: 32})
	if mustFit(t, e, []string{"one two three", "one two"}) {
		t.Fatal("Fit on a two-term vocabulary reported a change")
	}
	if e.Trained() {
		t.Fatal("trained on a two-term vocabulary")
	}
}

func TestEmbedCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewEmbedder(Options{}).EmbedDocuments(ctx, []string{"x"}); err == nil {
		t.Fatal("Embed with a cancelled context succeeded")
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestTrainVariants(t *testing.T) {
	docs := corpus(120, 5)
	for _, tc := range []struct {
		name string
		set  func(p *params)
	}{
		{"default", func(p *params) {}},
		{"sif pooling, no doc block", func(p *params) { p.idfPool = false; p.docMix = 0 }},
		{"harmonic shifted", func(p *params) { p.harmonic = true; p.shift = 2 }},
		{"two components", func(p *params) { p.npc = 2 }},
		{"trigram block", func(p *params) { p.triDims = 8 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "model.bin")
			a, b := NewEmbedder(Options{Dim: 32, ModelPath: path}), NewEmbedder(Options{Dim: 32})
			tc.set(&a.pr)
			tc.set(&b.pr)
			mustFit(t, a, docs)
			mustFit(t, b, docs)
			if a.Name() != b.Name() {
				t.Fatalf("same corpus, names %q and %q", a.Name(), b.Name())
			}
			c := NewEmbedder(Options{Dim: 32, ModelPath: path})
			if c.Name() != a.Name() {
				t.Fatalf("reloaded name %q, want %q", c.Name(), a.Name())
			}
			texts := []string{"kitten leash", "credit deposit", "rocket orbit"}
			va, vb, vc := mustEmbed(t, a, texts...), mustEmbed(t, b, texts...), mustEmbed(t, c, texts...)
			for i := range texts {
				if !slices.Equal(va[i], vb[i]) || !slices.Equal(va[i], vc[i]) {
					t.Fatalf("text %d embeds differently across equal models", i)
				}
				if n := norm(va[i]); math.Abs(n-1) > 1e-5 {
					t.Fatalf("text %d: norm %v", i, n)
				}
			}
		})
	}
}

func TestWithDocBlock(t *testing.T) {
	// Two terms, three documents; the PPMI block is the 2×2 identity
	// scaled by 3, in two row blocks.
	a := []rowBlock{
		{lo: 0, hi: 1, ptr: []int{1}, col: []int32{0}, val: []float32{3}},
		{lo: 1, hi: 2, ptr: []int{1}, col: []int32{1}, val: []float32{3}},
	}
	docs := [][]int32{{0, 0, 1}, {1}, {}}
	df := []int64{1, 2}
	got := assemble(a, 2, newDocBlock(docs, df, 2, 2))
	if got.n != 2 || got.nc != 2+3 {
		t.Fatalf("shape %d×%d, want 2×5", got.n, got.nc)
	}
	// Row 0: PPMI entry, then term 0 in doc 0 only; row 1: PPMI, docs 0 and 1.
	if !slices.Equal(got.rowPtr, []int{0, 2, 5}) || !slices.Equal(got.col, []int32{0, 2, 1, 2, 3}) {
		t.Fatalf("structure rowPtr %v col %v", got.rowPtr, got.col)
	}
	var fa, fx float64
	for p, c := range got.col {
		if c < 2 {
			fa += float64(got.val[p]) * float64(got.val[p])
		} else {
			fx += float64(got.val[p]) * float64(got.val[p])
		}
	}
	if r := math.Sqrt(fx / fa); math.Abs(r-2) > 1e-6 {
		t.Errorf("doc block norm ratio %v, want 2", r)
	}
	// Term 0 occurs twice in doc 0: (1+ln 2)·ln(3/1) before scaling; term 1
	// once in docs 0 and 1: ln(3/2) each.
	if r, want := float64(got.val[1]/got.val[3]), (1+math.Log(2))*math.Log(3)/math.Log(1.5); math.Abs(r-want) > 1e-6 {
		t.Errorf("tf-idf ratio %v, want %v", r, want)
	}
}

func TestIDFPoolingWeighsRareTermsMore(t *testing.T) {
	e := NewEmbedder(Options{Dim: 32})
	mustFit(t, e, corpus(80, 1))
	m := e.m
	if !m.idfPool {
		t.Fatal("default model does not pool by IDF")
	}
	common, rare := -1, -1
	for i := range m.terms {
		if common < 0 || m.df[i] > m.df[common] {
			common = i
		}
		if rare < 0 || m.df[i] < m.df[rare] {
			rare = i
		}
	}
	if m.df[rare] >= m.df[common] || m.weights[rare] <= m.weights[common] {
		t.Errorf("df %d weight %v (rare) vs df %d weight %v (common)", m.df[rare], m.weights[rare], m.df[common], m.weights[common])
	}
}

// ppmiReference is the textbook construction ppmi must equal: a map of
// weighted pair counts, both directions, then positive PMI with context
// distribution smoothing.
func ppmiReference(docs [][]int32, V, window int, cds float64) map[[2]int32]float64 {
	pairs := map[[2]int32]float64{}
	for _, ids := range docs {
		for i, w := range ids {
			for d := 1; d <= window && i+d < len(ids); d++ {
				c := ids[i+d]
				pairs[[2]int32{w, c}] += float64(window - d + 1)
				pairs[[2]int32{c, w}] += float64(window - d + 1)
			}
		}
	}
	rowSum := make([]float64, V)
	for k, c := range pairs {
		rowSum[k[0]] += c
	}
	var z float64
	ctxPow := make([]float64, V)
	for j, s := range rowSum {
		ctxPow[j] = math.Pow(s, cds)
		z += ctxPow[j]
	}
	out := map[[2]int32]float64{}
	for k, c := range pairs {
		if pmi := math.Log(c * z / (rowSum[k[0]] * ctxPow[k[1]])); pmi > 0 {
			out[k] = pmi
		}
	}
	return out
}

func TestPPMIMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const V = 40
	docs := make([][]int32, 60)
	for d := range docs {
		docs[d] = make([]int32, rng.IntN(25)) // some texts empty or shorter than the window
		for i := range docs[d] {
			docs[d][i] = int32(rng.IntN(V))
		}
	}
	want := ppmiReference(docs, V, 5, 0.75)
	got := ppmi(docs, V, 5, params{cds: 0.75})
	if got.n != V || got.nc != V || len(got.col) != len(want) {
		t.Fatalf("shape %d×%d with %d entries, want %d×%d with %d", got.n, got.nc, len(got.col), V, V, len(want))
	}
	for i := range V {
		row := got.col[got.rowPtr[i]:got.rowPtr[i+1]]
		if !slices.IsSorted(row) {
			t.Fatalf("row %d columns not sorted: %v", i, row)
		}
		for p := got.rowPtr[i]; p < got.rowPtr[i+1]; p++ {
			w, ok := want[[2]int32{int32(i), got.col[p]}]
			if !ok || math.Abs(w-float64(got.val[p])) > 1e-6*w {
				t.Fatalf("(%d,%d) = %v, want %v (present %v)", i, got.col[p], got.val[p], w, ok)
			}
		}
	}
}

// denseCSR returns a rows×cols csr holding m.
func denseCSR(m [][]float64) *csr {
	a := &csr{n: len(m), nc: len(m[0]), rowPtr: make([]int, len(m)+1)}
	for i, row := range m {
		for j, v := range row {
			if v != 0 {
				a.col = append(a.col, int32(j))
				a.val = append(a.val, float32(v))
			}
		}
		a.rowPtr[i+1] = len(a.col)
	}
	return a
}

// TestTruncatedSVDMatchesDense compares the randomized SVD's word vectors
// with the top left singular vectors from gonum's dense SVD: on a matrix
// whose spectrum decays slowly, as PPMI's does (the Cholesky path), and
// on one that decays steeply and a rank-deficient one (their Gram
// matrices are ill-conditioned or singular: the Householder fallback).
func TestTruncatedSVDMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const rows, cols, k = 60, 80, 8
	// decaying is a sum of 30 random rank-one terms with weights w(r).
	decaying := func(w func(r int) float64) [][]float64 {
		m := make([][]float64, rows)
		for i := range m {
			m[i] = make([]float64, cols)
		}
		for r := range 30 {
			u, v := make([]float64, rows), make([]float64, cols)
			for i := range u {
				u[i] = rng.NormFloat64()
			}
			for j := range v {
				v[j] = rng.NormFloat64()
			}
			for i := range rows {
				for j := range cols {
					m[i][j] += u[i] * v[j] * w(r)
				}
			}
		}
		return m
	}
	slow := decaying(func(r int) float64 { return math.Pow(0.93, float64(r)) })
	steep := decaying(func(r int) float64 { return 1 / float64((r+1)*(r+1)) })
	lowRank := make([][]float64, rows) // rank 3: every row a mix of three
	for i := range lowRank {
		lowRank[i] = make([]float64, cols)
		for j := range cols {
			lowRank[i][j] = float64(i%3+1) * math.Sin(float64(j*(i%3+1)))
		}
	}
	for name, m := range map[string][][]float64{"slow decay": slow, "steep decay": steep, "rank 3": lowRank} {
		t.Run(name, func(t *testing.T) {
			vecs, err := truncatedSVD(context.Background(), denseCSR(m), k, params{powerIters: 2, rowNorm: false})
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range vecs {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("non-finite output %v", x)
				}
			}
			flat := make([]float64, 0, rows*cols)
			for _, row := range m {
				flat = append(flat, row...)
			}
			var svd mat.SVD
			if !svd.Factorize(mat.NewDense(rows, cols, flat), mat.SVDThin) {
				t.Fatal("dense SVD failed")
			}
			var u mat.Dense
			svd.UTo(&u)
			rank := k
			if name == "rank 3" {
				rank = 3
			}
			for j := range rank {
				var dot, norm float64
				for i := range rows {
					x := float64(vecs[i*k+j])
					dot += x * u.At(i, j)
					norm += x * x
				}
				if c := math.Abs(dot) / math.Sqrt(norm); c < 0.999 {
					t.Errorf("singular vector %d: |cos| with the dense SVD's = %.5f", j, c)
				}
			}
		})
	}
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// TestEmbedDocumentsInOrder embeds more texts than one goroutine's share
// and checks each against the same text embedded alone.
func TestEmbedDocumentsInOrder(t *testing.T) {
	docs := corpus(100, 4)
	for _, trained := range []bool{false, true} {
		e := NewEmbedder(Options{Dim: 32})
		if trained {
			mustFit(t, e, docs)
		}
		all := mustEmbed(t, e, docs...)
		for i, d := range docs {
			one, err := e.EmbedQuery(context.Background(), d)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(all[i], one) {
				t.Fatalf("trained %v: text %d embeds differently in a batch", trained, i)
			}
		}
	}
}
