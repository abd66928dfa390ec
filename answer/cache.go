package answer

import (
	"strings"
	"sync"

	"github.com/docent-hq/docent"
)

// Chunk IDs are content hashes (a chunk with the same ID has the same
// text), so the units and terms of a chunk can be kept across questions:
// the gate, the generator and the conflict check all read them, several
// times per question. The cache is bounded; when full it starts over.
const maxCachedChunks = 4096

type chunkInfo struct {
	units []unit
	terms map[string]bool
}

var chunkCache = struct {
	sync.Mutex
	m map[string]*chunkInfo
}{m: map[string]*chunkInfo{}}

// cached returns the cache entry of c, computing it when missing. Chunks
// without an ID are not cached.
func cached(c docent.Chunk) *chunkInfo {
	key := c.ID + "\x00" + c.Title + "\x00" + strings.Join(c.Section, "\x00") + "\x00" + c.Text
	if c.ID == "" {
		return &chunkInfo{units: splitUnits(c), terms: termSet(c.Text)}
	}
	chunkCache.Lock()
	ci := chunkCache.m[key]
	chunkCache.Unlock()
	if ci != nil {
		return ci
	}
	ci = &chunkInfo{units: splitUnits(c), terms: termSet(c.Text)}
	chunkCache.Lock()
	if len(chunkCache.m) >= maxCachedChunks {
		chunkCache.m = map[string]*chunkInfo{}
	}
	chunkCache.m[key] = ci
	chunkCache.Unlock()
	return ci
}

// unitsOf returns the quotable units of c (see splitUnits). The caller
// must not modify them.
func unitsOf(c docent.Chunk) []unit { return cached(c).units }

// termsOf returns the analyzed terms of c's text. The caller must not
// modify the set.
func termsOf(c docent.Chunk) map[string]bool { return cached(c).terms }
