package answer_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
)

// answererFunc, turnSaverFunc and observerFunc are function-field fakes.
type answererFunc func(ctx context.Context, q docent.Question) (docent.Answer, error)

func (f answererFunc) Answer(ctx context.Context, q docent.Question) (docent.Answer, error) {
	return f(ctx, q)
}

type turnSaverFunc func(ctx context.Context, t *docent.Turn) error

func (f turnSaverFunc) CreateTurn(ctx context.Context, t *docent.Turn) error { return f(ctx, t) }

type observerFunc func(platform string, a docent.Answer)

func (f observerFunc) ObserveTurn(platform string, a docent.Answer) { f(platform, a) }

// TestRecorderCountsStoredTurnsOnly: metrics move when a turn is stored,
// never for one the store refused, so they always equal the stored turns.
func TestRecorderCountsStoredTurnsOnly(t *testing.T) {
	ans := answererFunc(func(context.Context, docent.Question) (docent.Answer, error) {
		return docent.Answer{Status: docent.StatusAnswered, Text: "Nine [1]."}, nil
	})
	for _, tt := range []struct {
		name      string
		saveErr   error
		wantCount int
		wantErr   bool
	}{
		{"stored", nil, 1, false},
		{"store refused", errors.New("database is locked"), 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			observed := 0
			saved := 0
			rec := answer.NewRecorder(ans, turnSaverFunc(func(_ context.Context, turn *docent.Turn) error {
				if tt.saveErr != nil {
					return tt.saveErr
				}
				saved++
				turn.ID = 1
				return nil
			}), observerFunc(func(platform string, a docent.Answer) {
				if platform != "api" || a.Status != docent.StatusAnswered {
					t.Errorf("observed %s %s", platform, a.Status)
				}
				observed++
			}), slog.New(slog.DiscardHandler), nil)
			turn, err := rec.Ask(context.Background(), docent.Question{Text: "When?", Platform: "api"})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if observed != tt.wantCount || saved != tt.wantCount {
				t.Errorf("observed %d, saved %d; want %d each", observed, saved, tt.wantCount)
			}
			if !tt.wantErr && turn.ID != 1 {
				t.Errorf("turn ID = %d", turn.ID)
			}
		})
	}
}
