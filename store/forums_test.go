package store

import (
	"context"
	"testing"
	"time"

	"github.com/docent-hq/docent"
)

func TestForumResolutions(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	db := MustOpen(t, WithClock(clk.Now))
	turn := func(thread string, st docent.Status) int64 {
		tr := docent.Turn{Question: docent.Question{Text: "q", Platform: "discord", Channel: "F1", Thread: thread},
			Answer: docent.Answer{Status: st}}
		if err := db.CreateTurn(ctx, &tr); err != nil {
			t.Fatal(err)
		}
		return tr.ID
	}
	turn("P1", docent.StatusAnswered)
	last := turn("P1", docent.StatusAnswered)
	turn("P2", docent.StatusNotFound)
	turn("P3", docent.StatusAnswered)
	if err := db.CreateHandoff(ctx, &docent.Handoff{Platform: "discord", Channel: "F1", Thread: "P2", RequestedBy: "U2"}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	r := docent.ForumResolution{Platform: "discord", Forum: "F1", ForumName: "help", Thread: "P1", How: docent.ResolvedAskerReaction, By: "U1"}
	if ok, err := db.RecordForumResolution(ctx, r); !ok || err != nil {
		t.Fatalf("RecordForumResolution = %v, %v; want recorded", ok, err)
	}
	again := r
	again.How, again.By = docent.ResolvedHandoff, "U9"
	if ok, err := db.RecordForumResolution(ctx, again); ok || err != nil {
		t.Fatalf("second RecordForumResolution = %v, %v; want kept the first", ok, err)
	}
	got, ok, err := db.ForumResolution(ctx, "discord", "P1")
	if err != nil || !ok {
		t.Fatalf("ForumResolution = %v, %v", ok, err)
	}
	if got.How != docent.ResolvedAskerReaction || got.By != "U1" || got.TurnID != last || got.Forum != "F1" ||
		got.ForumName != "help" || !got.ResolvedAt.Equal(clk.Now()) {
		t.Errorf("ForumResolution = %+v; want the asker's reaction at the latest turn %d", got, last)
	}
	if _, ok, err := db.ForumResolution(ctx, "discord", "P2"); ok || err != nil {
		t.Errorf("ForumResolution of an open post = %v, %v", ok, err)
	}
	if _, err := db.RecordForumResolution(ctx, docent.ForumResolution{Platform: "discord", Forum: "F1", Thread: "P2",
		How: docent.ResolvedHandoff, By: "U9"}); err != nil {
		t.Fatal(err)
	}
	stats, err := db.ForumStats(ctx, clk.Now().Add(-time.Hour), clk.Now().Add(time.Second),
		[]ForumRef{{"discord", "F0"}, {"discord", "F1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != 2 || stats[0].Forum != "F0" || stats[0].Posts != 0 || stats[0].SolvedTotal() != 0 {
		t.Fatalf("ForumStats = %+v; want the empty configured forum F0 first", stats)
	}
	f := stats[1]
	if f.ForumName != "help" || f.Posts != 3 || f.Answered != 2 || f.HandedOff != 1 || f.SolvedTotal() != 2 ||
		f.Solved[docent.ResolvedAskerReaction] != 1 || f.Solved[docent.ResolvedHandoff] != 1 {
		t.Errorf("ForumStats[F1] = %+v", f)
	}
	// A forum with a resolution is listed though not configured.
	stats, err = db.ForumStats(ctx, clk.Now().Add(-time.Hour), clk.Now().Add(time.Second), nil)
	if err != nil || len(stats) != 1 || stats[0].Forum != "F1" {
		t.Errorf("ForumStats(no forums) = %+v, %v; want F1", stats, err)
	}
}
