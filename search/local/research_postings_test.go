//go:build research

package local

import (
	"strings"
	"testing"

	"github.com/docent-hq/docent/search"
)

// BenchmarkResearchPostings: what an in-memory inverted index would add to
// Open at the benchmark's size: analyzing every stored chunk (title,
// section, text) and appending it to term postings.
//
//	go test -tags research ./search/local -run '^$' -bench 'Open|ResearchPostings' -benchtime 3x
func BenchmarkResearchPostings(b *testing.B) {
	benchIndex(b)
	for b.Loop() {
		post := map[string][]int32{}
		for i, c := range bench.chunks {
			seen := map[string]bool{}
			for _, s := range [3]string{c.Title, strings.Join(c.Section, " > "), c.Text} {
				search.AnalyzeFunc(s, func(t string) {
					if !seen[t] {
						seen[t] = true
						post[t] = append(post[t], int32(i))
					}
				})
			}
		}
		b.ReportMetric(float64(len(post)), "terms")
	}
}
