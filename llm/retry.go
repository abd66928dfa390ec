package llm

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"
)

// Retry defaults: four attempts, waits of about 0.5s, 1s and 2s between
// them (with jitter), never more than 8s.
const (
	DefaultAttempts  = 4
	DefaultBaseDelay = 500 * time.Millisecond
	DefaultMaxDelay  = 8 * time.Second
)

// Retry repeats a provider call that failed transiently, with exponential
// backoff and jitter. Neither vendor client retries by default; both
// providers use this one policy, so that an outage looks the same
// whichever is configured. The zero value takes the defaults.
type Retry struct {
	// Attempts is how many times a call is tried in all; 1 disables
	// retries. Default DefaultAttempts.
	Attempts int
	// BaseDelay is the wait before the second attempt; each later wait
	// doubles, up to MaxDelay. Defaults DefaultBaseDelay, DefaultMaxDelay.
	BaseDelay, MaxDelay time.Duration
}

// Failure is a provider's reading of a failed call.
type Failure struct {
	// Transient is true for a failure worth repeating: HTTP 429 and 5xx,
	// timeouts, refused or reset connections.
	Transient bool
	// RateLimited is true for HTTP 429 (Gemini: RESOURCE_EXHAUSTED).
	RateLimited bool
	// After is how long the provider asked to wait (Retry-After, Gemini's
	// RetryInfo), 0 when it did not say.
	After time.Duration
}

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
	for attempt := 1; ; attempt++ {
		err := call(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		f := classify(err)
		if !f.Transient {
			return err
		}
		kind := ErrUnavailable
		if f.RateLimited {
			kind = ErrRateLimited
		}
		if attempt >= r.Attempts {
			return fmt.Errorf("%w: gave up after %d attempts: %w", kind, attempt, err)
		}
		wait := r.delay(attempt)
		if f.After > 0 {
			if f.After > r.MaxDelay {
				return fmt.Errorf("%w: asked to wait %s before retrying (more than %s): %w", kind, f.After, r.MaxDelay, err)
			}
			wait = max(wait, f.After)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return fmt.Errorf("%w: no time left to retry after %d attempts: %w", kind, attempt, err)
		}
		log.WarnContext(ctx, "retrying model call", slog.String("op", op), slog.Int("attempt", attempt),
			slog.Duration("wait", wait), slog.Any("error", err))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (%w)", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// delay is the wait after the attempt-th failure: BaseDelay·2^(attempt-1)
// capped at MaxDelay, of which the upper half is random ("equal jitter"),
// so that many clients hit by one outage do not retry in step.
func (r Retry) delay(attempt int) time.Duration {
	d := r.BaseDelay << min(attempt-1, 20)
	if d <= 0 || d > r.MaxDelay {
		d = r.MaxDelay
	}
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(half)+1))
}
