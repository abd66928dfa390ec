package stale_test

import (
	"context"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/bot"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/stale"
)

var _ bot.StaleChecker = (*stale.Checker)(nil)

// notifySyncer tells when each of the scheduler's syncs has returned
// (the corpus pass, and so the derivation, ends inside Sync).
type notifySyncer struct {
	connectors.Syncer
	done chan docent.RunResult
}

func (n notifySyncer) Sync(ctx context.Context, src connectors.Source, progress func(connectors.Progress)) (docent.RunResult, error) {
	res, err := n.Syncer.Sync(ctx, src, progress)
	n.done <- res
	return res, err
}

// busy reports whether any of the scheduler's sources is queued or running.
func busy(s *connectors.Scheduler) bool {
	for _, j := range s.Status() {
		if j.Queued || j.Running {
			return true
		}
	}
	return false
}

// TestFlagsFollowTheScheduledSync: the scheduler's syncs, with nobody
// opening the console, derive each document's state in the corpus pass
// and store it with its record; chat's flags (Checker.Stale, and
// Flagged, which the API uses) read it and never scan the index; an
// acknowledgement outlives the re-syncs that rewrite the state, and the
// flag comes back when it is withdrawn.
func TestFlagsFollowTheScheduledSync(t *testing.T) {
	ctx := context.Background()
	db, local := connectorstest.OpenStores(t)
	idx := &connectorstest.ScanCounter{Index: local}
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	chk := stale.New(db, stale.Options{MaxAgeDays: func(string) int { return 3650 }, Now: func() time.Time { return now }})
	eng := connectors.NewEngine(db, idx, connectorstest.NewEmbedder("v1"), search.Chunker{}, nil, connectors.EngineOptions{})
	eng.Derive(chk)

	clk := connectorstest.NewClock(now)
	syncs := notifySyncer{Syncer: eng, done: make(chan docent.RunResult, 1)}
	sched := connectors.NewScheduler(syncs, nil, connectors.SchedulerOptions{Workers: 1, Clock: clk})
	src := connectorstest.NewSource("hb")
	if err := sched.Add(src, "@every 1h"); err != nil {
		t.Fatal(err)
	}
	schedCtx, stop := context.WithCancel(ctx)
	if err := sched.Start(schedCtx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(); sched.Wait() })
	scheduledSync := func(name string) docent.RunResult {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		// The scheduler waits for its next due time, and has finished the
		// last run (notifySyncer reports a run before the scheduler books
		// it; a tick while the source still runs is skipped).
		for clk.Waiters() != 1 || busy(sched) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the scheduler never waited for its next run", name)
			}
			time.Sleep(time.Millisecond)
		}
		clk.Advance(time.Hour)
		select {
		case res := <-syncs.done:
			if res.Err != "" || res.Failed != 0 {
				t.Fatalf("%s: scheduled sync %+v", name, res)
			}
			return res
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: the scheduled sync did not run", name)
		}
		return docent.RunResult{}
	}

	page := func(path, title, amount string, updated time.Time) docent.Document {
		return docent.Document{ID: "hb:" + path, Source: "hb", Path: path, Title: title, UpdatedAt: updated,
			Body: "# " + title + "\n\n## Meal per diem\n\n| Region | Per day |\n|---|---|\n| United States | " + amount + " |\n"}
	}
	newer := page("expense.md", "Travel and Expense Policy", "$75", now.AddDate(0, -10, 0))
	older := page("expense-2021.md", "Travel and Expense Policy (2021)", "$50", now.AddDate(-5, 0, 0))
	ids := []string{newer.ID, older.ID}
	for _, step := range []struct {
		name   string
		change func()
		want   map[string]bool // flagged for chat
		stored int             // findings stored with the older copy's record
	}{
		{"one policy", func() { src.Put(newer) }, map[string]bool{}, 0},
		{"an older copy added", func() { src.Put(older) }, map[string]bool{older.ID: true}, 1},
		{"acknowledged, then an unchanged re-sync", func() {
			if err := db.AckStale(ctx, docent.StaleAck{DocID: older.ID, Until: now.AddDate(0, 3, 0), By: "alice"}); err != nil {
				t.Fatal(err)
			}
		}, map[string]bool{}, 1},
		{"the newer page edited: the state derived again, the ack kept", func() {
			edited := newer
			edited.Body += "\nReceipts are required.\n"
			src.Put(edited)
		}, map[string]bool{}, 1},
		{"the ack withdrawn", func() {
			if err := db.UnackStale(ctx, older.ID); err != nil {
				t.Fatal(err)
			}
		}, map[string]bool{older.ID: true}, 1},
		{"the copy now agrees, same date", func() {
			agreed := older
			agreed.Body = newer.Body
			agreed.Title, agreed.UpdatedAt = newer.Title, newer.UpdatedAt
			src.Put(agreed)
		}, map[string]bool{}, 0},
		{"the copy deleted", func() { src.Delete(older.ID) }, map[string]bool{}, 0},
	} {
		step.change()
		scheduledSync(step.name)
		before := idx.Scans()
		for range 3 { // as three chat answers would ask
			got, err := chk.Stale(ctx, ids)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(step.want) || (len(step.want) > 0 && !got[older.ID]) {
				t.Errorf("%s: flagged %v, want %v", step.name, got, step.want)
			}
			why, err := chk.Flagged(ctx, ids)
			if err != nil || len(why) != len(step.want) {
				t.Errorf("%s: Flagged %v, %v; want %v", step.name, why, err, step.want)
			}
		}
		if n := idx.Scans() - before; n != 0 {
			t.Errorf("%s: the chat path's flags scanned the index %d times", step.name, n)
		}
		rec, err := db.Document(ctx, older.ID)
		if err == nil && len(rec.Stale.Findings) != step.stored {
			t.Errorf("%s: stored with the record: %+v, want %d finding(s)", step.name, rec.Stale, step.stored)
		}
	}
}
