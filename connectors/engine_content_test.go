package connectors_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/connectors/files"
	"github.com/docent-hq/docent/search"
)

// TestSyncContentCounts: a run records what its documents held — markup
// without text dropped, documents that give no chunk, documents over the
// size limit, fragments left to the pages that include them, documents
// indexed with a warning — in the run result and in the store, and counts
// the unchanged documents of a later run the same way.
func TestSyncContentCounts(t *testing.T) {
	ctx := context.Background()
	db, idx := connectorstest.OpenStores(t)
	fsys := fstest.MapFS{
		"index.md":          {Data: []byte("# Storage\n\nCopies are checked on both sides of a transfer, with checksums.\n\n{{< features-table >}}\n\n{{< img src=\"x.svg\" >}}\n")},
		"backends.md":       {Data: []byte("---\ntitle: Backends\nlayout: backends-list\n---\n")},
		"big.md":            {Data: []byte("# Big\n\n" + strings.Repeat("A long generated page. ", 100))},
		"guide.md":          {Data: []byte("# Guide\n\nStart here.\n\n--8<-- \"snippets/note.md\"\n\n--8<-- \"missing.yml\"\n")},
		"snippets/note.md":  {Data: []byte("!!! note\n    Restart after changing the static configuration.\n")},
		"broken.md":         {Data: []byte("---\ntitle: [oops\n---\n\nStill indexed, every word of it.\n")},
		"plain/readme.txt":  {Data: []byte("Plain text is not normalised.\n")},
		"drafts/ignored.md": {Data: []byte("# Not included\n")},
	}
	src := files.New("hb", fsys, files.Options{MaxBytes: 1000, Exclude: []string{"drafts/**"}})
	eng := connectors.NewEngine(db, idx, connectorstest.NewEmbedder("v1"), search.Chunker{}, nil, connectors.EngineOptions{})

	want := func(res docent.RunResult) {
		t.Helper()
		c := res.Content
		if c.Dropped != 2 || c.Empty != 1 || c.Oversized != 1 || c.Fragments != 1 {
			t.Errorf("dropped %d empty %d oversized %d fragments %d, want 2 1 1 1", c.Dropped, c.Empty, c.Oversized, c.Fragments)
		}
		warned := map[string]string{}
		for _, w := range c.Warnings {
			warned[w.ID] = w.Err
		}
		if len(warned) != 2 || !strings.Contains(warned["hb:broken.md"], "front matter not used") ||
			!strings.Contains(warned["hb:guide.md"], "include not found: missing.yml") {
			t.Errorf("warnings %v, want broken.md's front matter and guide.md's missing include", c.Warnings)
		}
	}
	res, err := eng.Sync(ctx, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	want(res)
	if res.Added != 5 || res.Failed != 1 {
		t.Errorf("added %d failed %d, want 5 documents (the fragment left out) and big.md failed", res.Added, res.Failed)
	}
	runs, err := db.ListRuns(ctx, "hb", 1)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	want(runs[0].RunResult)

	// The fragment's text is in the page that includes it.
	var guide string
	if err := idx.Scan(ctx, func(c docent.Chunk) error {
		if c.DocID == "hb:snippets/note.md" {
			t.Errorf("the fragment is indexed on its own: %q", c.Text)
		}
		if c.DocID == "hb:guide.md" {
			guide += c.Text
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(guide, "Restart after changing the static configuration.") {
		t.Errorf("guide.md chunks %q lack the included note", guide)
	}

	res, err = eng.Sync(ctx, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Unchanged != 5 {
		t.Errorf("second run: unchanged %d, want 5", res.Unchanged)
	}
	want(res)
}
