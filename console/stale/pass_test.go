package stale_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/console/stale"
	"github.com/docent-hq/docent/search"
)

// countingIndex counts full scans of the index.
type countingIndex struct {
	search.Index
	scans atomic.Int32
}

func (c *countingIndex) Scan(ctx context.Context, fn func(docent.Chunk) error) error {
	c.scans.Add(1)
	return c.Index.Scan(ctx, fn)
}

// TestFlagsFollowTheSync: the conflicts are found in the sync engine's
// corpus pass, so the chat path's flags (Checker.Stale) change after a
// sync with nobody opening the console and without the flags ever
// scanning the index.
func TestFlagsFollowTheSync(t *testing.T) {
	ctx := context.Background()
	db, local := connectorstest.OpenStores(t)
	idx := &countingIndex{Index: local}
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	chk := stale.New(db, idx, stale.Options{MaxAgeDays: func(string) int { return 3650 }, Now: func() time.Time { return now }})
	eng := connectors.NewEngine(db, idx, connectorstest.NewEmbedder("v1"), search.Chunker{}, nil, connectors.EngineOptions{})
	eng.Derive(chk)
	page := func(path, title, amount string, updated time.Time) docent.Document {
		return docent.Document{ID: "hb:" + path, Source: "hb", Path: path, Title: title, UpdatedAt: updated,
			Body: "# " + title + "\n\n## Meal per diem\n\n| Region | Per day |\n|---|---|\n| United States | " + amount + " |\n"}
	}
	newer := page("expense.md", "Travel and Expense Policy", "$75", now.AddDate(0, -10, 0))
	older := page("expense-2021.md", "Travel and Expense Policy (2021)", "$50", now.AddDate(-5, 0, 0))
	src := connectorstest.NewSource("hb")
	ids := []string{newer.ID, older.ID}
	for _, step := range []struct {
		name   string
		change func()
		want   map[string]bool
	}{
		{"one policy", func() { src.Put(newer) }, map[string]bool{}},
		{"an older copy added", func() { src.Put(older) }, map[string]bool{older.ID: true}},
		{"the copy now agrees, same date", func() {
			agreed := older
			agreed.Body = newer.Body
			agreed.Title, agreed.UpdatedAt = newer.Title, newer.UpdatedAt
			src.Put(agreed)
		}, map[string]bool{}},
		{"the copy deleted", func() { src.Delete(older.ID) }, map[string]bool{}},
	} {
		step.change()
		if _, err := eng.Sync(ctx, src, nil); err != nil {
			t.Fatal(err)
		}
		before := idx.scans.Load()
		for range 3 { // as three chat answers would ask
			got, err := chk.Stale(ctx, ids)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(step.want) || (len(step.want) > 0 && !got[older.ID]) {
				t.Errorf("%s: flagged %v, want %v", step.name, got, step.want)
			}
		}
		if n := idx.scans.Load() - before; n != 0 {
			t.Errorf("%s: the chat path's flags scanned the index %d times", step.name, n)
		}
	}
}
