package local

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/internal/topk"
	"github.com/docent-hq/docent/search"
	"github.com/viterin/vek/vek32"
)

// slotMeta is the per-chunk metadata the retrievers filter on and Facets
// counts.
type slotMeta struct {
	id      string
	rowid   int64 // chunks.rowid, the FTS rowid
	doc     int32 // interned document ID
	source  int32 // interned
	space   int32 // interned
	labels  []int32
	updated int64 // unix nanoseconds, 0 when unknown
	// key is the chunk's fold group (see fold.go) when keyed; folded
	// marks a copy of the group's first chunk, which is not searched.
	key    [32]byte
	keyed  bool
	folded bool
	facts  storedFacts // what the Retriever's last stage reads (Facts)
}

// vectorStore keeps every vector in memory in one contiguous slice
// (slot i occupies vecs[i*dim:(i+1)*dim]) with its filter metadata.
// Deletion moves the last slot into the hole, so the slice stays dense.
// It is not safe for concurrent use; Index guards it.
type vectorStore struct {
	dim    int
	vecs   []float32
	meta   []slotMeta
	slotOf map[string]int
	ofRow  map[int64]int // rowid -> slot
	intern map[string]int32
	names  []string              // interned ID -> value
	chunks map[int32]int         // interned document ID -> chunks stored
	groups map[[32]byte][]string // fold key -> chunk IDs, first searched
	// promoted are chunks that became the first of their group since the
	// keyword index was last told (see Index.promote).
	promoted []string

	ivf       *ivf // nil below the ANN threshold
	threshold int
	nprobe    int
}

func newVectorStore(threshold, nprobe int) *vectorStore {
	return &vectorStore{
		slotOf:    map[string]int{},
		ofRow:     map[int64]int{},
		intern:    map[string]int32{},
		chunks:    map[int32]int{},
		groups:    map[[32]byte][]string{},
		threshold: threshold,
		nprobe:    nprobe,
	}
}

func (s *vectorStore) len() int { return len(s.meta) }

func (s *vectorStore) vec(slot int) []float32 {
	return s.vecs[slot*s.dim : (slot+1)*s.dim : (slot+1)*s.dim]
}

func (s *vectorStore) internID(v string) int32 {
	if id, ok := s.intern[v]; ok {
		return id
	}
	id := int32(len(s.names))
	s.intern[v] = id
	s.names = append(s.names, v)
	return id
}

func (s *vectorStore) metaOf(c docent.Chunk) slotMeta {
	m := slotMeta{id: c.ID, doc: s.internID(c.DocID), source: s.internID(c.Source), space: s.internID(c.Space), updated: unixNano(c.UpdatedAt)}
	for _, l := range c.Labels {
		m.labels = append(m.labels, s.internID(l))
	}
	return m
}

// add stores or replaces the chunk's vector, stored in chunks row rowid,
// and returns its slot and whether the chunk is searched (the first of its
// fold group); hash is its body's (factsInput). len(c.Vector) must equal
// dim.
func (s *vectorStore) add(c docent.Chunk, rowid int64, hash [32]byte) (slot int, searched bool) {
	if slot, ok := s.slotOf[c.ID]; ok {
		s.remove(slot)
	}
	slot = len(s.meta)
	s.vecs = append(s.vecs, c.Vector...)
	m := s.metaOf(c)
	m.rowid = rowid
	s.meta = append(s.meta, m)
	s.slotOf[c.ID] = slot
	s.ofRow[rowid] = slot
	s.chunks[m.doc]++
	key, ok := foldKey(hash, c)
	searched = s.join(slot, key, ok)
	if s.ivf != nil {
		s.ivf.add(s, slot)
	}
	return slot, searched
}

// hasDoc reports whether any chunk of the document is stored.
func (s *vectorStore) hasDoc(docID string) bool {
	id, ok := s.intern[docID]
	return ok && s.chunks[id] > 0
}

// delete removes the chunk's vector if present.
func (s *vectorStore) delete(id string) {
	if slot, ok := s.slotOf[id]; ok {
		s.remove(slot)
	}
}

func (s *vectorStore) remove(slot int) {
	s.leave(slot)
	last := len(s.meta) - 1
	if s.ivf != nil {
		s.ivf.remove(slot)
		if slot != last {
			s.ivf.move(last, slot)
		}
	}
	delete(s.slotOf, s.meta[slot].id)
	delete(s.ofRow, s.meta[slot].rowid)
	if doc := s.meta[slot].doc; s.chunks[doc] <= 1 {
		delete(s.chunks, doc)
	} else {
		s.chunks[doc]--
	}
	if slot != last {
		copy(s.vec(slot), s.vec(last))
		s.meta[slot] = s.meta[last]
		s.slotOf[s.meta[slot].id] = slot
		s.ofRow[s.meta[slot].rowid] = slot
	}
	s.meta[last] = slotMeta{}
	s.meta = s.meta[:last]
	s.vecs = s.vecs[:last*s.dim]
}

// reindex builds, rebuilds or drops the approximate index to match the
// number of vectors: built when there are at least threshold vectors and
// rebuilt when the count has doubled or halved since the last build.
func (s *vectorStore) reindex() {
	n := s.len()
	switch {
	case s.threshold <= 0 || n < s.threshold:
		s.ivf = nil
	case s.ivf == nil || n > 2*s.ivf.trainedOn || 2*n < s.ivf.trainedOn:
		s.ivf = buildIVF(s, 1)
	}
}

// compiledFilter is a docent.Filter over interned values.
type compiledFilter struct {
	zero          bool
	sources       []int32
	spaces        []int32
	labels        []int32
	after, before int64
	hasAfter      bool
	hasBefore     bool
	impossible    bool
	// store resolves fold groups: a date filter may let a copy through
	// where the chunk searched for its group is outside the dates.
	store *vectorStore
}

func (s *vectorStore) compile(f docent.Filter) compiledFilter {
	cf := compiledFilter{zero: f.IsZero(), store: s}
	lookup := func(vals []string) []int32 {
		out := []int32{}
		for _, v := range vals {
			if id, ok := s.intern[v]; ok {
				out = append(out, id)
			}
		}
		if len(out) == 0 {
			cf.impossible = true
		}
		return out
	}
	if len(f.Sources) > 0 {
		cf.sources = lookup(f.Sources)
	}
	if len(f.Spaces) > 0 {
		cf.spaces = lookup(f.Spaces)
	}
	if len(f.Labels) > 0 {
		cf.labels = lookup(f.Labels)
	}
	if !f.UpdatedAfter.IsZero() {
		cf.hasAfter, cf.after = true, unixNano(f.UpdatedAfter)
	}
	if !f.UpdatedBefore.IsZero() {
		cf.hasBefore, cf.before = true, unixNano(f.UpdatedBefore)
	}
	return cf
}

// match reports whether a searched chunk passes the filter, or, under a
// date filter, one of its copies does (see fold.go, and as); copies of
// another chunk never match themselves.
func (cf *compiledFilter) match(m *slotMeta) bool {
	if m.folded {
		return false
	}
	if cf.matchMeta(m) {
		return true
	}
	_, ok := cf.as(m)
	return ok
}

// as returns the slot of the first copy of m's fold group that passes a
// date filter m itself fails, and whether there is one. Copies share
// source, space and labels, so only dates can tell them apart.
func (cf *compiledFilter) as(m *slotMeta) (int, bool) {
	if cf.zero || cf.impossible || !(cf.hasAfter || cf.hasBefore) || !m.keyed || cf.store == nil {
		return 0, false
	}
	g := cf.store.groups[m.key]
	for _, id := range g[min(1, len(g)):] {
		if slot, ok := cf.store.slotOf[id]; ok && cf.matchMeta(&cf.store.meta[slot]) {
			return slot, true
		}
	}
	return 0, false
}

// hitSlot is the slot a hit on slot reports: itself, or the copy that
// passes the date filter in its place (see as).
func (cf *compiledFilter) hitSlot(slot int) int {
	m := &cf.store.meta[slot]
	if cf.matchMeta(m) {
		return slot
	}
	if c, ok := cf.as(m); ok {
		return c
	}
	return slot
}

// matchMeta reports whether the chunk's metadata passes the filter.
func (cf *compiledFilter) matchMeta(m *slotMeta) bool {
	if cf.zero {
		return true
	}
	if cf.impossible {
		return false
	}
	if cf.sources != nil && !slices.Contains(cf.sources, m.source) {
		return false
	}
	if cf.spaces != nil && !slices.Contains(cf.spaces, m.space) {
		return false
	}
	if cf.labels != nil && !slices.ContainsFunc(m.labels, func(l int32) bool { return slices.Contains(cf.labels, l) }) {
		return false
	}
	if cf.hasAfter && m.updated < cf.after {
		return false
	}
	if cf.hasBefore && m.updated >= cf.before {
		return false
	}
	return true
}

// scored is a slot and its similarity to the query.
type scored struct {
	slot  int
	score float32
}

// newTopK returns an empty heap of the k best of at most n scored slots;
// ties prefer the smaller chunk ID, so results do not depend on slot order.
func newTopK(k, n int, meta []slotMeta) *topk.Heap[scored] {
	return topk.New(k, func(a, b scored) bool {
		if a.score != b.score {
			return a.score < b.score
		}
		return meta[a.slot].id > meta[b.slot].id
	}, n)
}

// search returns the k nearest slots to q (by dot product) that pass the
// filter, best first. Below the ANN threshold, or when the filter keeps a
// small subset, it scans exactly; otherwise it probes the IVF lists,
// widening the probe until k filtered hits are found.
func (s *vectorStore) search(q []float32, k int, f docent.Filter) []scored {
	if k <= 0 || s.len() == 0 {
		return nil
	}
	cf := s.compile(f)
	if cf.impossible {
		return nil
	}
	if s.ivf == nil {
		return s.exact(q, k, &cf)
	}
	if !cf.zero {
		var subset []int
		for i := range s.meta {
			if cf.match(&s.meta[i]) {
				subset = append(subset, i)
			}
		}
		if len(subset)*5 < s.len() || len(subset) < s.threshold {
			return s.exactSubset(q, k, subset)
		}
	}
	return s.ivf.search(s, q, k, &cf, s.nprobe)
}

// exact scans every vector.
func (s *vectorStore) exact(q []float32, k int, cf *compiledFilter) []scored {
	t := newTopK(k, len(s.meta), s.meta)
	for i := range s.meta {
		if !cf.match(&s.meta[i]) {
			continue
		}
		t.Offer(scored{i, vek32.Dot(q, s.vec(i))})
	}
	return t.Sorted()
}

func (s *vectorStore) exactSubset(q []float32, k int, slots []int) []scored {
	t := newTopK(k, len(slots), s.meta)
	for _, i := range slots {
		t.Offer(scored{i, vek32.Dot(q, s.vec(i))})
	}
	return t.Sorted()
}

// normalized returns v scaled to unit length (a copy), or nil for a zero vector.
func normalized(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return nil
	}
	inv := float32(1 / math.Sqrt(sum))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * inv
	}
	return out
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// facet counts the distinct documents of each value in pairs (interned
// value, interned document), most frequent first, then by value; never nil.
func (s *vectorStore) facet(pairs map[[2]int32]bool) []search.Facet {
	counts := map[int32]int{}
	for p := range pairs {
		counts[p[0]]++
	}
	out := make([]search.Facet, 0, len(counts))
	for v, n := range counts {
		out = append(out, search.Facet{Value: s.names[v], Count: n})
	}
	slices.SortFunc(out, func(a, b search.Facet) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return cmp.Compare(a.Value, b.Value)
	})
	return out
}
