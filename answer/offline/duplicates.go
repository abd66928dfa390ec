package offline

import "github.com/docent-hq/docent"

// Versions compares two chunks of different documents the way answers
// flag conflicting sources, without a question: Similar reports that
// their headings (title and section words, numbers left out) are alike
// enough to be versions of the same content, and OnlyA and OnlyB list
// the amounts ("$75", "30 day", "15%") each states that the other does
// not. The console's stale-documents page uses it to find conflicting
// near-duplicates.
func Versions(a, b docent.Chunk) (similar bool, onlyA, onlyB []string) {
	if !similarHeadings(a, b) {
		return false, nil, nil
	}
	aa, ab := amounts(a.Text), amounts(b.Text)
	return true, minus(aa, ab), minus(ab, aa)
}

// HeadingTerms returns the analyzed words of a chunk's title and section
// path, numbers left out: what Versions compares.
func HeadingTerms(c docent.Chunk) map[string]bool { return headingTerms(c) }

func docKey(c docent.Chunk) string {
	if c.DocID != "" {
		return c.DocID
	}
	return c.ID
}

func round4(f float64) float64 {
	return float64(int64(f*10000+0.5)) / 10000
}
