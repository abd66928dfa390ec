package local_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/local"
	"github.com/docent-hq/docent/search/searchtest"
)

func TestIndexSuite(t *testing.T) {
	dir := t.TempDir()
	searchtest.RunIndexSuite(t, func(t *testing.T, name string) search.Index {
		ix, err := local.Open(context.Background(), filepath.Join(dir, name+".db"), local.Options{})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return ix
	}, searchtest.Capabilities{ExactTies: true, Stemming: true, TermStats: true, FoldsCopies: true})
}
