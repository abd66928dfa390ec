package offline

import (
	"context"
	"sort"
	"strings"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/search"
)

// PageOrder is the offline Reranker. It keeps the fused order except
// where two page-level signals say otherwise:
//
//   - A page with several strong chunks among the candidates is more
//     likely the page about the question than a page with one chunk that
//     happens to match: each hit's score is its fused score plus
//     pageWeight times the fused scores of the other candidates of its
//     document (among the first pageDepth). Chunks under the same heading
//     count once, the best of them: the parts of one long section, and
//     the parallel sections a page repeats under one name ("Health check"
//     under each kind of service, "Examples" under each option), are one
//     piece of evidence, and would otherwise lift a long page of
//     look-alike sections above the page whose one section answers.
//   - A newer version goes before an older one: when two documents have
//     the same title words (numbers left out, as in "Expense policy" and
//     "Expense policy (2021)") and one was updated later, every chunk of
//     the older one goes after the newer one's first chunk.
//
// Hit.RerankScore is set to the page-level score. The chosen weights were
// fitted on examples/handbook/asked.yaml (right page first 125 → 137 of
// 154 answerable questions) and checked on golden.yaml (35 → 37 of 45).
type PageOrder struct{}

var _ answer.Reranker = PageOrder{}

// Page-level reranking parameters (see PageOrder).
const (
	pageWeight = 0.2
	pageDepth  = 20
)

// Rerank returns the hits in page order.
func (PageOrder) Rerank(_ context.Context, req answer.RerankRequest) (answer.Reranked, error) {
	hits := append([]docent.Hit(nil), req.Hits...)
	sum := map[string]float64{}
	counted := map[string]float64{} // page and heading -> the score it adds
	for i, h := range hits {
		if i >= pageDepth {
			break
		}
		k := search.ChunkDoc(h.Chunk) + "\x00" + leafHeading(h.Chunk)
		if _, ok := counted[k]; ok {
			continue
		}
		counted[k] = max(h.Score, 0)
		sum[search.ChunkDoc(h.Chunk)] += max(h.Score, 0)
	}
	type scored struct {
		i     int
		score float64
	}
	order := make([]scored, len(hits))
	for i, h := range hits {
		// what the chunk's own heading added is not its page's support
		own := counted[search.ChunkDoc(h.Chunk)+"\x00"+leafHeading(h.Chunk)]
		order[i] = scored{i, h.Score + pageWeight*(sum[search.ChunkDoc(h.Chunk)]-own)}
	}
	sort.SliceStable(order, func(a, b int) bool { return order[a].score > order[b].score })
	out := make([]docent.Hit, len(hits))
	for k, o := range order {
		out[k] = hits[o.i]
		out[k].RerankScore = round4(o.score)
	}
	return answer.Reranked{Hits: newerFirst(out)}, nil
}

// newerFirst moves the chunks of a document that has a newer version
// among the hits after the newer version's first chunk, keeping the order
// otherwise.
func newerFirst(hits []docent.Hit) []docent.Hit {
	var docs []string
	chunks := map[string][]docent.Chunk{}
	for _, h := range hits {
		k := search.ChunkDoc(h.Chunk)
		if _, ok := chunks[k]; !ok {
			docs = append(docs, k)
		}
		chunks[k] = append(chunks[k], h.Chunk)
	}
	newer := map[string]string{} // older doc -> newer doc
	for _, a := range docs {
		for _, b := range docs {
			if a != b && newerVersion(chunks[a], chunks[b]) {
				if cur, ok := newer[a]; !ok || cur > b {
					newer[a] = b
				}
			}
		}
	}
	if len(newer) == 0 {
		return hits
	}
	out := make([]docent.Hit, 0, len(hits))
	placed := map[string]bool{}
	held := map[string][]docent.Hit{}
	var flush func(k string)
	flush = func(k string) {
		rest := held[k]
		delete(held, k)
		for _, h := range rest {
			out = append(out, h)
			placed[search.ChunkDoc(h.Chunk)] = true
			flush(search.ChunkDoc(h.Chunk))
		}
	}
	for _, h := range hits {
		k := search.ChunkDoc(h.Chunk)
		if n, ok := newer[k]; ok && !placed[n] {
			held[n] = append(held[n], h)
			continue
		}
		out = append(out, h)
		placed[k] = true
		flush(k)
	}
	return out
}

// leafHeading is the heading a chunk is under, its section path's last
// element; "" for the text before a page's first heading.
func leafHeading(c docent.Chunk) string {
	if len(c.Section) == 0 {
		return ""
	}
	return strings.ToLower(strings.TrimSpace(c.Section[len(c.Section)-1]))
}

// titleTerms are the analyzed words of a title, numbers left out.
func titleTerms(title string) map[string]bool {
	set := search.TermSet(title)
	for t := range set {
		if search.IsNumber(t) {
			delete(set, t)
		}
	}
	return set
}

// jaccard is search.Jaccard: the Jaccard similarity of two sets; 0 when
// either is empty.
var jaccard = search.Jaccard
