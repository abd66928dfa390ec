package searchtest_test

import (
	"testing"

	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/searchtest"
)

func TestMemorySuite(t *testing.T) {
	store := searchtest.NewMemoryStore()
	searchtest.RunIndexSuite(t, func(t *testing.T, name string) search.Index {
		return store.Open(name)
	}, searchtest.Capabilities{ExactTies: true, Stemming: true, LargeBatch: 2000})
}
