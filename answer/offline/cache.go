package offline

import (
	"slices"
	"sync"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// Chunk IDs are content hashes (a chunk with the same ID has the same
// text), so the units and terms of a chunk can be kept across questions:
// the gate, the generator and the conflict check all read them, several
// times per question. The cache is bounded; when full it starts over.
// An entry of a long chunk (its term and pair sets are maps) holds about
// 25 KB, so the bound is what the answerer adds to a server's memory: 512
// entries, the candidates of the last 17 or so questions (a question
// reads up to 30). At 4096, SciFact's 300 bench answers filled it with
// about 100 MB, peak RSS 369-372 MiB against 325-344 at 512, and the
// garbage collector's extra work put the answers' p95 at 25-28 ms
// against 17-19 (`docent bench --scifact`, alternating builds).
const maxCachedChunks = 512

type chunkInfo struct {
	title, text string // what the entry was computed from
	section     []string
	terms       map[string]bool

	// units are split (and their answer kinds found) on first use: the
	// gate reads the terms of every candidate, the quoting only the units
	// of the few it keeps.
	unitsOnce sync.Once
	chunk     docent.Chunk
	units     []unit

	pairsOnce sync.Once
	pairs     map[pair]bool
}

// pairsOf returns the chunk's adjacent term pairs, found the first time.
func (ci *chunkInfo) pairsOf() map[pair]bool {
	ci.pairsOnce.Do(func() { ci.pairs = pairsOf(ci.text) })
	return ci.pairs
}

// unitsOf returns ci's units, splitting them the first time.
func (ci *chunkInfo) unitsOf() []unit {
	ci.unitsOnce.Do(func() {
		ci.units = splitUnits(ci.chunk)
		ci.chunk = docent.Chunk{} // only needed to split
	})
	return ci.units
}

// same reports whether the entry was computed from c's content.
func (ci *chunkInfo) same(c docent.Chunk) bool {
	return ci.title == c.Title && ci.text == c.Text && slices.Equal(ci.section, c.Section)
}

var chunkCache = struct {
	sync.Mutex
	m map[string]*chunkInfo
}{m: map[string]*chunkInfo{}}

// cached returns the cache entry of c, computing it when missing. Chunks
// without an ID are not cached.
func cached(c docent.Chunk) *chunkInfo {
	if c.ID == "" {
		return &chunkInfo{chunk: c, terms: search.TermSet(c.Text)}
	}
	chunkCache.Lock()
	ci := chunkCache.m[c.ID]
	chunkCache.Unlock()
	if ci != nil && ci.same(c) {
		return ci
	}
	ci = &chunkInfo{title: c.Title, text: c.Text, section: c.Section, chunk: c, terms: search.TermSet(c.Text)}
	chunkCache.Lock()
	if len(chunkCache.m) >= maxCachedChunks {
		chunkCache.m = map[string]*chunkInfo{}
	}
	chunkCache.m[c.ID] = ci
	chunkCache.Unlock()
	return ci
}

// unitsOf returns the quotable units of c (see splitUnits). The caller
// must not modify them.
func unitsOf(c docent.Chunk) []unit { return cached(c).unitsOf() }

// termsOf returns the analyzed terms of c's text. The caller must not
// modify the set.
func termsOf(c docent.Chunk) map[string]bool { return cached(c).terms }
