package offline

import (
	"hash/fnv"

	"github.com/docent-hq/docent/search"
)

// hashEmbed is the untrained fallback: every term, and each character
// 3- and 4-gram of it (with boundary marks), is hashed to a signed
// coordinate of a dim-length vector, which is then normalized. It is a
// lexical embedding: texts sharing terms or word pieces come out similar.
func hashEmbed(text string, dim int) []float32 {
	v := make([]float32, dim)
	for _, t := range search.Analyze(text) {
		addHashed(v, "w:"+t, 1)
		g := "<" + t + ">"
		for n := 3; n <= 4; n++ {
			for i := 0; i+n <= len(g); i++ {
				addHashed(v, g[i:i+n], 0.25)
			}
		}
	}
	search.Normalize(v)
	return v
}

// addHashed adds w to the coordinate feature hashes to, with the sign from
// the hash's top bit.
func addHashed(v []float32, feature string, w float32) {
	h := fnv.New64a()
	h.Write([]byte(feature))
	x := h.Sum64()
	if x>>63 == 1 {
		w = -w
	}
	v[x%uint64(len(v))] += w
}
