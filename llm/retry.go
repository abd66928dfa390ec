package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/docent-hq/docent/internal/backoff"
)

// Retry defaults: four attempts, waits of about 0.5s, 1s and 2s between
// them (with jitter), never more than 8s.
const (
	DefaultAttempts  = 4
	DefaultBaseDelay = 500 * time.Millisecond
	DefaultMaxDelay  = 8 * time.Second
)

// Retry repeats a provider call that failed transiently, with the one
// backoff of docent's clients (internal/backoff: exponential, jittered, a
// server's wait honoured, bounded by the context). Neither vendor client
// retries by default; both providers use this one policy, so that an
// outage looks the same whichever is configured. The zero value takes the
// defaults.
type Retry struct {
	// Attempts is how many times a call is tried in all; 1 disables
	// retries. Default DefaultAttempts.
	Attempts int
	// BaseDelay is the wait before the second attempt; each later wait
	// doubles, up to MaxDelay. Defaults DefaultBaseDelay, DefaultMaxDelay.
	// A provider asking to wait longer than MaxDelay fails the call at once.
	BaseDelay, MaxDelay time.Duration
	// Clock waits between attempts; the wall clock when nil (tests pass a
	// fake one).
	Clock backoff.Clock
}

// Failure is a provider's reading of a failed call: transient (HTTP 429
// and 5xx, timeouts, refused or reset connections), rate limited (429,
// Gemini's RESOURCE_EXHAUSTED), and how long the provider asked to wait
// (Retry-After, Gemini's RetryInfo).
type Failure = backoff.Failure

func (r Retry) withDefaults() Retry {
	if r.Attempts <= 0 {
		r.Attempts = DefaultAttempts
	}
	if r.BaseDelay <= 0 {
		r.BaseDelay = DefaultBaseDelay
	}
	if r.MaxDelay <= 0 {
		r.MaxDelay = DefaultMaxDelay
	}
	return r
}

// Do calls call until it succeeds, fails in a way classify does not call
// transient, or the attempts run out. An error that is not transient is
// returned as it is. When it gives up on a transient failure it returns
// an error wrapping ErrRateLimited (the last failure was a 429) or
// ErrUnavailable, and the last error, saying how many attempts were made;
// it gives up early when the provider asks to wait longer than MaxDelay
// or than the context has left. Each retry is logged at warn level with
// op ("gemini: generate") and the error.
func (r Retry) Do(ctx context.Context, log *slog.Logger, op string, classify func(error) Failure, call func(context.Context) error) error {
	r = r.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	br := backoff.Retrier{
		Policy:   backoff.Policy{Base: r.BaseDelay, Max: r.MaxDelay},
		Attempts: r.Attempts,
		MaxWait:  r.MaxDelay,
		Clock:    r.Clock,
		OnRetry: func(attempt int, wait time.Duration, _ Failure, err error) {
			log.WarnContext(ctx, "retrying model call", slog.String("op", op), slog.Int("attempt", attempt),
				slog.Duration("wait", wait), slog.Any("error", err))
		},
	}
	err := br.Do(ctx, call, classify)
	var be *backoff.Error
	if !errors.As(err, &be) {
		return err // nil, or a failure that is not transient
	}
	if ctx.Err() != nil && errors.Is(be.Reason, ctx.Err()) {
		return fmt.Errorf("%w (%w)", ctx.Err(), be.Err)
	}
	kind := ErrUnavailable
	if be.Failure.RateLimited {
		kind = ErrRateLimited
	}
	switch {
	case errors.Is(be.Reason, backoff.ErrWaitTooLong):
		return fmt.Errorf("%w: asked to wait %s before retrying (more than %s): %w", kind, be.Wait, r.MaxDelay, be.Err)
	case errors.Is(be.Reason, backoff.ErrNoTime):
		return fmt.Errorf("%w: no time left to retry after %d attempts: %w", kind, be.Attempts, be.Err)
	}
	return fmt.Errorf("%w: gave up after %d attempts: %w", kind, be.Attempts, be.Err)
}
