package local_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/local"
)

// chunkOf is a one-chunk document whose vector points along axis.
func chunkOf(doc, text string, axis int) docent.Chunk {
	v := make([]float32, 4)
	v[axis%4] = 1
	return docent.Chunk{ID: doc + "#0", DocID: doc, Source: "s", Title: doc, Text: text, Vector: v}
}

func mustOpen(t *testing.T, path string) *local.Index {
	t.Helper()
	ix, err := local.Open(context.Background(), path, local.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func keywordDocs(t *testing.T, ix *local.Index, text string) []string {
	t.Helper()
	hits, err := ix.KeywordSearch(context.Background(), search.KeywordQuery{Text: text, K: 10})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hits {
		out = append(out, h.Chunk.DocID)
	}
	return out
}

// TestRefreshFollowsAnotherWriter: a second handle on the same file (the
// way `docent mcp` reads the index `docent serve` syncs) keeps the state
// it loaded until Refresh, which reloads after each write of the other
// handle (upsert, delete, embedder name) and only then.
func TestRefreshFollowsAnotherWriter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	writer := mustOpen(t, path)
	if err := writer.Upsert(ctx, []docent.Chunk{chunkOf("vpn", "reset your vpn token", 0)}); err != nil {
		t.Fatal(err)
	}
	reader := mustOpen(t, path)
	if changed, err := reader.Refresh(ctx); err != nil || changed {
		t.Fatalf("Refresh right after Open = %v, %v; want no reload", changed, err)
	}
	if got := keywordDocs(t, reader, "vpn token"); len(got) != 1 {
		t.Fatalf("reader finds %v", got)
	}

	if err := writer.Upsert(ctx, []docent.Chunk{chunkOf("wifi", "guest wifi password token", 1)}); err != nil {
		t.Fatal(err)
	}
	if got := keywordDocs(t, reader, "token"); len(got) != 1 {
		t.Fatalf("reader sees the other handle's write before Refresh: %v", got)
	}
	if changed, err := reader.Refresh(ctx); err != nil || !changed {
		t.Fatalf("Refresh after a write = %v, %v; want a reload", changed, err)
	}
	if got := keywordDocs(t, reader, "token"); len(got) != 2 {
		t.Fatalf("after Refresh the reader finds %v, want both documents", got)
	}
	hits, err := reader.VectorSearch(ctx, search.VectorQuery{Vector: []float32{0, 1, 0, 0}, K: 1})
	if err != nil || len(hits) != 1 || hits[0].Chunk.DocID != "wifi" {
		t.Fatalf("vector search after Refresh = %+v, %v", hits, err)
	}
	if changed, _ := reader.Refresh(ctx); changed {
		t.Error("a second Refresh with no write in between reloaded")
	}

	if err := writer.DeleteDocs(ctx, "vpn"); err != nil {
		t.Fatal(err)
	}
	if changed, err := reader.Refresh(ctx); err != nil || !changed {
		t.Fatalf("Refresh after a delete = %v, %v", changed, err)
	}
	if got := keywordDocs(t, reader, "vpn token"); len(got) != 1 || got[0] != "wifi" {
		t.Errorf("after the delete the reader finds %v, want only wifi", got)
	}
	if err := writer.SetEmbedderName(ctx, "offline-x"); err != nil {
		t.Fatal(err)
	}
	if changed, _ := reader.Refresh(ctx); !changed {
		t.Error("Refresh after a new embedder name did not reload")
	}
	// The writer's own writes never make it reload.
	if changed, _ := writer.Refresh(ctx); changed {
		t.Error("the writer reloaded its own writes")
	}
}

// TestRefreshWhileWriting: searches and refreshes on a reader run while
// the writer syncs batches; every search succeeds and each sees a whole
// committed batch, never a part of one (-race checks the swap).
func TestRefreshWhileWriting(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	writer := mustOpen(t, path)
	if err := writer.Upsert(ctx, []docent.Chunk{chunkOf("seed", "seed batch", 0)}); err != nil {
		t.Fatal(err)
	}
	reader := mustOpen(t, path)
	const batches, perBatch = 20, 5
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		for b := range batches {
			var chunks []docent.Chunk
			for i := range perBatch {
				// texts of their own: copies would fold into one
				chunks = append(chunks, chunkOf(fmt.Sprintf("b%d-%d", b, i), fmt.Sprintf("batch words %d %d", b, i), i))
			}
			if err := writer.Upsert(ctx, chunks); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := reader.Refresh(ctx); err != nil {
					t.Error(err)
					return
				}
				hits, err := reader.KeywordSearch(ctx, search.KeywordQuery{Text: "batch words", K: 1000})
				if err != nil {
					t.Error(err)
					return
				}
				if n := len(hits) - 1; n%perBatch != 0 { // the seed matches "batch" too
					t.Errorf("a search saw %d chunks of the batches: part of a batch", n)
					return
				}
			}
		})
	}
	wg.Wait()
	if _, err := reader.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if n, want := len(keywordDocs(t, reader, "batch words")), 10; n != want { // K is 10
		t.Errorf("after the sync the reader finds %d, want %d", n, want)
	}
}
