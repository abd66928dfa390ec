package local

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/bm25"
)

// DefaultK is the number of hits Search returns when Query.K is not positive.
const DefaultK = 10

// maxQueryTerms caps the distinct terms of a keyword query, which bounds
// the work a pasted document can cause; a question has far fewer.
const maxQueryTerms = 1024

// KeywordSearch returns at most q.K BM25 hits (Chunk.ID and DocID,
// KeywordScore, KeywordRank), best first, ties by chunk ID. The filter
// applies before the ranking is cut. Text with no keyword terms gets no
// hits. See search.Index.
func (ix *Index) KeywordSearch(ctx context.Context, q search.KeywordQuery) ([]docent.Hit, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("local: keyword search: %w", err)
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	hits := ix.keywordSearch(q.Text, q.Filter, kOrDefault(q.K))
	for i := range hits {
		hits[i].KeywordRank = i + 1
	}
	return hits, nil
}

// DocFreq returns how many chunks hold each of the analyzed keyword terms
// (those none holds are left out) and how many chunks there are: the
// statistics of the BM25 index (search.TermStats).
func (ix *Index) DocFreq(ctx context.Context, terms []string) (map[string]int, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, fmt.Errorf("local: doc freq: %w", err)
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	df, n := ix.keyword.DocFreq(terms)
	return df, n, nil
}

// VectorSearch returns at most q.K nearest chunks (Chunk.ID and DocID,
// VectorScore, VectorRank), best first: an exact scan, or the inverted-file
// index above Options.ANNThreshold chunks. It returns search.ErrNoVector
// for an empty vector and search.ErrDimension for one of the wrong length.
func (ix *Index) VectorSearch(ctx context.Context, q search.VectorQuery) ([]docent.Hit, error) {
	if len(q.Vector) == 0 {
		return nil, fmt.Errorf("local: vector search: %w", search.ErrNoVector)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("local: vector search: %w", err)
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	hits, err := ix.vectorSearch(q.Vector, q.Filter, kOrDefault(q.K))
	if err != nil {
		return nil, err
	}
	for i := range hits {
		hits[i].VectorRank = i + 1
	}
	return hits, nil
}

func kOrDefault(k int) int {
	if k <= 0 {
		return DefaultK
	}
	return k
}

// keywordSearch returns up to depth BM25 hits (only Chunk.ID, DocID and
// KeywordScore set, higher is better), best first, ties by chunk ID. The
// filter runs on the in-memory chunk metadata inside the ranking, before
// it is cut to depth.
func (ix *Index) keywordSearch(text string, f docent.Filter, depth int) []docent.Hit {
	terms, counts := queryTerms(text)
	if len(terms) == 0 {
		return nil
	}
	vs := ix.vectors
	cf := vs.compile(f)
	if cf.impossible {
		return nil
	}
	q := bm25.Query{
		Terms:  terms,
		Counts: counts,
		K:      depth,
		Tie: func(a, b int64) int {
			return cmp.Compare(vs.meta[vs.ofRow[a]].id, vs.meta[vs.ofRow[b]].id)
		},
	}
	if !cf.zero {
		q.Accept = func(rowid int64) bool {
			slot, ok := vs.ofRow[rowid]
			return ok && cf.match(&vs.meta[slot])
		}
	}
	found := ix.keyword.Search(q)
	hits := make([]docent.Hit, len(found))
	for i, h := range found {
		m := &vs.meta[cf.hitSlot(vs.ofRow[h.Key])]
		hits[i] = docent.Hit{Chunk: docent.Chunk{ID: m.id, DocID: vs.names[m.doc]}, KeywordScore: h.Score}
	}
	return hits
}

// queryTerms analyzes a keyword query (search.AnalyzeKeywords): its
// distinct terms in order, the first maxQueryTerms of them.
func queryTerms(text string) ([]string, []int) {
	var terms []string
	var counts []int
	at := map[string]int{}
	search.AnalyzeKeywordQuery(text, func(t string) {
		if i, ok := at[t]; ok {
			counts[i]++
			return
		}
		if len(terms) < maxQueryTerms {
			at[t] = len(terms)
			terms = append(terms, t)
			counts = append(counts, 1)
		}
	})
	return terms, counts
}

// vectorSearch returns up to depth nearest chunks (only Chunk.ID and
// VectorScore set), best first.
func (ix *Index) vectorSearch(v []float32, f docent.Filter, depth int) ([]docent.Hit, error) {
	vs := ix.vectors
	if vs.len() == 0 {
		return nil, nil
	}
	if len(v) != vs.dim {
		return nil, fmt.Errorf("local: vector search: %w: query has %d, index %d", search.ErrDimension, len(v), vs.dim)
	}
	q := normalized(v)
	if q == nil {
		return nil, nil
	}
	found := vs.search(q, depth, f)
	cf := vs.compile(f)
	hits := make([]docent.Hit, len(found))
	for i, s := range found {
		m := &vs.meta[cf.hitSlot(s.slot)]
		hits[i] = docent.Hit{Chunk: docent.Chunk{ID: m.id, DocID: vs.names[m.doc]}, VectorScore: float64(s.score)}
	}
	return hits, nil
}

// Chunks returns the stored chunks with the given IDs, without vectors, in
// the order asked; unknown IDs are left out.
func (ix *Index) Chunks(ctx context.Context, ids []string) ([]docent.Chunk, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	// Rows are read by rowid (the table's own key) rather than through the
	// id index. A write between the lookup and the read can only remove a
	// row or give its rowid to another chunk: both are left out below.
	var rowids []int64
	ix.mu.RLock()
	for _, id := range ids {
		if slot, ok := ix.vectors.slotOf[id]; ok {
			rowids = append(rowids, ix.vectors.meta[slot].rowid)
		}
	}
	ix.mu.RUnlock()
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	byID := make(map[string]docent.Chunk, len(rowids))
	if len(rowids) > 0 {
		// One prepared statement for any number of rows: the rowids go
		// in as one JSON array.
		list, err := json.Marshal(rowids)
		if err != nil {
			return nil, fmt.Errorf("local: load chunks: %w", err)
		}
		rows, err := ix.byRow.QueryContext(ctx, string(list))
		if err != nil {
			return nil, fmt.Errorf("local: load chunks: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			c, err := scanChunk(rows)
			if err != nil {
				return nil, fmt.Errorf("local: load chunks: %w", err)
			}
			if want[c.ID] {
				byID[c.ID] = c
			}
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("local: load chunks: %w", err)
		}
	}
	out := make([]docent.Chunk, 0, len(byID))
	for _, id := range ids {
		if c, ok := byID[id]; ok {
			out = append(out, c)
		}
	}
	return out, nil
}

// Vectors returns the in-memory vectors of the given chunk IDs; unknown
// IDs are left out. The slices are copies.
func (ix *Index) Vectors(ctx context.Context, ids []string) (map[string][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("local: vectors: %w", err)
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	vs := ix.vectors
	out := make(map[string][]float32, len(ids))
	for _, id := range ids {
		if slot, ok := vs.slotOf[id]; ok {
			out[id] = slices.Clone(vs.vec(slot))
		}
	}
	return out, nil
}

// Facets counts distinct documents by source and by label among the chunks
// that pass the filter, most frequent first, then by value. It counts from
// the in-memory chunk metadata with the filter the retrievers apply.
func (ix *Index) Facets(ctx context.Context, f docent.Filter) (search.Facets, error) {
	if err := ctx.Err(); err != nil {
		return search.Facets{}, fmt.Errorf("local: facets: %w", err)
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	vs := ix.vectors
	cf := vs.compile(f)
	// Each set holds (value, document) pairs of interned IDs.
	sources := map[[2]int32]bool{}
	labels := map[[2]int32]bool{}
	if !cf.impossible {
		for i := range vs.meta {
			m := &vs.meta[i]
			if !cf.matchMeta(m) {
				continue
			}
			sources[[2]int32{m.source, m.doc}] = true
			for _, l := range m.labels {
				labels[[2]int32{l, m.doc}] = true
			}
		}
	}
	return search.Facets{Sources: vs.facet(sources), Labels: vs.facet(labels)}, nil
}
