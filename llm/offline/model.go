package offline

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/docent-hq/docent/search"
)

// modelMagic and modelVersion head every persisted model; a version bump
// (a change in training or embedding) makes old files load as absent.
const (
	modelMagic   = "DOCENTOE"
	modelVersion = 2
)

// stats is an analyzed corpus: every text as term IDs, and how often each
// term occurs.
type stats struct {
	docs   int
	tokens int64
	words  []string         // term ID -> term, in order of first occurrence
	ids    map[string]int32 // term -> term ID
	counts []int64          // occurrences by term ID
	texts  [][]int32        // per text, its terms' IDs in text order
}

// count returns how often term t occurs in the corpus.
func (st *stats) count(t string) int64 {
	if i, ok := st.ids[t]; ok {
		return st.counts[i]
	}
	return 0
}

// collect analyzes every text of corpus (on GOMAXPROCS goroutines), then
// numbers the terms in order of first occurrence.
func collect(corpus []string) stats {
	analyzed := make([][]string, len(corpus))
	inBlocks(len(corpus), 64, func() func(lo, hi int) {
		return func(lo, hi int) {
			for i := lo; i < hi; i++ {
				analyzed[i] = search.Analyze(corpus[i])
			}
		}
	})
	st := stats{docs: len(corpus), ids: map[string]int32{}, texts: make([][]int32, len(corpus))}
	for i, terms := range analyzed {
		ids := make([]int32, len(terms))
		for j, w := range terms {
			id, ok := st.ids[w]
			if !ok {
				id = int32(len(st.words))
				st.ids[w] = id
				st.words = append(st.words, w)
				st.counts = append(st.counts, 0)
			}
			st.counts[id]++
			ids[j] = id
		}
		st.texts[i] = ids
		st.tokens += int64(len(ids))
		analyzed[i] = nil
	}
	return st
}

// model is a trained embedding model.
type model struct {
	dim     int
	triDims int // trailing dims holding hashed character trigrams
	docs    int
	tokens  int64
	terms   []string // most frequent first, ties by term
	counts  []int64
	df      []int64   // document frequency per term
	vecs    []float32 // len(terms)*sdim(), word vectors
	pcs     []float32 // principal components of the pooled doc vectors, row-major npc×sdim()
	sifA    float64   // SIF a
	idfPool bool      // pool with IDF weights rather than SIF

	index   map[string]int32
	weights []float32 // pooling weight per term
	unknown float32   // pooling weight of a term outside the vocabulary
	name    string
}

// sifA is the SIF smoothing constant a in a/(a+p(w)).
const sifA = 1e-3

// triScale is the weight of the trigram block against the word-vector block.
const triScale = 0.5

// sdim is the length of the word-vector (SVD) block.
func (m *model) sdim() int { return m.dim - m.triDims }

// setWeights derives the pooling weight of every term.
func (m *model) setWeights() {
	m.weights = make([]float32, len(m.terms))
	n := float64(max(1, m.docs))
	for i := range m.terms {
		if m.idfPool {
			df := float64(m.df[i])
			m.weights[i] = float32(math.Log(1 + (n-df+0.5)/(df+0.5)))
			continue
		}
		p := float64(m.counts[i]) / math.Max(1, float64(m.tokens))
		m.weights[i] = float32(m.sifA / (m.sifA + p))
	}
	m.unknown = 1
	if m.idfPool {
		m.unknown = float32(math.Log(1 + (n+0.5)/0.5))
	}
}

// finish derives the lookup index, pooling weights and name, and returns
// the encoding: raw when the model was decoded from it, otherwise
// encode's. The model does not keep it (it is as large as the vectors).
func (m *model) finish(raw []byte) []byte {
	m.index = make(map[string]int32, len(m.terms))
	for i, t := range m.terms {
		m.index[t] = int32(i)
	}
	m.setWeights()
	if raw == nil {
		raw = m.encode()
	}
	sum := sha256.Sum256(raw)
	m.name = fmt.Sprintf("offline-ppmi-svd-%d@%s", m.dim, hex.EncodeToString(sum[:4]))
	return raw
}

// embed pools the word vectors of terms, removes the principal
// components and normalizes; with a trigram block, hashed character
// trigrams of every term (known or not) fill the trailing dims. Unknown
// terms are otherwise skipped.
func (m *model) embed(terms []string) []float32 {
	v := make([]float32, m.dim)
	sd := m.sdim()
	n := 0
	for _, t := range terms {
		i, ok := m.index[t]
		if !ok {
			continue
		}
		n++
		w := m.weights[i]
		row := m.vecs[int(i)*sd : int(i+1)*sd]
		for k, x := range row {
			v[k] += w * x
		}
	}
	if n > 0 {
		for c := 0; c+sd <= len(m.pcs); c += sd {
			removePC(v[:sd], m.pcs[c:c+sd])
		}
		search.Normalize(v[:sd])
	}
	if m.triDims > 0 {
		tri := v[sd:]
		for _, t := range terms {
			w := m.unknown
			if i, ok := m.index[t]; ok {
				w = m.weights[i]
			}
			g := "<" + t + ">"
			for j := 0; j+3 <= len(g); j++ {
				addHashed(tri, g[j:j+3], w)
			}
		}
		search.Normalize(tri)
		for k := range tri {
			tri[k] *= triScale
		}
	}
	search.Normalize(v)
	return v
}

// drift measures how far st is from the corpus m was trained on: the
// relative change in document count, and the total variation distance
// between the unigram distributions over m's vocabulary (other terms pooled
// into one bucket).
func (m *model) drift(st stats) (docDrift, massDrift float64) {
	docDrift = math.Abs(float64(st.docs-m.docs)) / math.Max(1, float64(m.docs))
	if st.tokens == 0 || m.tokens == 0 {
		return docDrift, 1
	}
	var oldIn, newIn, diff float64
	for i, t := range m.terms {
		po := float64(m.counts[i]) / float64(m.tokens)
		pn := float64(st.count(t)) / float64(st.tokens)
		oldIn += po
		newIn += pn
		diff += math.Abs(po - pn)
	}
	diff += math.Abs((1 - oldIn) - (1 - newIn))
	return docDrift, diff / 2
}

// encode serializes the model: magic, version, dim, docs, tokens, vocabulary
// size, then each term (uint16 length, bytes, int64 count), the word
// vectors and the principal component, all little-endian.
func (m *model) encode() []byte {
	var b bytes.Buffer
	b.WriteString(modelMagic)
	le := binary.LittleEndian
	var tmp [8]byte
	put32 := func(x uint32) { le.PutUint32(tmp[:4], x); b.Write(tmp[:4]) }
	put64 := func(x uint64) { le.PutUint64(tmp[:], x); b.Write(tmp[:]) }
	put32(modelVersion)
	put32(uint32(m.dim))
	put64(uint64(m.docs))
	put64(uint64(m.tokens))
	put32(uint32(len(m.terms)))
	put32(uint32(m.triDims))
	put32(uint32(len(m.pcs) / max(1, m.sdim())))
	put64(math.Float64bits(m.sifA))
	pool := uint32(0)
	if m.idfPool {
		pool = 1
	}
	put32(pool)
	for i, t := range m.terms {
		le.PutUint16(tmp[:2], uint16(len(t)))
		b.Write(tmp[:2])
		b.WriteString(t)
		put64(uint64(m.counts[i]))
		put64(uint64(m.df[i]))
	}
	for _, x := range m.vecs {
		put32(math.Float32bits(x))
	}
	for _, x := range m.pcs {
		put32(math.Float32bits(x))
	}
	return b.Bytes()
}

// errCorrupt reports a model file that does not decode.
var errCorrupt = errors.New("offline: corrupt model")

// decodeModel parses what encode wrote.
func decodeModel(raw []byte) (*model, error) {
	le := binary.LittleEndian
	p := raw
	need := func(n int) bool { return len(p) >= n }
	if !need(len(modelMagic)) || string(p[:len(modelMagic)]) != modelMagic {
		return nil, errCorrupt
	}
	p = p[len(modelMagic):]
	if !need(4 + 4 + 8 + 8 + 4 + 4 + 4 + 8 + 4) {
		return nil, errCorrupt
	}
	if v := le.Uint32(p); v != modelVersion {
		return nil, fmt.Errorf("offline: model version %d, want %d", v, modelVersion)
	}
	m := &model{}
	m.dim = int(le.Uint32(p[4:]))
	m.docs = int(le.Uint64(p[8:]))
	m.tokens = int64(le.Uint64(p[16:]))
	n := int(le.Uint32(p[24:]))
	m.triDims = int(le.Uint32(p[28:]))
	npc := int(le.Uint32(p[32:]))
	m.sifA = math.Float64frombits(le.Uint64(p[36:]))
	m.idfPool = le.Uint32(p[44:]) == 1
	p = p[48:]
	if m.dim <= 0 || m.dim > 1<<16 || n < 0 || n > len(p) || m.triDims < 0 || m.triDims >= m.dim || npc < 0 || npc > m.dim {
		return nil, errCorrupt
	}
	m.terms = make([]string, n)
	m.counts = make([]int64, n)
	m.df = make([]int64, n)
	for i := range n {
		if !need(2) {
			return nil, errCorrupt
		}
		l := int(le.Uint16(p))
		p = p[2:]
		if !need(l + 16) {
			return nil, errCorrupt
		}
		m.terms[i] = string(p[:l])
		m.counts[i] = int64(le.Uint64(p[l:]))
		m.df[i] = int64(le.Uint64(p[l+8:]))
		p = p[l+16:]
	}
	sd := m.sdim()
	floats := n*sd + npc*sd
	if len(p) != 4*floats {
		return nil, errCorrupt
	}
	f := make([]float32, floats)
	for i := range f {
		f[i] = math.Float32frombits(le.Uint32(p[4*i:]))
	}
	m.vecs, m.pcs = f[:n*sd], f[n*sd:]
	m.finish(raw)
	return m, nil
}

// writeAtomic writes b to path through a temporary file in the same
// directory and a rename, so readers see the old file or the new one.
func writeAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("offline: save model: %w", err)
	}
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("offline: save model: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("offline: save model: %w", err)
	}
	return nil
}

// removePC subtracts v's projection on the unit vector pc.
func removePC(v, pc []float32) {
	var d float32
	for k := range v {
		d += v[k] * pc[k]
	}
	for k := range v {
		v[k] -= d * pc[k]
	}
}
