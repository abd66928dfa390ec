package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent"
)

// TestPruneTurns: turns past the age or count are deleted with their
// trace chunks (a chunk a kept turn uses stays), and the database file
// shrinks.
func TestPruneTurns(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	path := filepath.Join(t.TempDir(), "docent.db")
	db, err := Open(ctx, path, WithClock(clk.Now))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	// 200 turns, one every 12 hours (100 days): each retrieves a chunk of
	// its own and one every turn shares.
	const n = 200
	var ids []int64
	for i := range n {
		tu := fullTurn(time.Time{})
		tu.Question.Text = fmt.Sprintf("question %d", i)
		tu.Answer.Trace.Candidates[1].Chunk.Text = fmt.Sprintf("%d ", i) + strings.Repeat(fmt.Sprintf("unique words of turn %d. ", i), 300)
		if err := db.CreateTurn(ctx, &tu); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tu.ID)
		clk.Advance(12 * time.Hour)
	}
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	before := fileSize(t, path)

	// By age: the turns of the first 10 days go (now is day 100).
	res, err := db.PruneTurns(ctx, Retention{MaxAge: 90 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if res.Turns != 20 || res.Chunks != 20 {
		t.Errorf("pruned %d turns, %d chunks; want 20 and 20", res.Turns, res.Chunks)
	}
	mustTurns(t, db, ids[20:])

	// By count: the 50 newest stay.
	res, err = db.PruneTurns(ctx, Retention{MaxAge: 365 * 24 * time.Hour, MaxTurns: 50})
	if err != nil {
		t.Fatal(err)
	}
	if res.Turns != 130 || res.Chunks != 130 {
		t.Errorf("pruned %d turns, %d chunks; want 130 and 130", res.Turns, res.Chunks)
	}
	mustTurns(t, db, ids[150:])
	var chunks int
	if err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM trace_chunks`).Scan(&chunks); err != nil {
		t.Fatal(err)
	}
	if chunks != 51 { // one per kept turn, and the shared one
		t.Errorf("%d trace chunks left, want 51", chunks)
	}
	// The kept turns read back whole, shared chunk included.
	tu, err := db.Turn(ctx, ids[n-1])
	if err != nil {
		t.Fatal(err)
	}
	if c := tu.Answer.Trace.Candidates; c[0].Chunk.Text != "Leave > Parental\nSixteen weeks." ||
		!strings.HasPrefix(c[1].Chunk.Text, fmt.Sprintf("%d unique words", n-1)) {
		t.Errorf("kept turn's candidates: %q, %.30q", c[0].Chunk.Text, c[1].Chunk.Text)
	}

	after := fileSize(t, path)
	t.Logf("file %d -> %d bytes; reported %d -> %d", before, after, res.SizeBefore, res.SizeAfter)
	if after > before/2 {
		t.Errorf("file went from %d to %d bytes after pruning 3/4 of the turns; want it at most halved", before, after)
	}
	if res.SizeAfter >= res.SizeBefore {
		t.Errorf("reported size %d -> %d, want smaller", res.SizeBefore, res.SizeAfter)
	}

	// Nothing left to prune: nothing changes.
	res, err = db.PruneTurns(ctx, Retention{MaxAge: 365 * 24 * time.Hour, MaxTurns: 50})
	if err != nil || res.Turns != 0 || res.Chunks != 0 {
		t.Errorf("second prune: %+v, %v", res, err)
	}
}

// TestPruneTurnsWithTheirReferences: a pruned turn takes its feedback and
// miss review with it (the foreign keys would refuse the delete
// otherwise), while what outlives a turn by design stays: the handoff
// of its thread and a golden question made from it.
func TestPruneTurnsWithTheirReferences(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "docent.db"), WithClock(clk.Now))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	var ids []int64
	for i := range 2 {
		tu := fullTurn(time.Time{})
		if err := db.CreateTurn(ctx, &tu); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tu.ID)
		if err := db.CreateFeedback(ctx, &docent.Feedback{TurnID: tu.ID, Rating: docent.RatingNotHelpful}); err != nil {
			t.Fatal(err)
		}
		if err := db.AssignMiss(ctx, tu.ID, "bob", "alice"); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			clk.Advance(100 * 24 * time.Hour)
		}
	}
	h := docent.Handoff{TurnID: ids[0], Platform: "slack", Channel: "C1", Thread: "1.1", RequestedBy: "U1"}
	if err := db.CreateHandoff(ctx, &h); err != nil {
		t.Fatal(err)
	}
	if err := db.PutGolden(ctx, docent.GoldenQuestion{ID: "vpn", Question: "vpn?", Kind: "answer", FromTurn: ids[0]}); err != nil {
		t.Fatal(err)
	}

	res, err := db.PruneTurns(ctx, Retention{MaxAge: 90 * 24 * time.Hour})
	if err != nil || res.Turns != 1 {
		t.Fatalf("PruneTurns = %+v, %v; want the old turn pruned", res, err)
	}
	mustTurns(t, db, ids[1:])
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := db.r.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, id := range ids {
		want := 0
		if id == ids[1] {
			want = 1
		}
		if n := count(`SELECT COUNT(*) FROM feedback WHERE turn_id = ?`, id); n != want {
			t.Errorf("turn %d: %d feedback rows, want %d", id, n, want)
		}
		if n := count(`SELECT COUNT(*) FROM miss_reviews WHERE turn_id = ?`, id); n != want {
			t.Errorf("turn %d: %d miss reviews, want %d", id, n, want)
		}
	}
	if _, err := db.Handoff(ctx, h.ID); err != nil {
		t.Errorf("the handoff of a pruned turn's thread: %v, want it kept", err)
	}
	if _, err := db.Golden(ctx, "vpn"); err != nil {
		t.Errorf("the golden question made from a pruned turn: %v, want it kept", err)
	}
}

// TestOpenEnablesIncrementalVacuum: a database made without incremental
// auto-vacuum (by an older binary) is switched to it, keeping its data.
func TestOpenEnablesIncrementalVacuum(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "docent.db")
	old, err := openAt(ctx, path, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.w.ExecContext(ctx, `PRAGMA auto_vacuum = none`); err != nil {
		t.Fatal(err)
	}
	if _, err := old.w.ExecContext(ctx, `VACUUM`); err != nil {
		t.Fatal(err)
	}
	if err := old.SetCursor(ctx, "git", "abc"); err != nil {
		t.Fatal(err)
	}
	var mode int
	if err := old.w.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil || mode != 0 {
		t.Fatalf("old database auto_vacuum = %d, %v; want 0", mode, err)
	}
	old.Close()

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.r.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil || mode != 2 {
		t.Errorf("auto_vacuum = %d, %v; want 2 (incremental)", mode, err)
	}
	if c, err := db.Cursor(ctx, "git"); err != nil || c != "abc" {
		t.Errorf("cursor after the vacuum = %q, %v", c, err)
	}
}

func mustTurns(t *testing.T, db *DB, want []int64) {
	t.Helper()
	got, err := db.ListTurns(context.Background(), TurnFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || got[0].ID != want[len(want)-1] || got[len(got)-1].ID != want[0] {
		t.Fatalf("%d turns kept (IDs %d..%d), want %d (%d..%d)", len(got), got[len(got)-1].ID, got[0].ID,
			len(want), want[0], want[len(want)-1])
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// TestTraceStoredCompactly: a trace is stored deflated, and a chunk many
// turns retrieved is stored once.
func TestTraceStoredCompactly(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	text := strings.Repeat("Expenses over 75 EUR need a receipt and the manager's approval. ", 40)
	var want docent.Turn
	for i := range 10 {
		tu := fullTurn(time.Time{})
		tu.Question.Text = fmt.Sprintf("q%d", i)
		for j := range tu.Answer.Trace.Candidates {
			tu.Answer.Trace.Candidates[j].Chunk.Text = text
		}
		if err := db.CreateTurn(ctx, &tu); err != nil {
			t.Fatal(err)
		}
		want = tu
	}
	var chunks, traceBytes int
	if err := db.r.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM trace_chunks), MAX(LENGTH(trace_z)) FROM turns`).Scan(&chunks, &traceBytes); err != nil {
		t.Fatal(err)
	}
	if chunks != 2 {
		t.Errorf("%d trace chunks stored, want the two candidates' chunks once each", chunks)
	}
	if traceBytes == 0 || traceBytes > 600 {
		t.Errorf("stored trace is %d bytes, want a compact one under 600", traceBytes)
	}
	got, err := db.Turn(ctx, want.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Answer.Trace, want.Answer.Trace) {
		t.Errorf("trace read back:\n got %+v\nwant %+v", got.Answer.Trace, want.Answer.Trace)
	}
}
