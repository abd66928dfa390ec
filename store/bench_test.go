package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/docent-hq/docent"
)

// BenchmarkRegistry measures the registry at the scale of a 200k-chunk
// index (40,000 documents of five chunks): writing one document, and the
// per-sync load of a source's live documents. Run:
//
//	go test ./store -run '^$' -bench Registry -benchtime 20x
func BenchmarkRegistry(b *testing.B) {
	ctx := context.Background()
	db := MustOpen(b)
	const docs, perDoc = 40000, 5
	rec := func(i int) docent.DocRecord {
		ids := make([]string, perDoc)
		for j := range ids {
			ids[j] = fmt.Sprintf("%032x", i*perDoc+j)
		}
		return docent.DocRecord{
			ID: fmt.Sprintf("wiki:page-%06d", i), Source: "wiki", Path: fmt.Sprintf("page-%06d", i),
			Title: "Page", ContentHash: fmt.Sprintf("%064x", i), UpdatedAt: time.Unix(int64(i), 0), ChunkIDs: ids,
		}
	}
	start := time.Now()
	for i := range docs {
		if err := db.PutDocument(ctx, rec(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%d documents written in %s (%.0f docs/s)", docs, time.Since(start).Round(time.Millisecond), docs/time.Since(start).Seconds())

	b.Run("Documents", func(b *testing.B) {
		for b.Loop() {
			m, err := db.Documents(ctx, "wiki")
			if err != nil || len(m) != docs {
				b.Fatalf("Documents = %d, %v", len(m), err)
			}
		}
	})
	b.Run("PutDocument", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if err := db.PutDocument(ctx, rec(i%docs)); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
