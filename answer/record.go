package answer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/internal/lograte"
	redactpkg "github.com/docent-hq/docent/internal/redact"
)

// Answerer answers one question. *Pipeline implements it.
type Answerer interface {
	Answer(ctx context.Context, q docent.Question) (docent.Answer, error)
}

// TurnSaver persists a turn and sets its ID. store.DB implements it.
type TurnSaver interface {
	CreateTurn(ctx context.Context, t *docent.Turn) error
}

// Observer is told about every stored turn, for metrics.
type Observer interface {
	ObserveTurn(platform string, a docent.Answer)
}

// Recorder answers questions and stores every turn with its full trace,
// including failed ones, so the retrieval log misses nothing.
type Recorder struct {
	answerer    Answerer
	turns       TurnSaver
	observer    Observer
	log         *slog.Logger
	redact      func(string) string
	now         func() time.Time
	storeFailed *lograte.Quiet // one "store turn" line per 10s: a full disk fails every ask
}

// NewRecorder wraps an Answerer so that each answer is stored as a turn.
// observer may be nil. redact masks secrets in the error text of a failed
// turn before it is stored or logged; nil masks only URL credentials.
func NewRecorder(a Answerer, turns TurnSaver, observer Observer, log *slog.Logger, redact func(string) string) *Recorder {
	if redact == nil {
		redact = redactpkg.URLs
	}
	return &Recorder{answerer: a, turns: turns, observer: observer, log: log, redact: redact, now: time.Now, storeFailed: lograte.New(10 * time.Second)}
}

// Ask answers q and stores the turn. An empty question returns
// docent.ErrEmptyQuestion and stores nothing. A pipeline error is stored as
// a turn with status error, its error text (secrets masked) in
// Trace.Error, and returned. An answer the pipeline degraded around a
// provider outage keeps its status, with the masked error in Trace.Error.
func (r *Recorder) Ask(ctx context.Context, q docent.Question) (docent.Turn, error) {
	return r.ask(ctx, q, nil)
}

// StreamAnswerer is an Answerer that can hand out the answer text while
// it is written; *Pipeline implements it.
type StreamAnswerer interface {
	Answerer
	AnswerStream(ctx context.Context, q docent.Question, onDelta func(delta string)) (docent.Answer, error)
}

// AskStream is Ask for chat adapters that show the answer growing: when
// the Answerer is a StreamAnswerer, onDelta receives the provisional text
// as it is written (see Pipeline.AnswerStream); the returned turn holds
// the verified answer that replaces it.
func (r *Recorder) AskStream(ctx context.Context, q docent.Question, onDelta func(delta string)) (docent.Turn, error) {
	if onDelta == nil {
		onDelta = func(string) {}
	}
	return r.ask(ctx, q, onDelta)
}

func (r *Recorder) ask(ctx context.Context, q docent.Question, onDelta func(string)) (docent.Turn, error) {
	turn := docent.Turn{Question: q, CreatedAt: r.now().UTC()}
	var a docent.Answer
	var err error
	if sa, ok := r.answerer.(StreamAnswerer); ok && onDelta != nil {
		a, err = sa.AnswerStream(ctx, q, onDelta)
	} else {
		a, err = r.answerer.Answer(ctx, q)
	}
	if errors.Is(err, docent.ErrEmptyQuestion) {
		return turn, err
	}
	if err != nil {
		a = docent.Answer{Status: docent.StatusError, Trace: a.Trace}
		a.Trace.Error = err.Error()
	}
	// A degraded answer (a provider outage the pipeline answered around)
	// carries its error too: masked either way.
	a.Trace.Error = r.redact(a.Trace.Error)
	turn.Answer = a
	// Store the turn even when the asker has gone (a cancelled request):
	// the retrieval log must miss nothing. Metrics count stored turns only.
	if serr := r.turns.CreateTurn(context.WithoutCancel(ctx), &turn); serr != nil {
		r.storeFailed.Log(func(held int) {
			r.log.ErrorContext(ctx, "store turn: the answer was not given", slog.String("error", r.redact(serr.Error())), slog.Int("repeats_not_logged", held))
		})
		if err == nil {
			err = fmt.Errorf("answer: store turn: %w", serr)
		}
	} else if r.observer != nil {
		r.observer.ObserveTurn(q.Platform, a)
	}
	if err != nil {
		return turn, fmt.Errorf("answer: %w", err)
	}
	return turn, nil
}
