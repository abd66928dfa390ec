package store

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent"
)

// fill caps the database at its current size plus extra pages, as a full
// disk would (SQLite's own max_page_count on the write connection).
func fill(t *testing.T, db *DB, extra int) {
	t.Helper()
	ctx := context.Background()
	var pages int
	if _, err := db.w.ExecContext(ctx, `PRAGMA incremental_vacuum`); err != nil {
		t.Fatal(err)
	}
	if err := db.w.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	var got int
	if err := db.w.QueryRowContext(ctx, `PRAGMA max_page_count = `+strconv.Itoa(pages+extra)).Scan(&got); err != nil {
		t.Fatal(err)
	}
}

// TestWriteHealthOnFullDatabase: writes into a full database fail with
// ErrStorageUnavailable (a refused write does not); after three in a row
// WriteHealth reports it, and it recovers once the database has room,
// with no other write needed (its probe).
func TestWriteHealthOnFullDatabase(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	tu := fullTurn(time.Time{})
	if err := db.CreateTurn(ctx, &tu); err != nil {
		t.Fatal(err)
	}
	if err := db.WriteHealth(ctx); err != nil {
		t.Fatalf("healthy store: %v", err)
	}
	// A write the database refuses is not unavailability.
	if err := db.CreateFeedback(ctx, &docent.Feedback{TurnID: 999999, Rating: docent.RatingHelpful}); err == nil ||
		errors.Is(err, docent.ErrStorageUnavailable) {
		t.Fatalf("feedback on an unknown turn: %v, want a refusal that is not storage_unavailable", err)
	}
	fill(t, db, 0)
	for i := range unhealthyAfter {
		big := fullTurn(time.Time{})
		big.Answer.Text = strings.Repeat("a long answer that needs new pages ", 2000)
		err := db.CreateTurn(ctx, &big)
		if !errors.Is(err, docent.ErrStorageUnavailable) {
			t.Fatalf("turn %d into a full database: %v, want ErrStorageUnavailable", i, err)
		}
		if i < unhealthyAfter-1 {
			if herr := db.WriteHealth(ctx); herr != nil {
				t.Fatalf("after %d failed writes: %v, want still healthy", i+1, herr)
			}
		}
	}
	err := db.WriteHealth(ctx)
	if !errors.Is(err, docent.ErrStorageUnavailable) || !strings.Contains(err.Error(), "writes failed: database or disk is full") {
		t.Fatalf("after %d failed writes: %v, want unavailable", unhealthyAfter, err)
	}
	// Room again: the probe succeeds and health comes back (the next
	// check after probeEvery).
	if _, err := db.w.ExecContext(ctx, `PRAGMA max_page_count = 1073741823`); err != nil {
		t.Fatal(err)
	}
	db.health.mu.Lock()
	db.health.probed = time.Time{}
	db.health.mu.Unlock()
	if err := db.WriteHealth(ctx); err != nil {
		t.Fatalf("with room again: %v, want healthy", err)
	}
	big := fullTurn(time.Time{})
	if err := db.CreateTurn(ctx, &big); err != nil {
		t.Fatalf("a turn after recovery: %v", err)
	}
}
