package local

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/bm25"
)

var _ search.SectionFacts = (*Index)(nil)

// storedFacts are a chunk's search.ChunkFacts as memory keeps them,
// derived when the chunk is stored or loaded, so that the Retriever's last
// stage reads no chunk row and analyzes no text for the candidates it
// orders: the body's hash, and its terms as IDs of the keyword index's
// dictionary in the terms' sorted order, as uvarints (about two bytes a
// term): the number of Body's terms, Body's, then those of Own that Body
// lacks (the section heading's).
type storedFacts struct {
	hash  [32]byte
	terms []byte
}

// factsInput is what a chunk's facts are derived from besides its
// keyword terms (keywordDoc, as stored) and the dictionary: derived
// without a lock, from the chunk's text and section.
type factsInput struct {
	hash   [32]byte
	headed bool     // the text starts with the heading line (docent.ChunkHeading)
	leaf   []string // the section's own heading's terms, sorted
}

func factsInputOf(c docent.Chunk) factsInput {
	body := c.Body()
	in := factsInput{headed: len(body) < len(c.Text)}
	if t := strings.TrimSpace(body); t != "" {
		in.hash = sha256.Sum256([]byte(t))
	}
	if len(c.Section) > 0 {
		search.AnalyzeKeywords(c.Section[len(c.Section)-1], func(t string) { in.leaf = append(in.leaf, t) })
		slices.Sort(in.leaf)
		in.leaf = slices.Compact(in.leaf)
	}
	return in
}

// store derives the facts of the chunk whose keyword terms (an encoded
// bm25.Doc of keywordDoc) are enc, ids their IDs in dict (AddIDs or
// TermIDs), adding to dict the heading's terms it lacks. The body is not
// analyzed again: its terms are those of the code field and those the
// text field holds more often than the heading line does. The text field
// is the heading line, when the text starts with it, and the body's
// prose; the line is the title and the section path, whose fields count
// its terms.
func (in factsInput) store(enc []byte, ids []uint32, dict *bm25.Index) (storedFacts, error) {
	var body []uint32
	var leaf []string
	rest := in.leaf
	i := 0
	err := bm25.EachTerm(enc, func(term []byte, freqs [bm25.NumFields]uint32) {
		id := ids[i]
		i++
		prose := freqs[bm25.Text]
		if in.headed {
			prose -= min(prose, freqs[bm25.Title]+freqs[bm25.Section])
		}
		if prose == 0 && freqs[bm25.Code] == 0 {
			return
		}
		// The heading's terms before this one are not the body's.
		for len(rest) > 0 && rest[0] < string(term) {
			leaf, rest = append(leaf, rest[0]), rest[1:]
		}
		if len(rest) > 0 && rest[0] == string(term) {
			rest = rest[1:]
		}
		body = append(body, id)
	})
	if err != nil {
		return storedFacts{}, err
	}
	leaf = append(leaf, rest...)
	b := make([]byte, 0, 2*(1+len(body)+len(leaf)))
	b = binary.AppendUvarint(b, uint64(len(body)))
	for _, id := range body {
		b = binary.AppendUvarint(b, uint64(id))
	}
	for _, t := range leaf {
		b = binary.AppendUvarint(b, uint64(dict.TermID([]byte(t))))
	}
	return storedFacts{hash: in.hash, terms: b}, nil
}

// index adds the chunk in slot, whose encoded keyword terms are enc, to
// the keyword index when it is searched (the first of its fold group),
// and stores its facts either way. ids is scratch space, returned for
// reuse.
func (vs *vectorStore) index(slot int, searched bool, in factsInput, rowid int64, enc []byte, keyword *bm25.Index, ids []uint32) ([]uint32, error) {
	var err error
	if searched {
		ids, err = keyword.AddIDs(rowid, enc, ids[:0])
	} else {
		ids, err = keyword.TermIDs(enc, ids[:0])
	}
	if err != nil {
		return ids, err
	}
	vs.meta[slot].facts, err = in.store(enc, ids, keyword)
	return ids, err
}

var errCorruptFacts = errors.New("local: corrupt facts encoding")

// facts decodes s.
func (s storedFacts) facts(dict *bm25.Index) (search.ChunkFacts, error) {
	b := s.terms
	next := func() (uint32, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return uint32(v), true
	}
	nbody, ok := next()
	if !ok {
		return search.ChunkFacts{}, errCorruptFacts
	}
	own := make([]string, 0, len(b)/2)
	for len(b) > 0 {
		id, ok := next()
		if !ok {
			return search.ChunkFacts{}, errCorruptFacts
		}
		own = append(own, dict.Term(id))
	}
	if int(nbody) > len(own) {
		return search.ChunkFacts{}, errCorruptFacts
	}
	f := search.ChunkFacts{Hash: s.hash, Body: own[:nbody:nbody], Own: own}
	if len(own) > int(nbody) {
		// Own is Body and the heading's terms, merged.
		f.Own = make([]string, 0, len(own))
		a, h := own[:nbody], own[nbody:]
		for _, t := range h {
			for len(a) > 0 && a[0] < t {
				f.Own, a = append(f.Own, a[0]), a[1:]
			}
			f.Own = append(f.Own, t)
		}
		f.Own = append(f.Own, a...)
	}
	return f, nil
}

// Facts returns the facts of the chunks of ids the index holds, from
// memory.
func (ix *Index) Facts(ctx context.Context, ids []string) (map[string]search.ChunkFacts, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("local: facts: %w", err)
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	vs := ix.vectors
	out := make(map[string]search.ChunkFacts, len(ids))
	for _, id := range ids {
		slot, ok := vs.slotOf[id]
		if !ok {
			continue
		}
		f, err := vs.meta[slot].facts.facts(ix.keyword)
		if err != nil {
			return nil, fmt.Errorf("local: facts of chunk %s: %w", id, err)
		}
		out[id] = f
	}
	return out, nil
}
