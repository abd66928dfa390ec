package store

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/docent-hq/docent"
)

// clock is an injectable clock that tests advance by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 123456789, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// MustOpen opens a database file under a temp dir, closed when the test ends.
func MustOpen(tb testing.TB, opts ...Option) *DB {
	tb.Helper()
	db, err := Open(context.Background(), filepath.Join(tb.TempDir(), "docent.db"), opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func TestOpenPragmas(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	for _, c := range []struct {
		pragma string
		reader bool // asked on a read connection, not the writer
		want   string
	}{
		{"journal_mode", false, "wal"},
		{"foreign_keys", false, "1"},
		{"busy_timeout", false, "5000"},
		{"auto_vacuum", false, "2"}, // incremental, from the start
		{"query_only", false, "0"},
		{"foreign_keys", true, "1"},
		{"busy_timeout", true, "5000"},
		{"query_only", true, "1"},
	} {
		conn, name := db.w, "writer "+c.pragma
		if c.reader {
			conn, name = db.r, "reader "+c.pragma
		}
		t.Run(name, func(t *testing.T) {
			var got string
			if err := conn.QueryRowContext(ctx, "PRAGMA "+c.pragma).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("PRAGMA %s = %q, want %q", c.pragma, got, c.want)
			}
		})
	}
}

func TestOpenMemory(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.SchemaVersion(ctx); err != nil || v != len(migrations) {
		t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, len(migrations))
	}
	// Concurrent writers share the single connection and all land.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tu := docent.Turn{Question: docent.Question{Text: "q"}, Answer: docent.Answer{Status: docent.StatusAnswered}}
			if err := db.CreateTurn(ctx, &tu); err != nil {
				t.Errorf("turn %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	counts, err := db.CountTurnsByStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if counts[docent.StatusAnswered] != 8 {
		t.Errorf("answered = %d, want 8", counts[docent.StatusAnswered])
	}
}

func TestOpenTwiceIsIdempotent(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "docent.db")
	for i := range 3 {
		db, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		var n int
		if err := db.w.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != len(migrations) {
			t.Errorf("open %d: %d migrations recorded, want %d", i, n, len(migrations))
		}
		db.Close()
	}
}

func TestOpenRejectsNewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "docent.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.ExecContext(ctx, `INSERT INTO schema_migrations VALUES (?, 'x')`, len(migrations)+1); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err := Open(ctx, path); err == nil {
		db.Close()
		t.Fatal("Open succeeded on a database from a newer binary")
	}
}

// TestMigrateFromEachVersion builds a database at every earlier schema
// version, writes the data that version can hold, reopens it with Open and
// checks the data survived and the schema is current.
func TestMigrateFromEachVersion(t *testing.T) {
	ctx := context.Background()
	updated := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for from := 0; from < len(migrations); from++ {
		t.Run("from_v"+string(rune('0'+from)), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "docent.db")
			old, err := openAt(ctx, path, from)
			if err != nil {
				t.Fatal(err)
			}
			if v, _ := old.SchemaVersion(ctx); v != from {
				t.Fatalf("old schema version = %d, want %d", v, from)
			}
			if from >= 1 {
				rec := docent.DocRecord{ID: "git:a.md", Source: "git", Title: "A", UpdatedAt: updated, ChunkIDs: []string{"c1"}}
				if err := old.PutDocument(ctx, rec); err != nil {
					t.Fatal(err)
				}
			}
			var turnID int64
			if from >= 2 {
				// The columns every version since v2 has (later ones add more),
				// the trace as JSON text, as versions before compact traces wrote it.
				res, err := old.w.ExecContext(ctx, `INSERT INTO turns (question, status, trace, created_at) VALUES (?, ?, ?, ?)`,
					"old question", string(docent.StatusNotFound),
					`{"query":"old question","candidates":[{"chunk":{"id":"c1","text":"old text"},"score":0.5}]}`, formatTime(updated))
				if err != nil {
					t.Fatal(err)
				}
				if turnID, err = res.LastInsertId(); err != nil {
					t.Fatal(err)
				}
			}
			old.Close()

			db, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if v, err := db.SchemaVersion(ctx); err != nil || v != len(migrations) {
				t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, len(migrations))
			}
			// Every table of the current schema works.
			if err := db.SetCursor(ctx, "git", "c"); err != nil {
				t.Fatal(err)
			}
			runID, err := db.StartRun(ctx, "git")
			if err != nil {
				t.Fatal(err)
			}
			// v14 (a run's content) and v15 (a golden row's expected
			// documents and turn) both apply, in order, whatever the start.
			if err := db.FinishRun(ctx, runID, docent.RunResult{Content: docent.ContentCounts{Oversized: 1}}); err != nil {
				t.Fatal(err)
			}
			golden := docent.GoldenRun{Questions: 1}
			if err := db.StartGoldenRun(ctx, &golden); err != nil {
				t.Fatal(err)
			}
			if err := db.FinishGoldenRun(ctx, golden.ID, json.RawMessage(`{}`), []docent.GoldenRunRow{{QuestionID: "q1",
				Expect: []string{"git:a.md"}, TurnID: 7, Row: json.RawMessage(`{}`)}}, ""); err != nil {
				t.Fatal(err)
			}
			if rows, err := db.GoldenRunRows(ctx, golden.ID); err != nil || len(rows) != 1 ||
				!reflect.DeepEqual(rows[0].Expect, []string{"git:a.md"}) || rows[0].TurnID != 7 {
				t.Errorf("golden run rows after migration = %+v, %v", rows, err)
			}
			probe := docent.Turn{Question: docent.Question{Text: "new"}, Answer: docent.Answer{Status: docent.StatusAnswered}}
			if err := db.CreateTurn(ctx, &probe); err != nil {
				t.Fatal(err)
			}
			if err := db.CreateFeedback(ctx, &docent.Feedback{TurnID: probe.ID, Rating: docent.RatingHelpful}); err != nil {
				t.Fatal(err)
			}
			if from >= 1 {
				rec, err := db.Document(ctx, "git:a.md")
				if err != nil {
					t.Fatal(err)
				}
				if rec.Title != "A" || !rec.UpdatedAt.Equal(updated) || !reflect.DeepEqual(rec.ChunkIDs, []string{"c1"}) {
					t.Errorf("document after migration = %+v", rec)
				}
			}
			if from >= 2 {
				tu, err := db.Turn(ctx, turnID)
				if err != nil {
					t.Fatal(err)
				}
				if tu.Question.Text != "old question" || tu.Answer.Status != docent.StatusNotFound ||
					len(tu.Answer.Trace.Candidates) != 1 || tu.Answer.Trace.Candidates[0].Chunk.Text != "old text" {
					t.Errorf("turn after migration = %+v", tu)
				}
			}
		})
	}
}

func TestDocuments(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	db := MustOpen(t, WithClock(clk.Now))
	t0 := clk.Now()
	a := docent.DocRecord{
		ID: "git:a.md", Source: "git", Path: "a.md", URL: "https://x/a", Title: "A", Space: "handbook",
		Labels: []string{"hr", "policy"}, Owner: "people-team", Author: "ann", ContentHash: "h1",
		UpdatedAt: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC), ChunkIDs: []string{"c1", "c2"},
	}
	b := docent.DocRecord{ID: "git:b.md", Source: "git", Title: "B", ContentHash: "h2",
		UpdatedAt: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}
	other := docent.DocRecord{ID: "wiki:1", Source: "wiki", Title: "W", ContentHash: "h3"}
	for _, r := range []docent.DocRecord{a, b, other} {
		if err := db.PutDocument(ctx, r); err != nil {
			t.Fatal(err)
		}
	}

	got, err := db.Documents(ctx, "git")
	if err != nil {
		t.Fatal(err)
	}
	wantA := a
	wantA.FirstSeen, wantA.LastSeen = t0, t0
	if !reflect.DeepEqual(got["git:a.md"], wantA) {
		t.Errorf("a = %+v\nwant %+v", got["git:a.md"], wantA)
	}
	if len(got) != 2 {
		t.Errorf("Documents(git) has %d docs, want 2", len(got))
	}

	// Updating keeps FirstSeen and moves LastSeen.
	clk.Advance(time.Hour)
	a.ContentHash, a.ChunkIDs = "h1b", []string{"c3"}
	if err := db.PutDocument(ctx, a); err != nil {
		t.Fatal(err)
	}
	rec, err := db.Document(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.FirstSeen.Equal(t0) || !rec.LastSeen.Equal(t0.Add(time.Hour)) || rec.ContentHash != "h1b" ||
		!reflect.DeepEqual(rec.ChunkIDs, []string{"c3"}) {
		t.Errorf("after update: %+v", rec)
	}

	// Deleting hides the document from Documents and forgets its chunks.
	clk.Advance(time.Hour)
	if err := db.MarkDeleted(ctx, []string{a.ID, "git:unknown"}); err != nil {
		t.Fatal(err)
	}
	got, _ = db.Documents(ctx, "git")
	if _, ok := got[a.ID]; ok || len(got) != 1 {
		t.Errorf("Documents after delete = %v", got)
	}
	rec, _ = db.Document(ctx, a.ID)
	if !rec.DeletedAt.Equal(t0.Add(2*time.Hour)) || rec.ChunkIDs != nil {
		t.Errorf("deleted record = %+v", rec)
	}

	t.Run("list", func(t *testing.T) {
		for _, c := range []struct {
			name string
			f    DocFilter
			want []string
		}{
			{"live", DocFilter{}, []string{"wiki:1", "git:b.md"}},
			{"deleted", DocFilter{State: DocDeleted}, []string{"git:a.md"}},
			{"any of git", DocFilter{Source: "git", State: DocAny}, []string{"git:a.md", "git:b.md"}},
			{"stale", DocFilter{State: DocAny, UpdatedBefore: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, []string{"git:a.md"}},
			{"limit offset", DocFilter{State: DocAny, Limit: 1, Offset: 1}, []string{"git:a.md"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				docs, err := db.ListDocuments(ctx, c.f)
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, d := range docs {
					ids = append(ids, d.ID)
				}
				if !reflect.DeepEqual(ids, c.want) {
					t.Errorf("ids = %v, want %v", ids, c.want)
				}
			})
		}
	})

	// A document that comes back is live again and keeps its FirstSeen.
	clk.Advance(time.Hour)
	if err := db.PutDocument(ctx, a); err != nil {
		t.Fatal(err)
	}
	rec, _ = db.Document(ctx, a.ID)
	if !rec.DeletedAt.IsZero() || !rec.FirstSeen.Equal(t0) {
		t.Errorf("resurrected record = %+v", rec)
	}

	if _, err := db.Document(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Document(nope) error = %v, want ErrNotFound", err)
	}
	if err := db.PutDocument(ctx, docent.DocRecord{ID: "x"}); err == nil {
		t.Error("PutDocument without Source succeeded")
	}
}

func TestCursor(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	if c, err := db.Cursor(ctx, "git"); err != nil || c != "" {
		t.Fatalf("Cursor before set = %q, %v", c, err)
	}
	for _, want := range []string{"abc", "def"} {
		if err := db.SetCursor(ctx, "git", want); err != nil {
			t.Fatal(err)
		}
		if c, err := db.Cursor(ctx, "git"); err != nil || c != want {
			t.Errorf("Cursor = %q, %v; want %q", c, err, want)
		}
	}
	if c, _ := db.Cursor(ctx, "wiki"); c != "" {
		t.Errorf("Cursor(wiki) = %q, want empty", c)
	}
}

func fullTurn(created time.Time) docent.Turn {
	upd := time.Date(2025, 11, 3, 10, 0, 0, 0, time.UTC)
	chunk := docent.Chunk{ID: "ck1", DocID: "git:leave.md", Ord: 2, Source: "git", Space: "handbook",
		Labels: []string{"hr"}, UpdatedAt: upd, Title: "Leave", Section: []string{"Leave", "Parental"},
		URL: "https://x/leave#parental", Text: "Leave > Parental\nSixteen weeks."}
	return docent.Turn{
		Question: docent.Question{Text: "How long is parental leave?", Platform: "slack", Channel: "C1",
			Thread: "T1", User: "U1", Filter: docent.Filter{Sources: []string{"git"}, Labels: []string{"hr"},
				UpdatedAfter: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}},
		Answer: docent.Answer{
			Text:      "Sixteen weeks [1].",
			Citations: []docent.Citation{{N: 1, DocID: chunk.DocID, ChunkID: chunk.ID, Title: "Leave", Section: "Leave › Parental", URL: chunk.URL, UpdatedAt: upd}},
			Status:    docent.StatusAnswered,
			Trace: docent.Trace{
				Query: "parental leave length",
				Candidates: []docent.Hit{
					{Chunk: chunk, Score: 0.032, KeywordRank: 1, KeywordScore: 7.5, VectorRank: 2, VectorScore: 0.81, RerankScore: 0.9, Relevance: 0.77},
					{Chunk: docent.Chunk{ID: "ck9", DocID: "git:pto.md", Title: "PTO"}, Score: 0.01, VectorRank: 1, VectorScore: 0.83},
				},
				Used:      []string{"ck1"},
				Threshold: 0.2,
				TopScore:  0.9,
				Conflict:  "git:old.md older than git:leave.md",
				Stages: []docent.Stage{
					{Name: "retrieve", Duration: 12 * time.Millisecond},
					{Name: "rerank", Duration: 3500 * time.Microsecond},
					{Name: "generate", Duration: 250 * time.Millisecond},
				},
			},
		},
		CreatedAt: created,
	}
}

func TestTurnRoundTrip(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	db := MustOpen(t, WithClock(clk.Now))

	want := fullTurn(time.Time{})
	in := want
	if err := db.CreateTurn(ctx, &in); err != nil {
		t.Fatal(err)
	}
	if in.ID == 0 || !in.CreatedAt.Equal(clk.Now()) {
		t.Fatalf("CreateTurn set ID %d, CreatedAt %v", in.ID, in.CreatedAt)
	}
	want.ID, want.CreatedAt = in.ID, clk.Now()
	got, err := db.Turn(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
	}

	var latency float64
	var stages string
	if err := db.w.QueryRowContext(ctx, `SELECT latency_ms, stages_ms FROM turns WHERE id = ?`, in.ID).Scan(&latency, &stages); err != nil {
		t.Fatal(err)
	}
	if latency != 265.5 || stages != `{"generate":250,"rerank":3.5,"retrieve":12}` {
		t.Errorf("latency_ms = %v, stages_ms = %s", latency, stages)
	}

	if _, err := db.Turn(ctx, 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("Turn(999) error = %v, want ErrNotFound", err)
	}
}

func TestListTurns(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	seed := []struct {
		platform string
		status   docent.Status
	}{
		{"slack", docent.StatusAnswered},
		{"slack", docent.StatusNotFound},
		{"discord", docent.StatusAnswered},
		{"cli", docent.StatusError},
		{"slack", docent.StatusNotFound},
	}
	ids := make([]int64, len(seed))
	for i, s := range seed {
		tu := docent.Turn{Question: docent.Question{Text: "q", Platform: s.platform},
			Answer: docent.Answer{Status: s.status}, CreatedAt: base.Add(time.Duration(i) * time.Minute)}
		if s.status == docent.StatusError {
			tu.Answer.Trace.Error = "answer: generate: provider unavailable"
		}
		if err := db.CreateTurn(ctx, &tu); err != nil {
			t.Fatal(err)
		}
		ids[i] = tu.ID
	}
	for _, c := range []struct {
		name string
		f    TurnFilter
		want []int64
	}{
		{"all newest first", TurnFilter{}, []int64{ids[4], ids[3], ids[2], ids[1], ids[0]}},
		{"status", TurnFilter{Status: docent.StatusNotFound}, []int64{ids[4], ids[1]}},
		{"platform", TurnFilter{Platform: "slack"}, []int64{ids[4], ids[1], ids[0]}},
		{"status and platform", TurnFilter{Status: docent.StatusAnswered, Platform: "slack"}, []int64{ids[0]}},
		{"limit offset", TurnFilter{Limit: 2, Offset: 1}, []int64{ids[3], ids[2]}},
		{"failed", TurnFilter{Failed: true}, []int64{ids[3]}},
		{"since until", TurnFilter{Since: base.Add(time.Minute), Until: base.Add(3 * time.Minute)}, []int64{ids[2], ids[1]}},
	} {
		t.Run(c.name, func(t *testing.T) {
			turns, err := db.ListTurns(ctx, c.f)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, tu := range turns {
				got = append(got, tu.ID)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("ids = %v, want %v", got, c.want)
			}
		})
	}
	counts, err := db.CountTurnsByStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[docent.Status]int{docent.StatusAnswered: 2, docent.StatusNotFound: 2, docent.StatusError: 1}
	if !reflect.DeepEqual(counts, want) {
		t.Errorf("CountTurnsByStatus = %v, want %v", counts, want)
	}
}

func TestFeedback(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	db := MustOpen(t, WithClock(clk.Now))
	tu := docent.Turn{Question: docent.Question{Text: "q"}, Answer: docent.Answer{Status: docent.StatusAnswered}}
	if err := db.CreateTurn(ctx, &tu); err != nil {
		t.Fatal(err)
	}
	up := docent.Feedback{TurnID: tu.ID, Rating: docent.RatingHelpful, Platform: "slack", User: "U1"}
	if err := db.CreateFeedback(ctx, &up); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	down := docent.Feedback{TurnID: tu.ID, Rating: docent.RatingNotHelpful, Reason: "outdated", Platform: "slack", User: "U2"}
	if err := db.CreateFeedback(ctx, &down); err != nil {
		t.Fatal(err)
	}
	got, err := db.TurnFeedback(ctx, tu.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []docent.Feedback{up, down}) || up.ID == 0 || !down.CreatedAt.Equal(clk.Now()) {
		t.Errorf("TurnFeedback = %+v, want %+v", got, []docent.Feedback{up, down})
	}
	if err := db.CreateFeedback(ctx, &docent.Feedback{TurnID: 999, Rating: docent.RatingHelpful}); !errors.Is(err, ErrNotFound) {
		t.Errorf("feedback on a missing turn: %v, want ErrNotFound", err)
	}
	if err := db.CreateFeedback(ctx, &docent.Feedback{TurnID: tu.ID, Rating: "meh"}); err == nil {
		t.Error("feedback with an unknown rating was stored")
	}
}

func TestRuns(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	db := MustOpen(t, WithClock(clk.Now))
	t0 := clk.Now()

	if _, err := db.LastRun(ctx, "git"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("LastRun before any run: %v, want ErrNotFound", err)
	}
	id1, err := db.StartRun(ctx, "git")
	if err != nil {
		t.Fatal(err)
	}
	running, err := db.LastRun(ctx, "git")
	if err != nil {
		t.Fatal(err)
	}
	if running.ID != id1 || running.Status != docent.RunRunning || !running.Started.Equal(t0) || !running.Finished.IsZero() {
		t.Errorf("running run = %+v", running)
	}
	ok := docent.RunResult{Source: "git", Finished: t0.Add(time.Minute), Seen: 16, Added: 3, Updated: 2,
		Unchanged: 10, Deleted: 1, Failed: 2, Errors: []docent.DocError{{ID: "git:bin.png", Err: "binary"},
			{ID: "git:slow.md", Err: "timeout", Retry: true}},
		Requests: 40, Retries: 3, RateLimited: 1, Waited: 2500 * time.Millisecond}
	if err := db.FinishRun(ctx, id1, ok); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	id2, _ := db.StartRun(ctx, "git")
	if err := db.FinishRun(ctx, id2, docent.RunResult{Source: "git", Err: "source unreachable"}); err != nil {
		t.Fatal(err)
	}
	idWiki, _ := db.StartRun(ctx, "wiki")

	last, err := db.LastRun(ctx, "git")
	if err != nil {
		t.Fatal(err)
	}
	if last.ID != id2 || last.Status != docent.RunFailed || last.Err != "source unreachable" || !last.Finished.Equal(clk.Now()) {
		t.Errorf("last run = %+v", last)
	}
	runs, err := db.ListRuns(ctx, "git", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].ID != id2 || runs[1].ID != id1 {
		t.Fatalf("ListRuns(git) = %+v", runs)
	}
	want := ok
	want.Started = t0
	if runs[1].Status != docent.RunOK || !reflect.DeepEqual(runs[1].RunResult, want) {
		t.Errorf("ok run = %+v\nwant %+v", runs[1].RunResult, want)
	}
	all, _ := db.ListRuns(ctx, "", 0)
	if len(all) != 3 || all[0].ID != idWiki {
		t.Errorf("ListRuns(all) = %+v", all)
	}

	// Health: git failed once since its last good run; wiki never
	// finished one.
	if lastOK, failures, err := db.RunHealth(ctx, "git"); err != nil || !lastOK.Equal(t0.Add(time.Minute)) || failures != 1 {
		t.Errorf("RunHealth(git) = %v, %d, %v; want %v, 1", lastOK, failures, err, t0.Add(time.Minute))
	}
	if lastOK, failures, err := db.RunHealth(ctx, "wiki"); err != nil || !lastOK.IsZero() || failures != 0 {
		t.Errorf("RunHealth(wiki) while running = %v, %d, %v; want zero, 0", lastOK, failures, err)
	}

	n, err := db.AbandonRuns(ctx)
	if err != nil || n != 1 {
		t.Fatalf("AbandonRuns = %d, %v; want 1", n, err)
	}
	w, _ := db.LastRun(ctx, "wiki")
	if w.Status != docent.RunFailed || w.Err == "" {
		t.Errorf("abandoned run = %+v", w)
	}
	if lastOK, failures, err := db.RunHealth(ctx, "wiki"); err != nil || !lastOK.IsZero() || failures != 1 {
		t.Errorf("RunHealth(wiki) after abandoning = %v, %d, %v; want zero, 1", lastOK, failures, err)
	}
	if err := db.FinishRun(ctx, 999, ok); !errors.Is(err, ErrNotFound) {
		t.Errorf("FinishRun(999) = %v, want ErrNotFound", err)
	}
}

// TestStaleStates: the state a sync derives is stored with the record,
// read back by every reader of records, kept by the next PutDocument (a
// re-sync) and MarkDeleted, and cleared by a zero state; DocumentsByID
// reads only the IDs named.
func TestStaleStates(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	for _, r := range []docent.DocRecord{{ID: "hb:a.md", Source: "hb", Path: "a.md"}, {ID: "hb:b.md", Source: "hb", Path: "b.md"}} {
		if err := db.PutDocument(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	st := docent.StaleState{After: time.Date(2027, 1, 2, 0, 0, 0, 0, time.UTC), MaxAgeDays: 90,
		Findings: []docent.StaleFinding{{Kind: "conflict", Detail: "says $50", Other: "hb:b.md"}}}
	if err := db.SetStaleStates(ctx, map[string]docent.StaleState{"hb:a.md": st, "hb:unknown": st}); err != nil {
		t.Fatal(err)
	}
	check := func(when string, want docent.StaleState) {
		t.Helper()
		one, err := db.Document(ctx, "hb:a.md")
		if err != nil || !reflect.DeepEqual(one.Stale, want) {
			t.Errorf("%s: Document state %+v, %v; want %+v", when, one.Stale, err, want)
		}
		list, err := db.ListDocuments(ctx, DocFilter{State: DocAny})
		if err != nil || len(list) != 2 {
			t.Fatalf("%s: ListDocuments %d, %v", when, len(list), err)
		}
		for _, r := range list {
			if r.ID == "hb:a.md" && !reflect.DeepEqual(r.Stale, want) || r.ID == "hb:b.md" && !reflect.DeepEqual(r.Stale, docent.StaleState{}) {
				t.Errorf("%s: ListDocuments %s state %+v", when, r.ID, r.Stale)
			}
		}
	}
	check("set", st)
	byID, err := db.DocumentsByID(ctx, []string{"hb:a.md", "hb:none"})
	if err != nil || len(byID) != 1 || !reflect.DeepEqual(byID["hb:a.md"].Stale, st) {
		t.Errorf("DocumentsByID = %+v, %v", byID, err)
	}
	if err := db.PutDocument(ctx, docent.DocRecord{ID: "hb:a.md", Source: "hb", Path: "a.md", ContentHash: "h2"}); err != nil {
		t.Fatal(err)
	}
	check("re-synced", st)
	if err := db.MarkDeleted(ctx, []string{"hb:a.md"}); err != nil {
		t.Fatal(err)
	}
	check("deleted", st)
	if err := db.SetStaleStates(ctx, map[string]docent.StaleState{"hb:a.md": {}}); err != nil {
		t.Fatal(err)
	}
	check("cleared", docent.StaleState{})
}
