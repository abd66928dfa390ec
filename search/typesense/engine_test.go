package typesense_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/confluence"
	"github.com/docent-hq/docent/connectors/confluence/confluencetest"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/store"
)

// TestSyncImportFailure syncs 500 one-chunk Confluence pages through the
// sync engine into the Typesense backend while the server refuses one chunk:
// that document is reported by ID, the other 499 are searchable and in
// the registry, the cursor stays, and the next run indexes the refused
// one and nothing else.
func TestSyncImportFailure(t *testing.T) {
	ctx := context.Background()
	c := MustCluster(t, 3)
	ix := MustOpen(t, c, "docs")
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "docent.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// A Confluence Data Center space of 500 pages, served by the
	// in-repo Confluence, read by the real connector and chunked by the
	// real chunker.
	wiki := confluencetest.New(t, confluencetest.DataCenter, "ENG")
	pageIDs := make([]string, 500)
	for i := range pageIDs {
		pageIDs[i] = wiki.Put(confluencetest.Page{SpaceKey: "ENG", Title: fmt.Sprintf("Page %03d", i),
			Body: fmt.Sprintf("<p>Body of page %d with word%d.</p>", i, i)})
	}
	src, err := confluence.New("hb", confluence.Options{BaseURL: wiki.URL, Flavor: confluence.Flavor(wiki.Flavor),
		Token: confluencetest.Token, Spaces: []string{"ENG"}, Clock: connectorstest.NewClock(confluencetest.Start)})
	if err != nil {
		t.Fatal(err)
	}
	docID := func(i int) string { return "hb:" + pageIDs[i] }
	emb := connectorstest.NewEmbedder("m1")
	eng := connectors.NewEngine(db, ix, emb, search.Chunker{TargetTokens: 512, OverlapTokens: 40}, nil, connectors.EngineOptions{})
	bad := docID(321)
	c.RejectDocuments(func(doc map[string]any) string {
		if doc["doc_id"] == bad {
			return "simulated: refused"
		}
		return ""
	})
	res, err := eng.Sync(ctx, src, nil)
	if err != nil {
		t.Fatalf("first sync: %v", err)
	}
	if res.Added != 499 || res.Failed != 1 || len(res.Errors) != 1 || res.Errors[0].ID != bad ||
		!strings.Contains(res.Errors[0].Err, "refused") {
		t.Fatalf("first run: added %d, failed %d, errors %+v; want 499 added and %s failed", res.Added, res.Failed, res.Errors, bad)
	}
	docs, err := db.Documents(ctx, "hb")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := docs[bad]; ok || len(docs) != 499 {
		t.Errorf("registry holds %d documents (refused one present: %v), want the 499 that landed", len(docs), ok)
	}
	if cur, _ := db.Cursor(ctx, "hb"); cur != "" {
		t.Errorf("cursor advanced to %q despite a refused document", cur)
	}
	for _, i := range []int{0, 320, 322, 499} {
		hits, err := ix.KeywordSearch(ctx, search.KeywordQuery{Text: fmt.Sprintf("word%d", i), K: 3})
		if err != nil || len(hits) != 1 || hits[0].Chunk.DocID != docID(i) {
			t.Errorf("word%d: %v, %v", i, hits, err)
		}
	}

	c.RejectDocuments(nil)
	res, err = eng.Sync(ctx, src, nil)
	if err != nil {
		t.Fatalf("second sync: %v", err)
	}
	if res.Added != 1 || res.Unchanged != 499 || res.Failed != 0 {
		t.Errorf("second run: added %d, unchanged %d, failed %d; want 1, 499, 0", res.Added, res.Unchanged, res.Failed)
	}
	docs, err = db.Documents(ctx, "hb")
	if err != nil {
		t.Fatal(err)
	}
	ids, err := ix.ChunkIDs(ctx, "hb")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 500 || len(ids) != 500 || !slices.Equal(docs[bad].ChunkIDs, ids[bad]) || len(ids[bad]) != 1 {
		t.Errorf("after the retry: registry %d documents, index %d; %s registry %v, index %v",
			len(docs), len(ids), bad, docs[bad].ChunkIDs, ids[bad])
	}
	if cur, _ := db.Cursor(ctx, "hb"); cur == "" {
		t.Error("cursor not advanced after a clean run")
	}
	if v := c.Violations(); len(v) != 1 || !strings.Contains(v[0], "refused") {
		t.Errorf("violations = %v, want only the simulated refusal", v)
	}
}
