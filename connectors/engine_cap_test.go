package connectors_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/search"
)

// TestSyncCapsChunksPerDocument: a document that would make more chunks
// than MaxChunksPerDoc is indexed as its first ones and named in the run
// (Truncated, not counted as failed), with the search chunker (which
// stops at the cap) and with one that does not (whose output is cut),
// with a plain and with a Trainable embedder; documents under the cap
// are whole.
func TestSyncCapsChunksPerDocument(t *testing.T) {
	var big strings.Builder
	for i := range 40 {
		fmt.Fprintf(&big, "## Part %d\n\nPart %d has its own paragraph of text.\n\n", i, i)
	}
	for _, tc := range []struct {
		name string
		ch   connectors.Chunker
		emb  search.Embedder
	}{
		// Small sections stay apart: each part is one chunk.
		{"search chunker", search.Chunker{MinSectionChars: -1}, connectorstest.NewEmbedder("m")},
		{"other chunker", connectorstest.Chunker{}, connectorstest.NewEmbedder("m")},
		{"trainable embedder", search.Chunker{MinSectionChars: -1}, &connectorstest.Trainable{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, idx := connectorstest.OpenStores(t)
			src := connectorstest.NewSource("hb")
			src.Put(doc("big.md", big.String()), doc("small.md", "# Small\n\nJust one.\n"))
			e := connectors.NewEngine(db, idx, tc.emb, tc.ch, nil, connectors.EngineOptions{MaxChunksPerDoc: 10})
			res, err := e.Sync(context.Background(), src, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Added != 2 || res.Failed != 0 {
				t.Errorf("added %d, failed %d; want both added, none failed", res.Added, res.Failed)
			}
			var notes []docent.DocError
			for _, de := range res.Errors {
				if de.Truncated {
					notes = append(notes, de)
				}
			}
			if len(notes) != 1 || notes[0].ID != "hb:big.md" || notes[0].Retry ||
				!strings.Contains(notes[0].Err, "first 10 chunks") || !strings.Contains(notes[0].Err, "more were left out") {
				t.Errorf("run notes %+v, want big.md named as cut at 10 chunks", res.Errors)
			}
			ids, err := idx.ChunkIDs(context.Background(), "hb")
			if err != nil {
				t.Fatal(err)
			}
			if len(ids["hb:big.md"]) != 10 || len(ids["hb:small.md"]) == 0 {
				t.Errorf("indexed %d chunks of big.md and %d of small.md, want 10 and all", len(ids["hb:big.md"]), len(ids["hb:small.md"]))
			}
			// Stored with the run, and nothing changes on the next run.
			runs, err := db.ListRuns(context.Background(), "hb", 1)
			if err != nil || len(runs) != 1 || len(runs[0].Errors) != 1 || !runs[0].Errors[0].Truncated || runs[0].Failed != 0 {
				t.Fatalf("stored run = %+v, %v", runs, err)
			}
			again, err := e.Sync(context.Background(), src, nil)
			if err != nil || again.Unchanged != 2 || again.Added+again.Updated != 0 {
				t.Errorf("second run = %+v, %v; want both unchanged", again, err)
			}
		})
	}
}
