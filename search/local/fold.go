package local

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"

	"github.com/docent-hq/docent"
)

// Exact copies are indexed once. Chunks whose bodies (Text after the
// heading line, docent.Chunk.Body) are the same text and whose source,
// space and labels are the same form a fold group: every chunk of it is
// stored (its document still lists it, Scan and Chunks return it), but
// only the first of the group (the lowest rowid, the one stored first) is
// in the keyword index and searched by vector; the others are its copies,
// which Copies lists. The same option text on two provider pages so
// counts once in the keyword statistics and takes one place in a ranking,
// and the pages that hold it stay known. When the first is deleted, the
// next copy takes its place in both indexes.
//
// Source, space and label filters match every chunk of a group alike; a
// filter on UpdatedAt, where copies can differ, lets the group's searched
// chunk through when it or one of its copies passes, and the hit then
// names the first copy that does, so a date filter finds the copy it
// allows.

// foldKey is a chunk's fold group: the hash of its body's hash (body,
// see factsInput), source, space and labels; ok is false for a chunk with
// an empty body (a zero hash), which folds with nothing.
func foldKey(body [32]byte, c docent.Chunk) (key [32]byte, ok bool) {
	if body == ([32]byte{}) {
		return key, false
	}
	h := sha256.New()
	h.Write(body[:])
	h.Write([]byte{0})
	for _, s := range append([]string{c.Source, c.Space}, c.Labels...) {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	h.Sum(key[:0])
	return key, true
}

// join puts slot, whose chunk has fold key key, in its group and reports
// whether it is the group's first: the chunk searched.
func (s *vectorStore) join(slot int, key [32]byte, ok bool) bool {
	m := &s.meta[slot]
	if !ok {
		return true
	}
	m.keyed, m.key = true, key
	g := s.groups[key]
	s.groups[key] = append(g, m.id)
	m.folded = len(g) > 0
	return !m.folded
}

// leave takes slot out of its group; when it was the group's first, the
// next chunk of the group becomes searched and its ID is queued in
// promoted for the keyword index.
func (s *vectorStore) leave(slot int) {
	m := &s.meta[slot]
	if !m.keyed {
		return
	}
	g := s.groups[m.key]
	i := slices.Index(g, m.id)
	if i < 0 {
		return
	}
	g = slices.Delete(g, i, i+1)
	if len(g) == 0 {
		delete(s.groups, m.key)
		return
	}
	s.groups[m.key] = g
	if i == 0 {
		if next, ok := s.slotOf[g[0]]; ok {
			s.meta[next].folded = false
			s.promoted = append(s.promoted, g[0])
		}
	}
}

// Copies returns, for each of the given chunk IDs that is searched and has
// copies (chunks of the same body, source, space and labels that are
// indexed once, under it), the copies' IDs in the order they were stored.
// IDs without copies are left out.
func (ix *Index) Copies(ctx context.Context, ids []string) (map[string][]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("local: copies: %w", err)
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	vs := ix.vectors
	out := map[string][]string{}
	for _, id := range ids {
		slot, ok := vs.slotOf[id]
		if !ok || vs.meta[slot].folded || !vs.meta[slot].keyed {
			continue
		}
		if g := vs.groups[vs.meta[slot].key]; len(g) > 1 && g[0] == id {
			out[id] = slices.Clone(g[1:])
		}
	}
	return out, nil
}

// promote adds the chunks that became the first of their fold group to
// the keyword index, reading their terms from the database.
func (ix *Index) promote(ctx context.Context) error {
	vs := ix.vectors
	ids := vs.promoted
	vs.promoted = nil
	for _, id := range ids {
		slot, ok := vs.slotOf[id]
		if !ok || vs.meta[slot].folded {
			continue
		}
		rowid := vs.meta[slot].rowid
		var terms []byte
		if err := ix.db.QueryRowContext(ctx, `SELECT terms FROM chunks WHERE rowid = ?`, rowid).Scan(&terms); err != nil {
			return fmt.Errorf("local: chunk %s terms: %w", id, err)
		}
		if err := ix.keyword.Add(rowid, terms); err != nil {
			return fmt.Errorf("local: chunk %s terms: %w", id, err)
		}
	}
	return nil
}
