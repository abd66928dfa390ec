package store

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/docent-hq/docent"
)

func TestMarkEventSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "docent.db")
	clk := newClock()
	db, err := Open(ctx, path, WithClock(clk.Now))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false, false} {
		if got, err := db.MarkEvent(ctx, "slack", "Ev1"); err != nil || got != want {
			t.Fatalf("delivery %d: MarkEvent = %v, %v; want %v", i+1, got, err, want)
		}
	}
	if got, _ := db.MarkEvent(ctx, "discord", "Ev1"); !got {
		t.Error("the same event ID on another platform is a different event")
	}
	db.Close()
	db, err = Open(ctx, path, WithClock(clk.Now))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got, _ := db.MarkEvent(ctx, "slack", "Ev1"); got {
		t.Error("an event delivered before a restart was new again after it")
	}
	clk.Advance(48 * time.Hour)
	if n, err := db.PruneEvents(ctx, clk.Now().Add(-24*time.Hour)); err != nil || n != 2 {
		t.Errorf("PruneEvents = %d, %v; want 2", n, err)
	}
}

func TestHandoffLifecycle(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	db := MustOpen(t, WithClock(clk.Now))
	if _, ok, err := db.ThreadHandoff(ctx, "slack", "C1", "1.0"); ok || err != nil {
		t.Fatalf("ThreadHandoff of a new thread: %v, %v; want none", ok, err)
	}
	h := docent.Handoff{TurnID: 7, Platform: "slack", Channel: "C1", Thread: "1.0", Question: "gym?", RequestedBy: "U1"}
	if err := db.CreateHandoff(ctx, &h); err != nil {
		t.Fatal(err)
	}
	if h.ID == 0 || h.State != docent.HandoffRequested || !h.RequestedAt.Equal(clk.Now()) {
		t.Fatalf("created %+v", h)
	}
	clk.Advance(5 * time.Minute)
	h.State, h.ClaimedBy, h.ClaimedAt, h.EscalationRef = docent.HandoffClaimed, "U9", clk.Now(), "C9/2.0"
	h.LastReplyBy, h.LastReply = "U9", "Yes, up to $50 a month."
	if err := db.UpdateHandoff(ctx, h); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	h.State, h.ResolvedBy, h.ResolvedAt = docent.HandoffResolved, "U9", clk.Now()
	if err := db.UpdateHandoff(ctx, h); err != nil {
		t.Fatal(err)
	}
	got, ok, err := db.ThreadHandoff(ctx, "slack", "C1", "1.0")
	if err != nil || !ok || !reflect.DeepEqual(got, h) {
		t.Errorf("ThreadHandoff = %+v, %v\nwant %+v", got, err, h)
	}
	if byID, _ := db.Handoff(ctx, h.ID); !reflect.DeepEqual(byID, h) {
		t.Errorf("Handoff(%d) = %+v", h.ID, byID)
	}
	if err := db.UpdateHandoff(ctx, docent.Handoff{ID: 999, State: docent.HandoffClaimed}); !errors.Is(err, ErrNotFound) {
		t.Errorf("UpdateHandoff of an unknown ID: %v", err)
	}
	second := docent.Handoff{Platform: "slack", Channel: "C1", Thread: "1.0", Question: "again"}
	if err := db.CreateHandoff(ctx, &second); err != nil {
		t.Fatal(err)
	}
	if latest, _, _ := db.ThreadHandoff(ctx, "slack", "C1", "1.0"); latest.ID != second.ID {
		t.Errorf("ThreadHandoff = %d, want the latest %d", latest.ID, second.ID)
	}
	open, err := db.ListHandoffs(ctx, HandoffFilter{State: docent.HandoffRequested})
	if err != nil || len(open) != 1 || open[0].ID != second.ID {
		t.Errorf("requested handoffs = %+v, %v", open, err)
	}
	if of7, err := db.ListHandoffs(ctx, HandoffFilter{TurnID: 7}); err != nil || len(of7) != 1 || of7[0].ID != h.ID {
		t.Errorf("turn 7's handoffs = %+v, %v; want %d", of7, err, h.ID)
	}

	k := docent.KnowledgeCandidate{HandoffID: h.ID, TurnID: 7, Question: "gym?", Answer: h.LastReply, Author: "U9"}
	if err := db.CreateKnowledgeCandidate(ctx, &k); err != nil {
		t.Fatal(err)
	}
	ks, err := db.ListKnowledgeCandidates(ctx, 0)
	if err != nil || len(ks) != 1 || !reflect.DeepEqual(ks[0], k) {
		t.Errorf("knowledge candidates = %+v, %v; want [%+v]", ks, err, k)
	}
	other := docent.KnowledgeCandidate{HandoffID: second.ID, TurnID: 8, Question: "again", Answer: "no", Author: "U3"}
	if err := db.CreateKnowledgeCandidate(ctx, &other); err != nil {
		t.Fatal(err)
	}
	if ks, err := db.TurnKnowledgeCandidates(ctx, 7); err != nil || len(ks) != 1 || !reflect.DeepEqual(ks[0], k) {
		t.Errorf("turn 7's knowledge candidates = %+v, %v; want [%+v]", ks, err, k)
	}
	if ks, _ := db.ListKnowledgeCandidates(ctx, 0); len(ks) != 2 || ks[0].ID != other.ID {
		t.Errorf("knowledge candidates = %+v, want the newest first", ks)
	}
}

func TestListTurnsOfThread(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var ids []int64
	for i, c := range []struct{ channel, thread string }{{"C1", "1.0"}, {"C1", "2.0"}, {"C1", "1.0"}, {"C2", "1.0"}} {
		tu := docent.Turn{Question: docent.Question{Text: "q", Platform: "slack", Channel: c.channel, Thread: c.thread},
			Answer: docent.Answer{Status: docent.StatusAnswered}, CreatedAt: base.Add(time.Duration(i) * time.Minute)}
		if err := db.CreateTurn(ctx, &tu); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tu.ID)
	}
	turns, err := db.ListTurns(ctx, TurnFilter{Platform: "slack", Channel: "C1", Thread: "1.0"})
	if err != nil || len(turns) != 2 || turns[0].ID != ids[2] || turns[1].ID != ids[0] {
		t.Errorf("thread turns = %v, %v; want %d then %d", turns, err, ids[2], ids[0])
	}
	oldest, err := db.ThreadTurns(ctx, "slack", "C1", "1.0", 5)
	if err != nil || len(oldest) != 2 || oldest[0].ID != ids[0] {
		t.Errorf("ThreadTurns = %v, %v; want oldest first", oldest, err)
	}
}

// TestHandoffFailedState: a handoff whose escalation the platform refused
// is stored as failed, with no resolver and no resolved time; it is no
// resolved handoff.
func TestHandoffFailedState(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	db := MustOpen(t, WithClock(clk.Now))
	h := docent.Handoff{Platform: "slack", Channel: "C1", Thread: "1.0", RequestedBy: "U1"}
	if err := db.CreateHandoff(ctx, &h); err != nil {
		t.Fatal(err)
	}
	h.State = docent.HandoffFailed
	if err := db.UpdateHandoff(ctx, h); err != nil {
		t.Fatalf("UpdateHandoff to failed: %v", err)
	}
	got, err := db.Handoff(ctx, h.ID)
	if err != nil || got.State != docent.HandoffFailed || !got.ResolvedAt.IsZero() || got.ResolvedBy != "" {
		t.Errorf("Handoff = %+v, %v; want failed, unresolved", got, err)
	}
	if resolved, err := db.ListHandoffs(ctx, HandoffFilter{State: docent.HandoffResolved}); err != nil || len(resolved) != 0 {
		t.Errorf("resolved handoffs = %+v, %v; want none", resolved, err)
	}
}

// TestMigrateFailedHandoffs: v10 rebuilds handoffs for the failed state.
// A handoff stored as resolved by no one, with no escalation post (a
// refused escalation, as v5 to v9 stored it), becomes failed; the others
// and the knowledge candidates on them are kept, IDs and all.
func TestMigrateFailedHandoffs(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "docent.db")
	old, err := openAt(ctx, path, 9)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO handoffs (id, platform, channel, thread, state, requested_by, requested_at, resolved_at)
			VALUES (1, 'slack', 'C1', '1.0', 'resolved', 'U1', '2026-01-02T03:04:05.000000000Z', '2026-01-02T03:04:06.000000000Z')`,
		`INSERT INTO handoffs (id, platform, channel, thread, state, requested_by, resolved_by, requested_at, resolved_at, escalation_ref)
			VALUES (2, 'slack', 'C1', '2.0', 'resolved', 'U1', 'U9', '2026-01-02T03:04:05.000000000Z', '2026-01-02T04:04:05.000000000Z', 'E/2.0')`,
		`INSERT INTO handoffs (id, platform, channel, thread, state, requested_by, requested_at, escalation_ref)
			VALUES (3, 'slack', 'C1', '3.0', 'requested', 'U1', '2026-01-02T03:04:05.000000000Z', 'E/3.0')`,
		`INSERT INTO knowledge_candidates (handoff_id, answer, created_at) VALUES (2, 'Ask facilities.', '2026-01-02T04:04:05.000000000Z')`,
	} {
		if _, err := old.w.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	want := map[int64]docent.HandoffState{1: docent.HandoffFailed, 2: docent.HandoffResolved, 3: docent.HandoffRequested}
	for id, st := range want {
		h, err := db.Handoff(ctx, id)
		if err != nil || h.State != st {
			t.Errorf("handoff %d = %+v, %v; want %s", id, h, err, st)
		}
		if st == docent.HandoffFailed && !h.ResolvedAt.IsZero() {
			t.Errorf("failed handoff %d keeps a resolved time %v", id, h.ResolvedAt)
		}
		if st == docent.HandoffResolved && (h.ResolvedBy != "U9" || h.ResolvedAt.IsZero()) {
			t.Errorf("resolved handoff %d lost its resolver or time: %+v", id, h)
		}
	}
	ks, err := db.ListKnowledgeCandidates(ctx, 10)
	if err != nil || len(ks) != 1 || ks[0].HandoffID != 2 || ks[0].Answer != "Ask facilities." {
		t.Errorf("knowledge candidates = %+v, %v; want the one on handoff 2", ks, err)
	}
	h := docent.Handoff{Platform: "slack", Channel: "C1", Thread: "4.0"}
	if err := db.CreateHandoff(ctx, &h); err != nil || h.ID <= 3 {
		t.Errorf("new handoff ID = %d, %v; want past 3", h.ID, err)
	}
}
