package stale

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/store"
)

// mustPass feeds chunks to c as the sync engine's corpus pass does.
func mustPass(tb testing.TB, c *Checker, chunks []docent.Chunk) {
	tb.Helper()
	add, done := c.BeginPass()
	for _, ch := range chunks {
		add(ch)
	}
	done(nil)
}

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestReport(t *testing.T) {
	ctx := context.Background()
	now := day("2026-11-30")
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "docent.db"), store.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	docs := []docent.DocRecord{
		{ID: "hb:old.md", Source: "hb", Path: "old.md", Title: "Guest Wi-Fi", UpdatedAt: day("2020-02-11")},
		{ID: "hb:fresh.md", Source: "hb", Path: "fresh.md", Title: "VPN", UpdatedAt: day("2026-10-01")},
		{ID: "hb:expense.md", Source: "hb", Path: "expense.md", Title: "Travel and Expense Policy", UpdatedAt: day("2026-01-15")},
		{ID: "hb:expense-2021.md", Source: "hb", Path: "expense-2021.md", Title: "Travel and Expense Policy (2021)", UpdatedAt: day("2021-03-01")},
		{ID: "hb:gone.md", Source: "hb", Path: "gone.md", Title: "Gone", UpdatedAt: day("2026-09-01")},
		{ID: "wiki:page", Source: "wiki", Path: "page", Title: "Wiki page", UpdatedAt: day("2026-05-01")},
		{ID: "hb:taxi.md", Source: "hb", Path: "taxi.md", Title: "Taxis", UpdatedAt: day("2026-06-01")},
		{ID: "hb:taxi-2021.md", Source: "hb", Path: "taxi-2021.md", Title: "Taxis", UpdatedAt: day("2021-06-01")},
		{ID: "hb:kilns/gas.md", Source: "hb", Path: "kilns/gas.md", Title: "Kilns", UpdatedAt: day("2026-06-01").Add(time.Microsecond)},
		{ID: "hb:kilns/electric.md", Source: "hb", Path: "kilns/electric.md", Title: "Kilns", UpdatedAt: day("2026-06-01").Add(2 * time.Microsecond)},
	}
	for _, d := range docs {
		if err := db.PutDocument(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.MarkDeleted(ctx, []string{"hb:gone.md"}); err != nil {
		t.Fatal(err)
	}
	if err := db.ImportGolden(ctx, []docent.GoldenQuestion{
		{ID: "q-gone", Question: "?", Kind: "exact", Expect: []docent.GoldenExpect{{Doc: "gone.md"}}},
		{ID: "q-never", Question: "?", Kind: "exact", Expect: []docent.GoldenExpect{{Doc: "renamed.md"}}},
		{ID: "q-old", Question: "?", Kind: "exact", Expect: []docent.GoldenExpect{{Doc: "old.md"}}},
	}, true); err != nil {
		t.Fatal(err)
	}
	// Answers in the window: the fresh page cited twice, once rated not
	// helpful; the old page once; an eval turn that must not count.
	for i, c := range []struct {
		doc, platform string
		rating        docent.Rating
	}{{"hb:fresh.md", "slack", docent.RatingNotHelpful}, {"hb:fresh.md", "api", ""}, {"hb:old.md", "api", ""}, {"hb:old.md", "eval", ""}} {
		turn := docent.Turn{Question: docent.Question{Text: "q", Platform: c.platform},
			Answer:    docent.Answer{Status: docent.StatusAnswered, Citations: []docent.Citation{{N: 1, DocID: c.doc}}},
			CreatedAt: now.Add(-time.Duration(i+1) * time.Hour)}
		if err := db.CreateTurn(ctx, &turn); err != nil {
			t.Fatal(err)
		}
		if c.rating != "" {
			if err := db.CreateFeedback(ctx, &docent.Feedback{TurnID: turn.ID, Rating: c.rating}); err != nil {
				t.Fatal(err)
			}
		}
	}
	chunks := []docent.Chunk{
		{ID: "e1", DocID: "hb:expense.md", UpdatedAt: day("2026-01-15"), Title: "Travel and Expense Policy", Section: []string{"Meal per diem"},
			Text: "Travel and Expense Policy > Meal per diem\n\n| United States | $75 |\n| Europe | €60 |"},
		{ID: "e2", DocID: "hb:expense-2021.md", UpdatedAt: day("2021-03-01"), Title: "Travel and Expense Policy (2021)", Section: []string{"Meal per diem"},
			Text: "Travel and Expense Policy (2021) > Meal per diem\n\n| United States | $50 |\n| Europe | €45 |"},
		{ID: "v1", DocID: "hb:fresh.md", UpdatedAt: day("2026-10-01"), Title: "VPN", Section: []string{"Setup"}, Text: "VPN > Setup\n\nInstall the client."},
		{ID: "w1", DocID: "wiki:page", UpdatedAt: day("2026-05-01"), Title: "Wiki page", Text: "Wiki page\n\nNotes."},
		// Alike headings whose amounts are of other kinds (a count, dollar
		// amounts) and whose texts differ: no conflict.
		{ID: "t1", DocID: "hb:taxi.md", UpdatedAt: day("2026-06-01"), Title: "Taxis", Section: []string{"Rides"},
			Text: "Taxis > Rides\n\nTaxis are reimbursed up to $25, or $50 at night."},
		{ID: "t2", DocID: "hb:taxi-2021.md", UpdatedAt: day("2021-06-01"), Title: "Taxis", Section: []string{"Rides"},
			Text: "Taxis > Rides\n\nKeep 1 receipt for every ride you take."},
		// Sibling pages written the same day (one checkout, file times
		// microseconds apart), alike headings, other amounts: neither is
		// newer, so neither conflicts with the other.
		{ID: "k1", DocID: "hb:kilns/gas.md", UpdatedAt: day("2026-06-01").Add(time.Microsecond), Title: "Kilns", Section: []string{"Cooling"},
			Text: "Kilns > Cooling\n\nLet the kiln cool for 2 days before you open it."},
		{ID: "k2", DocID: "hb:kilns/electric.md", UpdatedAt: day("2026-06-01").Add(2 * time.Microsecond), Title: "Kilns", Section: []string{"Cooling"},
			Text: "Kilns > Cooling\n\nLet the kiln cool for 1 day before you open it."},
	}
	policy := map[string]int{"hb": 365, "wiki": 90}
	c := New(db, Options{MaxAgeDays: func(s string) int { return policy[s] }, ExcludePlatform: "eval",
		Now: func() time.Time { return now }})
	// Before any pass only what the sync does not derive: the feedback,
	// and the golden question's page no source has.
	if rep, err := c.Report(ctx); err != nil || len(rep.Items) != 2 || rep.Items[0].Doc.ID != "hb:fresh.md" || rep.Items[1].Doc.ID != "renamed.md" {
		t.Fatalf("before any pass: %+v, %v; want the page rated not helpful and the golden question's unknown page", rep.Items, err)
	}
	mustPass(t, c, chunks)
	rep, err := c.Report(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	var order []string
	for _, it := range rep.Items {
		for _, f := range it.Findings {
			got[it.Doc.ID] = append(got[it.Doc.ID], f.Kind)
		}
		order = append(order, it.Doc.ID)
	}
	want := map[string][]string{
		"hb:old.md":          {Old},
		"hb:expense-2021.md": {Old, Conflict},
		"hb:fresh.md":        {NotHelpful},
		"hb:gone.md":         {Gone},
		"renamed.md":         {Gone},
		"wiki:page":          {Old},
		"hb:taxi-2021.md":    {Old},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("findings = %v\nwant %v", got, want)
	}
	// Ranked by impact (answers × staleness): the old page (1 answer, 6.8×
	// its policy) before the fresh page (2 answers, 1×), then the uncited.
	if order[0] != "hb:old.md" || order[1] != "hb:fresh.md" {
		t.Errorf("order = %v, want hb:old.md then hb:fresh.md first", order)
	}
	for _, it := range rep.Items {
		switch it.Doc.ID {
		case "hb:old.md":
			if it.Cited != 1 || it.AgeDays != 2484 || it.MaxAgeDays != 365 || !reflect.DeepEqual(it.Golden, []string{"q-old"}) {
				t.Errorf("old page = %+v", it)
			}
		case "hb:expense-2021.md":
			f := it.Findings[1]
			if f.Other != "hb:expense.md" || f.Detail != "“Meal per diem” says $50, €45 where the newer Travel and Expense Policy (updated 2026-01-15) says $75, €60" {
				t.Errorf("conflict = %+v", f)
			}
		case "wiki:page":
			if it.MaxAgeDays != 90 {
				t.Errorf("wiki policy = %d, want its source's 90", it.MaxAgeDays)
			}
		}
	}

	// The stored state, as chat reads it: the sync's findings, not the
	// feedback's (the fresh page rated not helpful is the console's).
	flagged, err := c.Stale(ctx, []string{"hb:old.md", "hb:expense.md", "hb:fresh.md"})
	if err != nil || !reflect.DeepEqual(flagged, map[string]bool{"hb:old.md": true}) {
		t.Fatalf("Stale = %v, %v", flagged, err)
	}
	why, err := c.Flagged(ctx, []string{"hb:old.md", "hb:expense.md", "hb:fresh.md", "hb:expense-2021.md", "hb:expense-2021.md"})
	if want := map[string]string{"hb:old.md": "older than its source's policy",
		"hb:expense-2021.md": "older than its source's policy; conflicts with a newer page"}; err != nil || !reflect.DeepEqual(why, want) {
		t.Fatalf("Flagged = %v, %v\nwant %v", why, err, want)
	}
	rec, err := db.Document(ctx, "hb:expense-2021.md")
	if err != nil || rec.Stale.MaxAgeDays != 365 || !rec.Stale.After.Equal(day("2022-03-02")) || len(rec.Stale.Findings) != 1 ||
		rec.Stale.Findings[0].Kind != Conflict {
		t.Errorf("stored state of the 2021 policy = %+v, %v", rec.Stale, err)
	}
	// An acknowledgement keeps the document listed but no longer stale.
	if err := db.AckStale(ctx, docent.StaleAck{DocID: "hb:old.md", Until: now.Add(24 * time.Hour), By: "alice"}); err != nil {
		t.Fatal(err)
	}
	if flagged, _ := c.Stale(ctx, []string{"hb:old.md"}); flagged["hb:old.md"] {
		t.Error("an acknowledged document is still stale")
	}
	// The golden set changed: Refresh derives gone-while-expected again
	// and keeps the pass's conflicts.
	if err := db.ImportGolden(ctx, []docent.GoldenQuestion{{ID: "q-old", Question: "?", Kind: "exact",
		Expect: []docent.GoldenExpect{{Doc: "old.md"}}}}, true); err != nil {
		t.Fatal(err)
	}
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if rec, err := db.Document(ctx, "hb:gone.md"); err != nil || len(rec.Stale.Findings) != 0 {
		t.Errorf("gone page no golden question expects: state %+v, %v", rec.Stale, err)
	}
	if why, err := c.Flagged(ctx, []string{"hb:expense-2021.md"}); err != nil || why["hb:expense-2021.md"] != "older than its source's policy; conflicts with a newer page" {
		t.Errorf("after Refresh: %v, %v", why, err)
	}
}
