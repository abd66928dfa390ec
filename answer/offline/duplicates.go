package offline

import (
	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// The comparison of versions lives in package search (search.Versions),
// shared with stale detection; these are the answerer's names for it.

func termSet(text string) map[string]bool         { return search.TermSet(text) }
func compounds(text string) []string              { return search.Compounds(text) }
func joinCompound(w string) string                { return search.JoinCompound(w) }
func headingTerms(c docent.Chunk) map[string]bool { return search.HeadingTerms(c) }
func similarHeadings(a, b docent.Chunk) bool      { return search.SimilarHeadings(a, b) }
func amounts(text string) map[string]bool         { return search.Amounts(text) }
func isNumber(t string) bool                      { return search.IsNumber(t) }

// minHeadingJaccard is how alike two chunks' headings must be to be
// versions of the same content (search.MinHeadingJaccard).
const minHeadingJaccard = search.MinHeadingJaccard

func docKey(c docent.Chunk) string {
	if c.DocID != "" {
		return c.DocID
	}
	return c.ID
}

func round4(f float64) float64 {
	return float64(int64(f*10000+0.5)) / 10000
}
