package stale_test

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	offlineans "github.com/docent-hq/docent/answer/offline"
	"github.com/docent-hq/docent/bot"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/stale"
)

// replies is a bot.Poster that keeps the replies.
type replies struct {
	mu  sync.Mutex
	got []bot.Reply
}

func (r *replies) Reply(_ context.Context, _ bot.Thread, rep bot.Reply) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, rep)
	return nil
}

func (r *replies) Escalate(context.Context, bot.Escalation) (string, error) { return "", nil }

func (r *replies) UpdateEscalation(context.Context, docent.Handoff) error { return nil }

// TestChatReplyScansNothing: a chat reply (the bot core over the real
// offline answerer, its corpus statistics and the stale checker, all fed
// by the sync's corpus pass) flags the cited source whose stored state
// says it conflicts with a newer page, and neither answering nor
// flagging scans the index.
func TestChatReplyScansNothing(t *testing.T) {
	ctx := context.Background()
	db, local := connectorstest.OpenStores(t)
	idx := &connectorstest.ScanCounter{Index: local}
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	emb := connectorstest.NewEmbedder("v1")
	corpus := offlineans.NewCorpusStats(idx)
	chk := stale.New(db, stale.Options{MaxAgeDays: func(string) int { return 3650 }, Now: func() time.Time { return now }})
	eng := connectors.NewEngine(db, idx, emb, search.Chunker{}, nil, connectors.EngineOptions{})
	eng.Derive(corpus, chk)
	src := connectorstest.NewSource("hb")
	page := func(path, title, amount string, updated time.Time) docent.Document {
		return docent.Document{ID: "hb:" + path, Source: "hb", Path: path, Title: title, UpdatedAt: updated,
			Body: "# " + title + "\n\n## Meal per diem\n\nThe meal per diem in the United States is " + amount + " a day.\n"}
	}
	newer := page("expense.md", "Travel and Expense Policy", "$75", now.AddDate(0, -10, 0))
	older := page("expense-2021.md", "Travel and Expense Policy (2021)", "$50", now.AddDate(-5, 0, 0))
	src.Put(newer, older)
	if _, err := eng.Sync(ctx, src, nil); err != nil {
		t.Fatal(err)
	}

	ret, err := search.NewRetriever(idx, emb, search.RetrieverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pipe, err := answer.New(offlineans.NewStages(ret, offlineans.Options{Corpus: corpus}), nil, answer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := answer.NewRecorder(pipe, db, nil, slog.New(slog.DiscardHandler), nil)
	b := bot.New("slack", rec, db, chk, bot.Config{}, nil)
	out := &replies{}
	before := idx.Scans()
	for i, q := range []string{"What is the meal per diem in the United States?", "meal per diem"} {
		m := bot.Message{EventID: "Ev" + string(rune('1'+i)), Thread: bot.Thread{Platform: "slack", Channel: "C", ID: "1." + string(rune('1'+i))},
			User: "U1", Text: q, Mentioned: true, TopLevel: true}
		if err := b.HandleMessage(ctx, m, out); err != nil {
			t.Fatal(err)
		}
	}
	if n := idx.Scans() - before; n != 0 {
		t.Errorf("two chat replies scanned the index %d times, want 0", n)
	}
	out.mu.Lock()
	defer out.mu.Unlock()
	flaggedOlder := false
	for _, r := range out.got {
		if len(r.Citations) == 0 {
			continue
		}
		if len(r.Stale) != len(r.Citations) {
			t.Fatalf("reply %q: %d stale flags for %d citations", r.Text, len(r.Stale), len(r.Citations))
		}
		for i, c := range r.Citations {
			if r.Stale[i] != (c.DocID == older.ID) {
				t.Errorf("reply %q: citation %s flagged %v", r.Text, c.DocID, r.Stale[i])
			}
			flaggedOlder = flaggedOlder || r.Stale[i]
		}
	}
	if !flaggedOlder {
		t.Errorf("no reply cited and flagged the older copy: %+v", slices.Collect(func(yield func(string) bool) {
			for _, r := range out.got {
				for _, c := range r.Citations {
					if !yield(c.DocID) {
						return
					}
				}
			}
		}))
	}
}
