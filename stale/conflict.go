package stale

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// maxTermChunks skips heading words shared by more chunks than this when
// pairing candidates, so that pairing stays near linear on large corpora.
const maxTermChunks = 64

// minTextSimilarity is how alike (Jaccard of their words) two sections
// with alike headings must be to count as near-duplicates by text alone.
const minTextSimilarity = 0.5

// conflictFinder gathers the indexed chunks of one corpus pass and pairs
// those of different documents whose headings are alike and that either
// state other amounts or, nearly the same text, carry other dates. The
// older document of each pair gets a finding. Every indexed chunk is of a
// live document (the sync deletes a gone document's chunks before the
// pass); the report checks liveness again against the registry.
type conflictFinder struct {
	chunks []docent.Chunk
	heads  []map[string]bool
	byTerm map[string][]int
}

func (f *conflictFinder) add(ch docent.Chunk) {
	if f.byTerm == nil {
		f.byTerm = map[string][]int{}
	}
	ch.Vector = nil
	h := search.HeadingTerms(ch)
	for t := range h {
		f.byTerm[t] = append(f.byTerm[t], len(f.chunks))
	}
	f.chunks = append(f.chunks, ch)
	f.heads = append(f.heads, h)
}

// find returns the conflicts, by older document.
func (f *conflictFinder) find() map[string][]Finding {
	chunks, heads, byTerm := f.chunks, f.heads, f.byTerm
	type pair struct{ older, newer string }
	seen := map[pair]bool{}
	out := map[string][]Finding{}
	words := map[int]map[string]bool{}
	textOf := func(i int) map[string]bool {
		if w, ok := words[i]; ok {
			return w
		}
		w := map[string]bool{}
		search.AnalyzeFunc(chunks[i].Text, func(t string) { w[t] = true })
		words[i] = w
		return w
	}
	amounts := map[int]map[string]bool{}
	amountsOf := func(i int) map[string]bool {
		if a, ok := amounts[i]; ok {
			return a
		}
		a := search.Amounts(chunks[i].Text)
		amounts[i] = a
		return a
	}
	for i := range chunks {
		cands := map[int]bool{}
		for t := range heads[i] {
			if js := byTerm[t]; len(js) <= maxTermChunks {
				for _, j := range js {
					if j > i {
						cands[j] = true
					}
				}
			}
		}
		for _, j := range slices.Sorted(maps.Keys(cands)) {
			a, b := chunks[i], chunks[j]
			if a.DocID == b.DocID {
				continue
			}
			// Versions of one content: alike headings and other amounts,
			// measured once per chunk rather than once per pair.
			if search.Jaccard(heads[i], heads[j]) < search.MinHeadingJaccard {
				continue
			}
			// A conflict is with a newer page: sections of pages written
			// the same day (the option tables of sibling pages, the files
			// of one checkout) are of one time, and neither is outdated.
			aNewer, bNewer := search.Newer(a.UpdatedAt, b.UpdatedAt), search.Newer(b.UpdatedAt, a.UpdatedAt)
			if !aNewer && !bNewer {
				continue
			}
			ai, aj := amountsOf(i), amountsOf(j)
			onlyA, onlyB := search.Minus(ai, aj), search.Minus(aj, ai)
			onlyA, onlyB = sameKind(onlyA, onlyB)
			numbers := len(onlyA) > 0 && len(onlyB) > 0
			dates := search.Jaccard(textOf(i), textOf(j)) >= minTextSimilarity
			if !numbers && !dates {
				continue
			}
			if aNewer {
				a, b, onlyA, onlyB = b, a, onlyB, onlyA
			}
			p := pair{a.DocID, b.DocID}
			if seen[p] {
				continue
			}
			seen[p] = true
			section := strings.Join(a.Section, " › ")
			if section == "" {
				section = a.Title
			}
			db := docent.DocRecord{ID: b.DocID, Title: b.Title, UpdatedAt: b.UpdatedAt}
			detail := fmt.Sprintf("“%s” is a near-duplicate of %s (updated %s)", section, db.Title, dateOf(db))
			if numbers {
				detail = fmt.Sprintf("“%s” says %s where the newer %s (updated %s) says %s",
					section, strings.Join(onlyA, ", "), db.Title, dateOf(db), strings.Join(onlyB, ", "))
			}
			out[a.DocID] = append(out[a.DocID], Finding{Kind: Conflict, Detail: detail, Other: db.ID})
		}
	}
	return out
}

func dateOf(d docent.DocRecord) string {
	if d.UpdatedAt.IsZero() {
		return "date unknown"
	}
	return d.UpdatedAt.Format("2006-01-02")
}

// sameKind keeps the amounts of the kinds both sides state ("$" amounts
// against "$" amounts, days against days): "says 1 where the newer says
// $25" compares nothing.
func sameKind(a, b []string) (ka, kb []string) {
	kinds := func(s []string) map[string]bool {
		m := map[string]bool{}
		for _, x := range s {
			m[amountKind(x)] = true
		}
		return m
	}
	inA, inB := kinds(a), kinds(b)
	for _, x := range a {
		if inB[amountKind(x)] {
			ka = append(ka, x)
		}
	}
	for _, x := range b {
		if inA[amountKind(x)] {
			kb = append(kb, x)
		}
	}
	return ka, kb
}

// amountKind is an amount without its number: its currency sign and its
// unit ("$", " day", "%"; "" for a bare number).
func amountKind(a string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' || r == '.' {
			return -1
		}
		return r
	}, a)
}
