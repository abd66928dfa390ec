//go:build research

package search_test

import "github.com/docent-hq/docent/search"

func variants() []variant {
	f := search.DefaultFusion()
	return []variant{
		{"hybrid (no feedback)", search.RetrieverOptions{Fusion: f, FeedbackDocs: -1}},
		{"default", search.RetrieverOptions{Fusion: f}},
	}
}
