package answer_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/internal/redact"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/store"
)

type fixedRetriever []docent.Hit

func (f fixedRetriever) Retrieve(context.Context, search.Request) (search.Result, error) {
	return search.Result{Hits: f}, nil
}

type failingGenerator struct{ err error }

func (g failingGenerator) Generate(context.Context, answer.GenerateRequest) (answer.GenerateResult, error) {
	return answer.GenerateResult{Model: "test-model"}, g.err
}

// hits is one retrieved chunk that answers "How many vacation days do I get?".
var hits = fixedRetriever{{Chunk: docent.Chunk{ID: "c1", DocID: "d1", Title: "Time off",
	Text: "Time off\n\nEmployees get 25 vacation days per year."}, KeywordRank: 1, VectorScore: 0.8}}

// openStore opens a store in a temp dir, closed when the test ends.
func openStore(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "docent.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestRecorderStoresFailedTurnWithMaskedError: a turn whose generation
// fails is stored with status error and the error text, its secrets
// masked, in the trace and the turns table.
func TestRecorderStoresFailedTurnWithMaskedError(t *testing.T) {
	ctx := context.Background()
	db := openStore(t)
	const key = "sk-live-123456"
	gen := failingGenerator{err: errors.New("POST https://bot:" + key + "@llm.example/v1/chat: 503 (api key " + key + ")")}
	p, err := answer.New(answer.Stages{Retriever: hits, Gate: answer.Plausible{}, Rule: answer.Always{}, Generator: gen}, nil, answer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := answer.NewRecorder(p, db, nil, slog.New(slog.DiscardHandler), func(s string) string {
		return redact.Secrets(redact.URLs(s), key)
	})
	turn, err := rec.Ask(ctx, docent.Question{Text: "How many vacation days do I get?", Platform: "api"})
	var se *answer.StageError
	if !errors.As(err, &se) || se.Stage != answer.StageGenerate {
		t.Fatalf("err = %v, want a generate StageError", err)
	}
	if turn.ID == 0 {
		t.Fatal("failed turn was not stored")
	}
	stored, err := db.Turn(ctx, turn.ID)
	if err != nil {
		t.Fatal(err)
	}
	msg := stored.Answer.Trace.Error
	if stored.Answer.Status != docent.StatusError || !strings.HasPrefix(msg, "answer: generate: POST https://REDACTED@llm.example") ||
		!strings.Contains(msg, "503") || strings.Contains(msg, key) {
		t.Errorf("stored turn: status %s, error %q; want status error and the masked error", stored.Answer.Status, msg)
	}
	if stored.Answer.Trace.Model != "test-model" || len(stored.Answer.Trace.Candidates) != 1 {
		t.Errorf("trace of the failed turn lost its stages: model %q, %d candidates", stored.Answer.Trace.Model, len(stored.Answer.Trace.Candidates))
	}
	failed, err := db.ListTurns(ctx, store.TurnFilter{Failed: true})
	if err != nil || len(failed) != 1 || failed[0].ID != turn.ID {
		t.Errorf("failed turns = %v, %v; want the one turn", failed, err)
	}
}

// TestRecorderStoresDegradedTurnWithMaskedError: a provider outage does
// not fail the turn (the asker gets the uncertain reply with the closest
// page and a person offered), but the turn keeps the error, masked, and
// counts among the failed turns.
func TestRecorderStoresDegradedTurnWithMaskedError(t *testing.T) {
	ctx := context.Background()
	db := openStore(t)
	const key = "sk-live-123456"
	gen := failingGenerator{err: fmt.Errorf("openai: chat: 503 (key %s): %w", key, answer.ErrUnavailable)}
	p, err := answer.New(answer.Stages{Retriever: hits, Gate: answer.Plausible{}, Rule: answer.Always{}, Generator: gen}, nil, answer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var streamed []string
	rec := answer.NewRecorder(p, db, nil, slog.New(slog.DiscardHandler), func(s string) string { return redact.Secrets(s, key) })
	turn, err := rec.AskStream(ctx, docent.Question{Text: "How many vacation days do I get?", Platform: "api"},
		func(d string) { streamed = append(streamed, d) })
	if err != nil {
		t.Fatalf("err = %v, want the degraded answer", err)
	}
	stored, err := db.Turn(ctx, turn.ID)
	if err != nil {
		t.Fatal(err)
	}
	a := stored.Answer
	if a.Status != docent.StatusUncertain || !strings.HasPrefix(a.Text, answer.OutageLead) || len(a.Citations) != 1 {
		t.Errorf("stored %s %q", a.Status, a.Text)
	}
	if !strings.Contains(a.Trace.Error, "answer: generate: openai: chat: 503") || strings.Contains(a.Trace.Error, key) {
		t.Errorf("stored error %q", a.Trace.Error)
	}
	if len(streamed) != 0 {
		t.Errorf("streamed %q from a failed generation", streamed)
	}
	failed, err := db.ListTurns(ctx, store.TurnFilter{Failed: true})
	if err != nil || len(failed) != 1 {
		t.Errorf("failed turns = %d, %v", len(failed), err)
	}
}
