// Package backoff is the one retry policy of docent's clients (the model
// providers, the wiki sources, Slack, the Discord gateway, the Typesense
// nodes): exponential backoff with jitter, a server's Retry-After
// honoured, waits bounded by the context, and one reading of which
// failures are worth repeating. Every wait goes through a Clock, so tests
// drive retries with a fake one instead of sleeping.
package backoff

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Clock measures and waits: Real in production, a fake in tests.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// Sleep waits for d, or returns ctx's error when ctx ends first.
	Sleep(ctx context.Context, d time.Duration) error
}

// Real is the wall clock.
var Real Clock = realClock{}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Policy is exponential backoff with "equal jitter": the wait before
// retry n (counted from 0) is between half and all of min(Max,
// Base·2^n), so that many clients hit by one outage do not retry in step.
type Policy struct {
	// Base is the wait before the first retry (at most); Max caps every
	// wait.
	Base, Max time.Duration
	// Jitter returns a number in [0, 1); math/rand when nil. 0 gives the
	// shortest waits (half of each step), which tests use.
	Jitter func() float64
}

// Delay is the wait before retry n (0 for the first retry).
func (p Policy) Delay(n int) time.Duration {
	d := p.Max
	if n < 30 && p.Base > 0 {
		if s := p.Base << n; s > 0 && (p.Max <= 0 || s < p.Max) {
			d = s
		}
	}
	if d <= 0 {
		return 0
	}
	j := rand.Float64
	if p.Jitter != nil {
		j = p.Jitter
	}
	return d/2 + time.Duration(j()*float64(d/2))
}

// Failure is a client's reading of a failed attempt.
type Failure struct {
	// Transient is true for a failure worth repeating (Transient,
	// TransientStatus).
	Transient bool
	// RateLimited is true when the server refused for the rate (429).
	RateLimited bool
	// After is how long the server asked to wait (Retry-After, Gemini's
	// RetryInfo); 0 when it did not say. A given After is waited as it
	// is, in place of the backoff.
	After time.Duration
}

// Reasons a Retrier gives up on a transient failure, wrapped by *Error.
var (
	// ErrAttempts: the attempts ran out.
	ErrAttempts = errors.New("gave up")
	// ErrWaitTooLong: the server asked to wait longer than MaxWait.
	ErrWaitTooLong = errors.New("asked to wait too long")
	// ErrNoTime: the next wait is longer than the context has left.
	ErrNoTime = errors.New("no time left to retry")
)

// Error is what Do returns when it gives up on a transient failure: why
// (Reason: ErrAttempts, ErrWaitTooLong, ErrNoTime, or the context's
// error), after how many attempts, and the last failure.
type Error struct {
	// Reason says why Do gave up.
	Reason error
	// Attempts is how many times the operation ran.
	Attempts int
	// Wait is the wait Do would have needed (the server's for
	// ErrWaitTooLong).
	Wait time.Duration
	// Failure is the reading of the last error; Err the error itself.
	Failure Failure
	Err     error
}

// Error names the reason, the attempts and the last error.
func (e *Error) Error() string {
	switch {
	case errors.Is(e.Reason, ErrWaitTooLong):
		return fmt.Sprintf("asked to wait %s before retrying: %v", e.Wait, e.Err)
	case errors.Is(e.Reason, ErrNoTime):
		return fmt.Sprintf("no time left to retry after %d attempts: %v", e.Attempts, e.Err)
	case errors.Is(e.Reason, ErrAttempts):
		return fmt.Sprintf("gave up after %d attempts: %v", e.Attempts, e.Err)
	}
	return fmt.Sprintf("%v (%v)", e.Reason, e.Err)
}

// Unwrap gives the reason and the last error.
func (e *Error) Unwrap() []error { return []error{e.Reason, e.Err} }

// Retrier repeats an operation that fails transiently.
type Retrier struct {
	Policy
	// Attempts is how many times the operation is tried in all; 0 or
	// less: until it succeeds, fails for good or the context ends.
	Attempts int
	// MaxWait, when positive, is the longest wait a server may ask for; a
	// longer Retry-After gives up at once (ErrWaitTooLong).
	MaxWait time.Duration
	// Clock waits; Real when nil.
	Clock Clock
	// OnRetry, when set, is called before each wait with the attempt that
	// failed (from 1), the wait and the failure: for logs and counters.
	OnRetry func(attempt int, wait time.Duration, f Failure, err error)
}

// Do runs op until it returns nil or a failure classify does not call
// transient (returned as it is), or Do gives up (an *Error wrapping the
// reason and the last error). A context that ends during op or a wait
// gives up with the context's error as the reason.
func (r Retrier) Do(ctx context.Context, op func(ctx context.Context) error, classify func(error) Failure) error {
	clock := r.Clock
	if clock == nil {
		clock = Real
	}
	for attempt := 1; ; attempt++ {
		err := op(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return &Error{Reason: ctx.Err(), Attempts: attempt, Err: err}
		}
		f := classify(err)
		if !f.Transient {
			return err
		}
		giveUp := func(reason error, wait time.Duration) error {
			return &Error{Reason: reason, Attempts: attempt, Wait: wait, Failure: f, Err: err}
		}
		if r.Attempts > 0 && attempt >= r.Attempts {
			return giveUp(ErrAttempts, 0)
		}
		wait := r.Delay(attempt - 1)
		if f.After > 0 {
			if r.MaxWait > 0 && f.After > r.MaxWait {
				return giveUp(ErrWaitTooLong, f.After)
			}
			wait = f.After
		}
		if dl, ok := ctx.Deadline(); ok && dl.Sub(clock.Now()) < wait {
			return giveUp(ErrNoTime, wait)
		}
		if r.OnRetry != nil {
			r.OnRetry(attempt, wait, f, err)
		}
		if serr := clock.Sleep(ctx, wait); serr != nil {
			return &Error{Reason: serr, Attempts: attempt, Wait: wait, Failure: f, Err: err}
		}
	}
}

// RetryAfter parses a Retry-After header value: delay-seconds (a
// fraction too, as some APIs send) or an HTTP date, relative to now. It
// reports false for an empty or unreadable value.
func RetryAfter(h string, now time.Time) (time.Duration, bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(h, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second)), true
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(0, t.Sub(now)), true
	}
	return 0, false
}

// TransientStatus reports whether an HTTP status is worth retrying: 408
// (request timeout), 429 (rate limited) and every 5xx.
func TransientStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
}

// Transient reports whether err is a network failure worth retrying: a
// timeout, a refused, reset or aborted connection, a response cut short.
// An error of the context the caller passed is not (check ctx.Err()
// first); a client timeout (context.DeadlineExceeded from the client's
// own deadline) is.
func Transient(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	var netErr net.Error
	return errors.As(err, &netErr) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, context.DeadlineExceeded)
}

// HTTPFailure reads a response status and its Retry-After header (now is
// the clock's time, for a date): transient for TransientStatus, rate
// limited for 429.
func HTTPFailure(code int, header http.Header, now time.Time) Failure {
	f := Failure{Transient: TransientStatus(code), RateLimited: code == http.StatusTooManyRequests}
	if header != nil {
		if d, ok := RetryAfter(header.Get("Retry-After"), now); ok {
			f.After = d
		}
	}
	return f
}
