package store

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/docent-hq/docent"
)

func mustTurn(tb testing.TB, db *DB, t docent.Turn) docent.Turn {
	tb.Helper()
	if err := db.CreateTurn(context.Background(), &t); err != nil {
		tb.Fatal(err)
	}
	return t
}

func TestAPITokens(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	db := MustOpen(t, WithClock(clk.Now))
	tok := docent.APIToken{Name: "ci", Hash: "abc", Prefix: "dct_abc", RatePerMinute: 5, CreatedBy: "admin"}
	if err := db.CreateAPIToken(ctx, &tok); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateAPIToken(ctx, &docent.APIToken{Name: "dup", Hash: "abc"}); err == nil {
		t.Error("a second token with the same hash was stored")
	}
	got, err := db.APITokenByHash(ctx, "abc")
	if err != nil || got.ID != tok.ID || got.Name != "ci" || got.RatePerMinute != 5 || got.Revoked() || !got.CreatedAt.Equal(clk.Now()) {
		t.Fatalf("APITokenByHash = %+v, %v", got, err)
	}
	if _, err := db.APITokenByHash(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown hash: %v, want ErrNotFound", err)
	}
	used := clk.Now().Add(time.Minute)
	if err := db.TouchAPIToken(ctx, tok.ID, used); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	if err := db.RevokeAPIToken(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.RevokeAPIToken(ctx, 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("revoke unknown: %v", err)
	}
	list, err := db.ListAPITokens(ctx)
	if err != nil || len(list) != 1 || !list[0].Revoked() || !list[0].LastUsedAt.Equal(used) || !list[0].RevokedAt.Equal(clk.Now()) {
		t.Fatalf("ListAPITokens = %+v, %v", list, err)
	}
}

// TestAPITokenScope: a token's scope is stored and read back with it; a
// token made without one reads everything.
func TestAPITokenScope(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	scoped := docent.APIToken{Name: "community", Hash: "h1", Scope: docent.Scope{Sources: []string{"public"}, Labels: []string{"faq", "howto"}}}
	if err := db.CreateAPIToken(ctx, &scoped); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateAPIToken(ctx, &docent.APIToken{Name: "all", Hash: "h2"}); err != nil {
		t.Fatal(err)
	}
	got, err := db.APITokenByHash(ctx, "h1")
	if err != nil || !reflect.DeepEqual(got.Scope, scoped.Scope) {
		t.Fatalf("scoped token = %+v, %v; want scope %+v", got, err, scoped.Scope)
	}
	list, err := db.ListAPITokens(ctx)
	if err != nil || len(list) != 2 || !list[0].Scope.IsZero() || !reflect.DeepEqual(list[1].Scope, scoped.Scope) {
		t.Fatalf("ListAPITokens = %+v, %v", list, err)
	}
}

// TestDocumentByURL finds a live document by its URL, with or without a
// section's #fragment; a deleted or unknown one is ErrNotFound.
func TestDocumentByURL(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	vpn := docent.DocRecord{ID: "handbook:it/vpn.md", Source: "handbook", URL: "http://localhost:8080/docs/handbook/it/vpn.md", Title: "VPN"}
	gone := docent.DocRecord{ID: "handbook:old.md", Source: "handbook", URL: "http://localhost:8080/docs/handbook/old.md"}
	for _, r := range []docent.DocRecord{vpn, gone} {
		if err := db.PutDocument(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.MarkDeleted(ctx, []string{gone.ID}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, url, want string
	}{
		{"exact", vpn.URL, vpn.ID},
		{"with a section anchor", vpn.URL + "#reset-your-token", vpn.ID},
		{"deleted", gone.URL, ""},
		{"unknown", "http://localhost:8080/docs/handbook/nope.md", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := db.DocumentByURL(ctx, tc.url)
			if tc.want == "" {
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("DocumentByURL = %+v, %v; want ErrNotFound", got, err)
				}
				return
			}
			if err != nil || got.ID != tc.want || got.Title != "VPN" {
				t.Fatalf("DocumentByURL = %+v, %v; want %s", got, err, tc.want)
			}
		})
	}
}

func TestGoldenSetAndRuns(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "docent.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	a := docent.GoldenQuestion{ID: "a", Question: "How?", Kind: "exact", Expect: []docent.GoldenExpect{{Doc: "it/vpn.md", Section: "Reset"}}, Facts: []string{"VPN-E12"}}
	b := docent.GoldenQuestion{ID: "b", Question: "Menu?", Kind: "unanswerable", Covered: "the cafeteria", FromTurn: 7}
	if err := db.ImportGolden(ctx, []docent.GoldenQuestion{a, b}, true); err != nil {
		t.Fatal(err)
	}
	a.Question = "How now?"
	if err := db.PutGolden(ctx, a); err != nil { // update keeps the position
		t.Fatal(err)
	}
	if err := db.PutGolden(ctx, docent.GoldenQuestion{ID: "c", Question: "New?", Kind: "paraphrase", Expect: []docent.GoldenExpect{{Doc: "x.md"}}}); err != nil {
		t.Fatal(err)
	}
	list, err := db.ListGolden(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, q := range list {
		ids = append(ids, q.ID)
	}
	if !reflect.DeepEqual(ids, []string{"a", "b", "c"}) || list[0].Question != "How now?" ||
		!reflect.DeepEqual(list[0].Expect, a.Expect) || !reflect.DeepEqual(list[0].Facts, a.Facts) ||
		list[1].Covered != "the cafeteria" || list[1].FromTurn != 7 || list[1].Expect != nil {
		t.Fatalf("ListGolden = %+v", list)
	}
	if err := db.DeleteGolden(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Golden(ctx, "b"); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted question: %v", err)
	}
	if err := db.ImportGolden(ctx, []docent.GoldenQuestion{{ID: "z", Question: "Z?", Kind: "exact"}}, true); err != nil {
		t.Fatal(err)
	}
	if list, _ := db.ListGolden(ctx); len(list) != 1 || list[0].ID != "z" {
		t.Errorf("replace import left %+v", list)
	}

	// A run is started, finished with its rows, and read back.
	run := docent.GoldenRun{StartedBy: "admin", Config: "index:\n  fusion: score\n", Questions: 2}
	if err := db.StartGoldenRun(ctx, &run); err != nil {
		t.Fatal(err)
	}
	rows := []docent.GoldenRunRow{
		{Position: 0, QuestionID: "a", Question: "How?", Kind: "exact", Status: "answered", Pass: true, FirstRank: 1,
			Ranked: []string{"handbook:it/vpn.md"}, Row: json.RawMessage(`{"id":"a"}`)},
		{Position: 1, QuestionID: "b", Question: "Menu?", Kind: "unanswerable", Status: "not_found", Pass: true},
	}
	if err := db.FinishGoldenRun(ctx, run.ID, json.RawMessage(`{"hit_at_5":1}`), rows, ""); err != nil {
		t.Fatal(err)
	}
	if err := db.FinishGoldenRun(ctx, run.ID, nil, nil, ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("finishing a finished run: %v, want ErrNotFound", err)
	}
	got, err := db.GoldenRunByID(ctx, run.ID)
	if err != nil || got.Status != "ok" || got.Config != run.Config || string(got.Report) != `{"hit_at_5":1}` || got.FinishedAt.IsZero() {
		t.Fatalf("GoldenRunByID = %+v, %v", got, err)
	}
	back, err := db.GoldenRunRows(ctx, run.ID)
	if err != nil || len(back) != 2 || !reflect.DeepEqual(back[0].Ranked, rows[0].Ranked) || !back[0].Pass ||
		back[0].FirstRank != 1 || string(back[0].Row) != `{"id":"a"}` || back[1].QuestionID != "b" {
		t.Fatalf("GoldenRunRows = %+v, %v", back, err)
	}

	// A run the process never finished is abandoned at the next start.
	crashed := docent.GoldenRun{Questions: 1}
	if err := db.StartGoldenRun(ctx, &crashed); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n, err := db.AbandonGoldenRuns(ctx); err != nil || n != 1 {
		t.Fatalf("AbandonGoldenRuns = %d, %v", n, err)
	}
	runs, err := db.ListGoldenRuns(ctx, 0)
	if err != nil || len(runs) != 2 || runs[0].ID != crashed.ID || runs[0].Status != "failed" || runs[0].Error == "" {
		t.Fatalf("ListGoldenRuns = %+v, %v", runs, err)
	}
}

func TestSearchTurnsMissesAndStats(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	db := MustOpen(t, WithClock(clk.Now))
	day := clk.Now()
	cite := func(doc string) []docent.Citation {
		return []docent.Citation{{N: 1, DocID: doc, Title: "T " + doc, URL: "http://x/" + doc}}
	}
	stage := func(ms int) docent.Trace {
		return docent.Trace{Stages: []docent.Stage{{Name: "retrieve", Duration: time.Duration(ms) * time.Millisecond}}}
	}
	answered := mustTurn(t, db, docent.Turn{Question: docent.Question{Text: "VPN reset?", Platform: "slack", Channel: "C1"},
		Answer: docent.Answer{Status: docent.StatusAnswered, Citations: cite("handbook:it/vpn.md"), Trace: stage(10)}, CreatedAt: day})
	notFound := mustTurn(t, db, docent.Turn{Question: docent.Question{Text: "Cafeteria 100%_menu?", Platform: "api"},
		Answer: docent.Answer{Status: docent.StatusNotFound, Trace: stage(20)}, CreatedAt: day.Add(time.Hour)})
	rated := mustTurn(t, db, docent.Turn{Question: docent.Question{Text: "Per diem?", Platform: "slack", Channel: "C2"},
		Answer:    docent.Answer{Status: docent.StatusAnswered, Citations: cite("handbook:travel/expense-policy-2021.md"), Trace: stage(30)},
		CreatedAt: day.Add(24 * time.Hour)})
	golden := mustTurn(t, db, docent.Turn{Question: docent.Question{Text: "eval q", Platform: "eval"},
		Answer: docent.Answer{Status: docent.StatusNotFound, Trace: stage(40)}, CreatedAt: day.Add(25 * time.Hour)})
	if err := db.CreateFeedback(ctx, &docent.Feedback{TurnID: rated.ID, Rating: docent.RatingNotHelpful}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateFeedback(ctx, &docent.Feedback{TurnID: answered.ID, Rating: docent.RatingHelpful}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateHandoff(ctx, &docent.Handoff{TurnID: notFound.ID, Platform: "api", Channel: "c", Thread: "t"}); err != nil {
		t.Fatal(err)
	}

	ids := func(list []docent.TurnSummary) []int64 {
		var out []int64
		for _, s := range list {
			out = append(out, s.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		q     TurnQuery
		want  []int64
		total int
	}{
		{"all newest first", TurnQuery{}, []int64{golden.ID, rated.ID, notFound.ID, answered.ID}, 4},
		{"paged", TurnQuery{Limit: 1, Offset: 1}, []int64{rated.ID}, 4},
		{"status", TurnQuery{Status: docent.StatusNotFound, ExcludePlatform: "eval"}, []int64{notFound.ID}, 1},
		{"feedback not helpful", TurnQuery{Feedback: "not_helpful"}, []int64{rated.ID}, 1},
		{"feedback none", TurnQuery{Feedback: "none"}, []int64{golden.ID, notFound.ID}, 2},
		{"platform and channel", TurnQuery{Platform: "slack", Channel: "C1"}, []int64{answered.ID}, 1},
		{"cited source", TurnQuery{CitedSource: "handbook"}, []int64{rated.ID, answered.ID}, 2},
		{"cited doc", TurnQuery{CitedDoc: "handbook:it/vpn.md"}, []int64{answered.ID}, 1},
		{"text with wildcards", TurnQuery{Text: "100%_m"}, []int64{notFound.ID}, 1},
		{"wildcard is literal", TurnQuery{Text: "a%m"}, nil, 0},
		{"date range", TurnQuery{Since: day.Add(time.Minute), Until: day.Add(24 * time.Hour)}, []int64{notFound.ID}, 1},
		{"misses open", TurnQuery{Misses: true, ExcludePlatform: "eval"}, []int64{rated.ID, notFound.ID}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, total, err := db.SearchTurns(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ids(got), tc.want) || total != tc.total {
				t.Errorf("SearchTurns = %v (total %d), want %v (total %d)", ids(got), total, tc.want, tc.total)
			}
		})
	}

	// Review and assignment move turns out of the open inbox.
	if err := db.SetReviewed(ctx, notFound.ID, "alice", true); err != nil {
		t.Fatal(err)
	}
	if err := db.AssignMiss(ctx, rated.ID, "bob", "alice"); err != nil {
		t.Fatal(err)
	}
	if err := db.SetReviewed(ctx, 999, "alice", true); !errors.Is(err, ErrNotFound) {
		t.Errorf("review unknown turn: %v", err)
	}
	open, _, err := db.SearchTurns(ctx, TurnQuery{Misses: true, ExcludePlatform: "eval"})
	if err != nil || !reflect.DeepEqual(ids(open), []int64{rated.ID}) || open[0].Assignee != "bob" || open[0].NotHelpful != 1 {
		t.Fatalf("open misses = %+v, %v", open, err)
	}
	reviewed, _, err := db.SearchTurns(ctx, TurnQuery{Misses: true, Review: "reviewed"})
	if err != nil || !reflect.DeepEqual(ids(reviewed), []int64{notFound.ID}) || reviewed[0].ReviewedBy != "alice" ||
		reviewed[0].Handoff != docent.HandoffRequested {
		t.Fatalf("reviewed misses = %+v, %v", reviewed, err)
	}
	if err := db.SetReviewed(ctx, notFound.ID, "alice", false); err != nil {
		t.Fatal(err)
	}
	if s, err := db.TurnSummaryByID(ctx, notFound.ID); err != nil || !s.ReviewedAt.IsZero() {
		t.Errorf("reopened turn = %+v, %v", s, err)
	}

	st, err := db.TurnStats(ctx, day, day.Add(48*time.Hour), "eval")
	if err != nil {
		t.Fatal(err)
	}
	if st.Total != 3 || st.ByStatus[docent.StatusAnswered] != 2 || st.ByStatus[docent.StatusNotFound] != 1 ||
		st.HandedOff != 1 || st.Helpful != 1 || st.NotHelpful != 1 || st.MedianMS != 20 || st.P95MS != 20 {
		t.Errorf("docent.TurnStats = %+v", st)
	}
	wantDaily := []docent.DayCount{{Day: "2026-03-01", Platform: "api", N: 1}, {Day: "2026-03-01", Platform: "slack", N: 1}, {Day: "2026-03-02", Platform: "slack", N: 1}}
	if !reflect.DeepEqual(st.Daily, wantDaily) {
		t.Errorf("Daily = %+v, want %+v", st.Daily, wantDaily)
	}
	if len(st.TopCited) != 2 || st.TopCited[0].N != 1 || st.TopCited[0].Title == "" {
		t.Errorf("TopCited = %+v", st.TopCited)
	}
	cited, bad, err := db.DocCitations(ctx, day, day.Add(48*time.Hour), "eval")
	if err != nil || cited["handbook:it/vpn.md"] != 1 || bad["handbook:travel/expense-policy-2021.md"] != 1 || bad["handbook:it/vpn.md"] != 0 {
		t.Errorf("DocCitations = %v %v, %v", cited, bad, err)
	}
	platforms, channels, err := db.TurnChannels(ctx)
	if err != nil || !reflect.DeepEqual(platforms, []string{"api", "eval", "slack"}) || !reflect.DeepEqual(channels, []string{"C1", "C2"}) {
		t.Errorf("TurnChannels = %v %v, %v", platforms, channels, err)
	}
}

func TestStaleAcksAndDocumentCounts(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	db := MustOpen(t, WithClock(clk.Now))
	for _, rec := range []docent.DocRecord{
		{ID: "h:a.md", Source: "h", Path: "a.md", Title: "Expense policy", ChunkIDs: []string{"1", "2"}},
		{ID: "h:b.md", Source: "h", Path: "b.md", Title: "VPN"},
		{ID: "w:c", Source: "w", Path: "c", Title: "Wiki", ChunkIDs: []string{"3"}},
	} {
		if err := db.PutDocument(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.MarkDeleted(ctx, []string{"h:b.md"}); err != nil {
		t.Fatal(err)
	}
	counts, err := db.CountDocuments(ctx)
	if err != nil || counts["h"] != (SourceCounts{Live: 1, Deleted: 1, Chunks: 2}) || counts["w"] != (SourceCounts{Live: 1, Chunks: 1}) {
		t.Errorf("CountDocuments = %+v, %v", counts, err)
	}
	found, err := db.SearchDocuments(ctx, "expense", 0)
	if err != nil || len(found) != 1 || found[0].ID != "h:a.md" {
		t.Errorf("SearchDocuments = %+v, %v", found, err)
	}

	until := clk.Now().Add(48 * time.Hour)
	if err := db.AckStale(ctx, docent.StaleAck{DocID: "h:a.md", Until: until, By: "alice", Note: "rewrite planned"}); err != nil {
		t.Fatal(err)
	}
	acks, err := db.StaleAcks(ctx, clk.Now())
	if a := acks["h:a.md"]; err != nil || !a.Until.Equal(until) || a.By != "alice" || a.Note != "rewrite planned" {
		t.Fatalf("StaleAcks = %+v, %v", acks, err)
	}
	if acks, _ := db.StaleAcks(ctx, until.Add(time.Second)); len(acks) != 0 {
		t.Errorf("a lapsed acknowledgement is still in force: %+v", acks)
	}
	if err := db.UnackStale(ctx, "h:a.md"); err != nil {
		t.Fatal(err)
	}
	if acks, _ := db.StaleAcks(ctx, clk.Now()); len(acks) != 0 {
		t.Errorf("UnackStale left %+v", acks)
	}
}
