package local

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// DefaultK is the number of hits Search returns when Query.K is not positive.
const DefaultK = 10

// maxQueryTerms caps the terms of a keyword query.
const maxQueryTerms = 64

// stopwords are dropped from keyword queries: they match nearly every chunk
// and only slow BM25 down.
var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be but by can could did do does doing for from
		had has have how i if in into is it its me my of on or our should so than that the their them
		then there these they this those to was we were what when where which who whom why will with
		would you your s t d ll m re ve`) {
		stopwords[w] = true
	}
}

// MatchExpr builds a safe FTS5 MATCH expression from free text: the text is
// split into runs of letters and digits, lower-cased, stopwords and
// duplicates dropped, each term double-quoted and the terms ORed. No FTS5
// syntax in the text survives. It returns "" when no term remains.
func MatchExpr(text string) string {
	seen := map[string]bool{}
	var terms []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if stopwords[w] || seen[w] {
			continue
		}
		seen[w] = true
		terms = append(terms, `"`+w+`"`)
		if len(terms) == maxQueryTerms {
			break
		}
	}
	return strings.Join(terms, " OR ")
}

// KeywordSearch returns at most q.K BM25 hits (Chunk.ID and DocID,
// KeywordScore, KeywordRank), best first, ties by chunk ID. The filter
// applies before the ranking is cut. Text with no keyword terms gets no
// hits. See search.Index.
func (ix *Index) KeywordSearch(ctx context.Context, q search.KeywordQuery) ([]docent.Hit, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	hits, err := ix.keywordSearch(ctx, q.Text, q.Filter, kOrDefault(q.K))
	if err != nil {
		return nil, err
	}
	for i := range hits {
		hits[i].KeywordRank = i + 1
	}
	return hits, nil
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

// keywordSearch returns up to depth BM25 hits (only Chunk.ID and
// KeywordScore set, higher is better), best first, ties by chunk ID.
//
// The FTS query reads the FTS index alone (joining the chunks table costs
// as much again as BM25 itself); the filter runs on the in-memory chunk
// metadata while the full BM25 ranking streams by, so it applies before the
// ranking is cut to depth.
func (ix *Index) keywordSearch(ctx context.Context, text string, f docent.Filter, depth int) ([]docent.Hit, error) {
	match := MatchExpr(text)
	if match == "" {
		return nil, nil
	}
	vs := ix.vectors
	cf := vs.compile(f)
	if cf.impossible {
		return nil, nil
	}
	// Over-fetch so that ties at the cut are settled by chunk ID, and, under
	// a filter, by the inverse of the filter's selectivity; when that proves
	// too few, rank again without a limit.
	limit := depth + depth/4
	if !cf.zero {
		pass := 0
		for i := range vs.meta {
			if cf.match(&vs.meta[i]) {
				pass++
			}
		}
		if pass == 0 {
			return nil, nil
		}
		limit = 2*depth*vs.len()/pass + depth
	}
	hits, seen, err := ix.keywordRanking(ctx, match, &cf, depth, limit)
	if err == nil && len(hits) < depth && seen == limit && !cf.zero {
		hits, _, err = ix.keywordRanking(ctx, match, &cf, depth, -1)
	}
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(hits, func(a, b docent.Hit) int {
		if c := cmp.Compare(b.KeywordScore, a.KeywordScore); c != 0 {
			return c
		}
		return cmp.Compare(a.Chunk.ID, b.Chunk.ID)
	})
	if len(hits) > depth {
		hits = hits[:depth]
	}
	return hits, nil
}

// keywordRanking reads the BM25 ranking of match, at most limit rows (all
// when limit < 0), keeping the chunks that pass cf until depth are kept and
// the score drops. It returns the hits and how many rows it read.
func (ix *Index) keywordRanking(ctx context.Context, match string, cf *compiledFilter, depth, limit int) ([]docent.Hit, int, error) {
	vs := ix.vectors
	rows, err := ix.db.QueryContext(ctx, `SELECT rowid, -bm25(fts, ?, ?, ?) AS score FROM fts
		WHERE fts MATCH ? ORDER BY score DESC, rowid LIMIT ?`,
		ix.opts.TitleWeight, ix.opts.SectionWeight, ix.opts.TextWeight, match, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("local: keyword search: %w", err)
	}
	defer rows.Close()
	var (
		hits []docent.Hit
		seen int
	)
	for rows.Next() {
		var (
			rowid int64
			score float64
		)
		if err := rows.Scan(&rowid, &score); err != nil {
			return nil, 0, fmt.Errorf("local: keyword search: %w", err)
		}
		seen++
		if len(hits) >= depth && score < hits[len(hits)-1].KeywordScore {
			break
		}
		slot, ok := vs.ofRow[rowid]
		if !ok || !cf.match(&vs.meta[slot]) {
			continue
		}
		m := &vs.meta[slot]
		hits = append(hits, docent.Hit{Chunk: docent.Chunk{ID: m.id, DocID: vs.names[m.doc]}, KeywordScore: score})
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("local: keyword search: %w", err)
	}
	return hits, seen, nil
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
	hits := make([]docent.Hit, len(found))
	for i, s := range found {
		m := &vs.meta[s.slot]
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
	byID := make(map[string]docent.Chunk, len(ids))
	for start := 0; start < len(ids); start += maxSQLVars {
		part := ids[start:min(start+maxSQLVars, len(ids))]
		args := make([]any, len(part))
		for i, id := range part {
			args[i] = id
		}
		rows, err := ix.db.QueryContext(ctx, `SELECT `+chunkColumns+` FROM chunks WHERE id IN (`+
			strings.TrimSuffix(strings.Repeat("?,", len(part)), ",")+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("local: load chunks: %w", err)
		}
		for rows.Next() {
			c, err := scanChunk(rows)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("local: load chunks: %w", err)
			}
			byID[c.ID] = c
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
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

// maxSQLVars bounds the parameters of one IN (...) query.
const maxSQLVars = 500

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
			if !cf.match(m) {
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
