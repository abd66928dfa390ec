package search

import (
	"context"
	"math"
	"slices"

	"github.com/docent-hq/docent"
)

// Defaults of the Retriever's last stage (see RetrieverOptions).
const (
	// DefaultSectionDepth is how many fused hits the last stage reads.
	DefaultSectionDepth = 50
	// DefaultSectionWeight weighs what a chunk's own section says against
	// its fused score when the chunks of one page are put in order.
	DefaultSectionWeight = 1.0
	// DefaultMaxQueryTerms is how many salient terms a long query keeps
	// for the keyword retriever: a question never has that many, a pasted
	// log can. (At 32 or 64 it cut SciFact's long-context queries, nDCG@10
	// 0.7755 to 0.7438 and 0.7715.)
	DefaultMaxQueryTerms = 128
	// DefaultNearCopyJaccard is the share of body terms two sections
	// share from which the last stage keeps one of them among the first
	// DefaultNearCopyTop hits (see foldNear).
	DefaultNearCopyJaccard = 0.8
	// DefaultNearCopyTop is how many first places hold one of each group
	// of near-identical sections.
	DefaultNearCopyTop = 5
)

// refine is the Retriever's last stage over the fused ranking (see
// Retriever): it reads the facts of the first SectionDepth hits (from the
// index when it keeps them, see SectionFacts, else from their chunks,
// loaded), leaves out exact copies of a chunk ranked above (listing them
// on it, as Hit.Duplicates, with the copies an index folded into one),
// puts the chunks of each page in the order of what their own section
// says about the query, and keeps one of each group of near-identical
// sections among the first places (foldNear).
func (r *Retriever) refine(ctx context.Context, query string, filter docent.Filter, hits []docent.Hit) ([]docent.Hit, error) {
	depth := min(len(hits), r.opts.SectionDepth)
	if depth == 0 {
		return hits, nil
	}
	facts, err := r.facts(ctx, hits[:depth])
	if err != nil {
		return nil, err
	}
	head, err := r.collapseCopies(ctx, hits[:depth], facts)
	if err != nil {
		return nil, err
	}
	if err := r.listCopies(ctx, filter, head); err != nil {
		return nil, err
	}
	if r.opts.SectionWeight > 0 {
		if err := r.orderSections(ctx, query, head, facts); err != nil {
			return nil, err
		}
	}
	if r.opts.NearCopyJaccard > 0 {
		head = foldNear(head, facts, r.opts.NearCopyJaccard, r.opts.NearCopyTop)
	}
	return append(head, hits[depth:]...), nil
}

// collapseCopies keeps the first of the hits whose chunk bodies are the
// same text (the same ChunkFacts.Hash), and lists the others on it
// (Hit.Duplicates, their chunks loaded for the reference): the same note
// or option text on several pages fills one place in the ranking, not
// five, and the pages that hold it stay known. Only hits the filter let
// through are compared, so a filtered search keeps the copy of the
// filtered source.
func (r *Retriever) collapseCopies(ctx context.Context, hits []docent.Hit, facts map[string]ChunkFacts) ([]docent.Hit, error) {
	first := make(map[[32]byte]int, len(hits))
	out := hits[:0:0]
	var copies []docent.Hit
	var onto []int
	for _, h := range hits {
		key := facts[h.Chunk.ID].Hash
		if key == ([32]byte{}) {
			out = append(out, h)
			continue
		}
		if i, ok := first[key]; ok {
			copies, onto = append(copies, h), append(onto, i)
			continue
		}
		first[key] = len(out)
		out = append(out, h)
	}
	if err := r.load(ctx, copies); err != nil {
		return nil, err
	}
	for n, h := range copies {
		out[onto[n]].Duplicates = append(out[onto[n]].Duplicates, docent.ChunkRef{
			ID: h.Chunk.ID, DocID: h.Chunk.DocID, Title: h.Chunk.Title, Section: h.Chunk.Section, URL: h.Chunk.URL,
		})
	}
	return out, nil
}

// listCopies names on each hit the chunks an index that folds copies
// (Folder) indexed once under it, after the copies the ranking itself
// held (collapseCopies); copies the filter does not let through are left
// out.
func (r *Retriever) listCopies(ctx context.Context, filter docent.Filter, hits []docent.Hit) error {
	f, ok := r.idx.(Folder)
	if !ok {
		return nil
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.Chunk.ID
	}
	copies, err := f.Copies(ctx, ids)
	if err != nil || len(copies) == 0 {
		return err
	}
	var want []string
	for _, cs := range copies {
		want = append(want, cs...)
	}
	chunks, err := r.idx.Chunks(ctx, want)
	if err != nil {
		return err
	}
	byID := make(map[string]docent.Chunk, len(chunks))
	for _, c := range chunks {
		byID[c.ID] = c
	}
	for i := range hits {
		for _, id := range copies[hits[i].Chunk.ID] {
			c, ok := byID[id]
			if !ok || !filter.Match(c) || slices.ContainsFunc(hits[i].Duplicates, func(d docent.ChunkRef) bool { return d.ID == id }) {
				continue
			}
			hits[i].Duplicates = append(hits[i].Duplicates, docent.ChunkRef{
				ID: c.ID, DocID: c.DocID, Title: c.Title, Section: c.Section, URL: c.URL,
			})
		}
	}
	return nil
}

// foldNear keeps one of each group of near-identical sections among the
// first top hits: a hit whose body shares at least jaccard of its terms
// (Jaccard of ChunkFacts.Body) with a hit kept above it moves to just
// after the first top hits, in its order. The same option
// written for TCP and for UDP, or a deprecated middleware's page beside
// its successor's, so holds one of the first places, not two, and the
// places go to other sections. Scores stay with the places, so Score
// still orders the hits.
func foldNear(hits []docent.Hit, facts map[string]ChunkFacts, jaccard float64, top int) []docent.Hit {
	if top <= 0 || len(hits) <= top {
		return hits
	}
	set := func(i int) []string { return facts[hits[i].Chunk.ID].Body }
	var keep, moved []int
	for i := range hits {
		if len(keep) >= top {
			keep = append(keep, i)
			continue
		}
		if slices.ContainsFunc(keep, func(j int) bool { return sortedJaccard(set(i), set(j)) >= jaccard }) {
			moved = append(moved, i)
			continue
		}
		keep = append(keep, i)
		if len(keep) == top {
			keep = append(keep, moved...)
			moved = nil
		}
	}
	keep = append(keep, moved...)
	if len(moved) == 0 && slices.IsSorted(keep) {
		return hits
	}
	out := make([]docent.Hit, len(hits))
	for k, i := range keep {
		out[k] = hits[i]
		out[k].Score = hits[k].Score
	}
	return out
}

// sortedJaccard is Jaccard of two sets given as sorted slices of
// distinct terms: a merge, where the maps Jaccard takes would cost an
// insert per term of every body compared.
func sortedJaccard(a, b []string) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	inter := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// orderSections reorders, in place, the chunks of each page among hits:
// the places the page holds in the ranking stay its own, and go to its
// chunks in the order of
//
//	score/best score of the page + SectionWeight · own/best own of the page
//
// where own is the IDF mass of the query's terms that the chunk's own
// section states, in its heading or its body (ChunkFacts.Own); the words
// of the page title and of the headings above the section, which every
// chunk of the page shares, are the page's topic and count for none of
// them. A chunk that only matches the page's topic so goes after the one
// that answers. Pages with one chunk among the hits are left as they are,
// and so is the order of pages.
func (r *Retriever) orderSections(ctx context.Context, query string, hits []docent.Hit, facts map[string]ChunkFacts) error {
	byDoc := map[string][]int{}
	multi := false
	for i, h := range hits {
		byDoc[h.Chunk.DocID] = append(byDoc[h.Chunk.DocID], i)
		multi = multi || len(byDoc[h.Chunk.DocID]) > 1
	}
	if !multi {
		return nil
	}
	qterms := map[string]bool{}
	var list []string
	AnalyzeKeywordQuery(query, func(t string) {
		if !qterms[t] {
			qterms[t] = true
			list = append(list, t)
		}
	})
	if len(list) == 0 {
		return nil
	}
	idf, err := r.termWeights(ctx, list, hits)
	if err != nil {
		return err
	}
	own := make([]float64, len(hits))
	for i, h := range hits {
		if len(byDoc[h.Chunk.DocID]) < 2 {
			continue // a page with one chunk among the hits stays as it is
		}
		for _, t := range facts[h.Chunk.ID].Own {
			if qterms[t] {
				own[i] += idf[t]
			}
		}
	}
	orig := slices.Clone(hits)
	for _, slots := range byDoc {
		if len(slots) < 2 {
			continue
		}
		bestScore, bestOwn := 0.0, 0.0
		for _, i := range slots {
			bestScore = math.Max(bestScore, orig[i].Score)
			bestOwn = math.Max(bestOwn, own[i])
		}
		key := func(i int) float64 {
			k := 0.0
			if bestScore > 0 {
				k += orig[i].Score / bestScore
			}
			if bestOwn > 0 {
				k += r.opts.SectionWeight * own[i] / bestOwn
			}
			return k
		}
		order := slices.Clone(slots)
		slices.SortStableFunc(order, func(a, b int) int {
			ka, kb := key(a), key(b)
			switch {
			case ka > kb:
				return -1
			case ka < kb:
				return 1
			}
			return 0
		})
		// The page's places keep their scores, so Score still orders
		// the hits; the chunks move between them.
		for n, slot := range slots {
			h := orig[order[n]]
			h.Score = orig[slot].Score
			hits[slot] = h
		}
	}
	return nil
}

// termWeights returns the IDF of each term: from the index's statistics
// when it keeps them (TermStats), else from how many of hits hold it.
func (r *Retriever) termWeights(ctx context.Context, terms []string, hits []docent.Hit) (map[string]float64, error) {
	if ts, ok := r.idx.(TermStats); ok {
		return idfWeights(ctx, ts, terms)
	}
	want := map[string]bool{}
	for _, t := range terms {
		want[t] = true
	}
	df := map[string]int{}
	for _, h := range hits {
		seen := map[string]bool{}
		AnalyzeKeywords(h.Chunk.Text, func(t string) {
			if want[t] && !seen[t] {
				seen[t] = true
				df[t]++
			}
		})
	}
	n := float64(len(hits))
	out := make(map[string]float64, len(terms))
	for _, t := range terms {
		f := float64(df[t])
		out[t] = math.Log(1 + (n-f+0.5)/(f+0.5))
	}
	return out, nil
}
