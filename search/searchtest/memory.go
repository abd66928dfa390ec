package searchtest

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// Memory is the reference search.Index: deliberately simple, brute force
// and in memory. Keyword search scores every chunk with textbook BM25
// (k1 1.2, b 0.75) over search.Analyze terms of title, section and text;
// vector search computes the exact cosine against every chunk. It passes
// RunIndexSuite, which shows that the contract assumes nothing of the
// local backend, and it serves tests that need a small real index.
//
// Indexes opened from one MemoryStore under the same name share their
// contents, so the suite's close-and-reopen cases run against it too.
type Memory struct {
	data *memData
}

var _ search.Index = (*Memory)(nil)

type memData struct {
	mu       sync.RWMutex
	chunks   map[string]memChunk // by chunk ID
	dim      int
	embedder string
}

type memChunk struct {
	c     docent.Chunk // with its vector
	terms map[string]int
	n     int // terms in the chunk
}

// MemoryStore holds named Memory indexes.
type MemoryStore struct {
	mu   sync.Mutex
	data map[string]*memData
}

// NewMemoryStore returns an empty store.
func NewMemoryStore() *MemoryStore { return &MemoryStore{data: map[string]*memData{}} }

// Open returns the index called name, empty on first use.
func (s *MemoryStore) Open(name string) *Memory {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.data[name]
	if !ok {
		d = &memData{chunks: map[string]memChunk{}}
		s.data[name] = d
	}
	return &Memory{data: d}
}

// NewMemory returns a fresh, unnamed reference index.
func NewMemory() *Memory { return NewMemoryStore().Open("") }

// Upsert replaces the chunks of every document named in chunks.
func (m *Memory) Upsert(ctx context.Context, chunks []docent.Chunk) error {
	if len(chunks) == 0 {
		return nil
	}
	d := m.data
	d.mu.Lock()
	defer d.mu.Unlock()
	dim := d.dim
	if len(d.chunks) == 0 {
		dim = len(chunks[0].Vector)
	}
	for _, c := range chunks {
		if c.ID == "" || c.DocID == "" {
			return fmt.Errorf("memory: upsert: %w", search.ErrEmptyID)
		}
		if len(c.Vector) == 0 || len(c.Vector) != dim {
			return fmt.Errorf("memory: upsert %s: %w", c.ID, search.ErrDimension)
		}
	}
	docs := map[string]bool{}
	for _, c := range chunks {
		docs[c.DocID] = true
	}
	for id, mc := range d.chunks {
		if docs[mc.c.DocID] {
			delete(d.chunks, id)
		}
	}
	for _, c := range chunks {
		c.Vector = slices.Clone(c.Vector)
		c.Labels = slices.Clone(c.Labels)
		c.Section = slices.Clone(c.Section)
		c.Injection = search.InjectionOf(c)
		mc := memChunk{c: c, terms: map[string]int{}}
		for _, field := range []string{c.Title, fmt.Sprint(c.Section), c.Text} {
			search.AnalyzeFunc(field, func(t string) {
				mc.terms[t]++
				mc.n++
			})
		}
		d.chunks[c.ID] = mc
	}
	d.dim = dim
	return nil
}

// DeleteDocs removes the documents' chunks.
func (m *Memory) DeleteDocs(ctx context.Context, docIDs ...string) error {
	d := m.data
	d.mu.Lock()
	defer d.mu.Unlock()
	for id, mc := range d.chunks {
		if slices.Contains(docIDs, mc.c.DocID) {
			delete(d.chunks, id)
		}
	}
	return nil
}

// KeywordSearch scores every chunk that passes the filter with BM25.
func (m *Memory) KeywordSearch(ctx context.Context, q search.KeywordQuery) ([]docent.Hit, error) {
	d := m.data
	d.mu.RLock()
	defer d.mu.RUnlock()
	terms := map[string]bool{}
	search.AnalyzeFunc(q.Text, func(t string) { terms[t] = true })
	if len(terms) == 0 || len(d.chunks) == 0 {
		return nil, nil
	}
	const k1, b = 1.2, 0.75
	n := float64(len(d.chunks))
	avg := 0.0
	df := map[string]float64{}
	for _, mc := range d.chunks {
		avg += float64(mc.n)
		for t := range terms {
			if mc.terms[t] > 0 {
				df[t]++
			}
		}
	}
	avg /= n
	var hits []docent.Hit
	for _, mc := range d.chunks {
		if !q.Filter.Match(mc.c) {
			continue
		}
		score := 0.0
		for t := range terms {
			tf := float64(mc.terms[t])
			if tf == 0 {
				continue
			}
			idf := math.Log(1 + (n-df[t]+0.5)/(df[t]+0.5))
			score += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*float64(mc.n)/avg))
		}
		if score > 0 {
			hits = append(hits, docent.Hit{Chunk: lean(mc.c), KeywordScore: score})
		}
	}
	return rank(hits, q.K, func(h docent.Hit) float64 { return h.KeywordScore }, func(h *docent.Hit, r int) { h.KeywordRank = r }), nil
}

// VectorSearch computes the cosine of every chunk that passes the filter.
func (m *Memory) VectorSearch(ctx context.Context, q search.VectorQuery) ([]docent.Hit, error) {
	if len(q.Vector) == 0 {
		return nil, fmt.Errorf("memory: vector search: %w", search.ErrNoVector)
	}
	d := m.data
	d.mu.RLock()
	defer d.mu.RUnlock()
	if len(d.chunks) == 0 {
		return nil, nil
	}
	if len(q.Vector) != d.dim {
		return nil, fmt.Errorf("memory: vector search: %w", search.ErrDimension)
	}
	var hits []docent.Hit
	for _, mc := range d.chunks {
		if q.Filter.Match(mc.c) {
			hits = append(hits, docent.Hit{Chunk: lean(mc.c), VectorScore: cosine(q.Vector, mc.c.Vector)})
		}
	}
	return rank(hits, q.K, func(h docent.Hit) float64 { return h.VectorScore }, func(h *docent.Hit, r int) { h.VectorRank = r }), nil
}

// lean is what a hit carries: the chunk's IDs only, as the contract allows.
func lean(c docent.Chunk) docent.Chunk { return docent.Chunk{ID: c.ID, DocID: c.DocID} }

// rank sorts hits by score (ties by chunk ID), cuts them to k and sets ranks.
func rank(hits []docent.Hit, k int, score func(docent.Hit) float64, setRank func(*docent.Hit, int)) []docent.Hit {
	if k <= 0 {
		k = 10
	}
	slices.SortFunc(hits, func(a, b docent.Hit) int {
		return cmp.Or(cmp.Compare(score(b), score(a)), cmp.Compare(a.Chunk.ID, b.Chunk.ID))
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	for i := range hits {
		setRank(&hits[i], i+1)
	}
	return hits
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// Chunks returns the chunks asked for, in order, without vectors.
func (m *Memory) Chunks(ctx context.Context, ids []string) ([]docent.Chunk, error) {
	d := m.data
	d.mu.RLock()
	defer d.mu.RUnlock()
	var out []docent.Chunk
	for _, id := range ids {
		if mc, ok := d.chunks[id]; ok {
			c := mc.c
			c.Vector = nil
			out = append(out, c)
		}
	}
	return out, nil
}

// Vectors returns the stored vectors asked for.
func (m *Memory) Vectors(ctx context.Context, ids []string) (map[string][]float32, error) {
	d := m.data
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := map[string][]float32{}
	for _, id := range ids {
		if mc, ok := d.chunks[id]; ok {
			out[id] = mc.c.Vector
		}
	}
	return out, nil
}

// Facets counts distinct documents per source and label under f.
func (m *Memory) Facets(ctx context.Context, f docent.Filter) (search.Facets, error) {
	d := m.data
	d.mu.RLock()
	defer d.mu.RUnlock()
	sources := map[string]map[string]bool{}
	labels := map[string]map[string]bool{}
	add := func(m map[string]map[string]bool, v, doc string) {
		if m[v] == nil {
			m[v] = map[string]bool{}
		}
		m[v][doc] = true
	}
	for _, mc := range d.chunks {
		if !f.Match(mc.c) {
			continue
		}
		add(sources, mc.c.Source, mc.c.DocID)
		for _, l := range mc.c.Labels {
			add(labels, l, mc.c.DocID)
		}
	}
	return search.Facets{Sources: facetList(sources), Labels: facetList(labels)}, nil
}

func facetList(m map[string]map[string]bool) []search.Facet {
	out := []search.Facet{}
	for v, docs := range m {
		out = append(out, search.Facet{Value: v, Count: len(docs)})
	}
	slices.SortFunc(out, func(a, b search.Facet) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Value, b.Value))
	})
	return out
}

// ChunkIDs lists the chunk IDs of source's documents in Ord order.
func (m *Memory) ChunkIDs(ctx context.Context, source string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, c := range m.sorted(func(c docent.Chunk) bool { return c.Source == source }) {
		out[c.DocID] = append(out[c.DocID], c.ID)
	}
	return out, nil
}

// sorted returns the chunks keep accepts in DocID, Ord, ID order.
func (m *Memory) sorted(keep func(docent.Chunk) bool) []docent.Chunk {
	d := m.data
	d.mu.RLock()
	defer d.mu.RUnlock()
	var out []docent.Chunk
	for _, mc := range d.chunks {
		if keep(mc.c) {
			c := mc.c
			c.Vector = nil
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b docent.Chunk) int {
		return cmp.Or(cmp.Compare(a.DocID, b.DocID), cmp.Compare(a.Ord, b.Ord), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// Count returns the number of chunks.
func (m *Memory) Count(ctx context.Context) (int, error) {
	m.data.mu.RLock()
	defer m.data.mu.RUnlock()
	return len(m.data.chunks), nil
}

// Scan calls fn for every chunk in DocID and Ord order.
func (m *Memory) Scan(ctx context.Context, fn func(docent.Chunk) error) error {
	for _, c := range m.sorted(func(docent.Chunk) bool { return true }) {
		if err := fn(c); err != nil {
			return err
		}
	}
	return nil
}

// EmbedderName returns the recorded embedder, "" when empty.
func (m *Memory) EmbedderName(ctx context.Context) (string, error) {
	m.data.mu.RLock()
	defer m.data.mu.RUnlock()
	if len(m.data.chunks) == 0 {
		return "", nil
	}
	return m.data.embedder, nil
}

// SetEmbedderName records the embedder of the stored vectors.
func (m *Memory) SetEmbedderName(ctx context.Context, name string) error {
	m.data.mu.Lock()
	defer m.data.mu.Unlock()
	m.data.embedder = name
	return nil
}

// Close does nothing: the data stays in its MemoryStore.
func (m *Memory) Close() error { return nil }
