package console

import (
	"context"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/store"
)

// TestOverviewForums: the overview shows each forum's posts — answered
// by docent, handed off, solved and how — for the configured forums and
// any with a recorded resolution.
func TestOverviewForums(t *testing.T) {
	e := newEnv(t, func(o *Options) {
		o.Forums = []store.ForumRef{{Platform: "discord", ID: "F-quiet"}, {Platform: "discord", ID: "F-help"}}
	})
	ctx := context.Background()
	turn := func(thread string, st docent.Status) {
		tu := docent.Turn{Question: docent.Question{Text: "VPN?", Platform: "discord", Channel: "F-help", Thread: thread},
			Answer: docent.Answer{Status: st, Text: "Reset it."}}
		if err := e.db.CreateTurn(ctx, &tu); err != nil {
			t.Fatal(err)
		}
	}
	turn("P1", docent.StatusAnswered)
	turn("P2", docent.StatusAnswered)
	turn("P3", docent.StatusNotFound)
	if err := e.db.CreateHandoff(ctx, &docent.Handoff{Platform: "discord", Channel: "F-help", Thread: "P3", RequestedBy: "U3"}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []docent.ForumResolution{
		{Platform: "discord", Forum: "F-help", ForumName: "help", Thread: "P1", How: docent.ResolvedAskerReaction, By: "U1"},
		{Platform: "discord", Forum: "F-help", ForumName: "help", Thread: "P2", How: docent.ResolvedAskerReaction, By: "U2"},
		{Platform: "discord", Forum: "F-help", ForumName: "help", Thread: "P3", How: docent.ResolvedHandoff, By: "U9"},
		{Platform: "discord", Forum: "F-old", Thread: "P9", How: docent.ResolvedStaffSaid, By: "U9"},
	} {
		if _, err := e.db.RecordForumResolution(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	c := e.client()
	c.login()
	rows := c.get("/?window=24h").doc.Find(`[data-testid=forum-row]`)
	if rows.Length() != 3 {
		t.Fatalf("%d forum rows, want the two configured and the one with a resolution", rows.Length())
	}
	want := [][]string{
		{"F-quiet discord", "0", "0", "0", "0", ""},
		{"#help discord", "3", "2", "1", "3", "asker ✅ 2 · handoff resolved 1"},
		{"F-old discord", "0", "0", "0", "1", "staff said solved 1"},
	}
	for i, w := range want {
		row := rows.Eq(i)
		for j, sel := range []string{"forum-name", "forum-posts", "forum-answered", "forum-handed-off", "forum-solved", "forum-how"} {
			if got := text(row.Find(`[data-testid=` + sel + `]`)); got != w[j] {
				t.Errorf("row %d %s = %q, want %q", i, sel, got, w[j])
			}
		}
	}
}
