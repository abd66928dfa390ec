package backoff_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/docent-hq/docent/internal/backoff"
	"github.com/docent-hq/docent/internal/backoff/backofftest"
)

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func TestDelay(t *testing.T) {
	for _, tc := range []struct {
		name   string
		p      backoff.Policy
		n      int
		lo, hi time.Duration
	}{
		{"first retry", backoff.Policy{Base: time.Second, Max: time.Minute}, 0, 500 * time.Millisecond, time.Second},
		{"doubles", backoff.Policy{Base: time.Second, Max: time.Minute}, 3, 4 * time.Second, 8 * time.Second},
		{"capped", backoff.Policy{Base: time.Second, Max: 10 * time.Second}, 10, 5 * time.Second, 10 * time.Second},
		{"no overflow", backoff.Policy{Base: time.Second, Max: 10 * time.Second}, 200, 5 * time.Second, 10 * time.Second},
		{"no policy", backoff.Policy{}, 3, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, j := range []float64{0, 0.5, 0.999} {
				p := tc.p
				p.Jitter = func() float64 { return j }
				if d := p.Delay(tc.n); d < tc.lo || d > tc.hi {
					t.Errorf("Delay(%d) with jitter %v = %s, want in [%s, %s]", tc.n, j, d, tc.lo, tc.hi)
				}
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		h    string
		want time.Duration
		ok   bool
	}{
		{"7", 7 * time.Second, true},
		{" 0.25 ", 250 * time.Millisecond, true},
		{"0", 0, true},
		{t0.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{t0.Add(-time.Minute).Format(http.TimeFormat), 0, true},
		{"", 0, false},
		{"soon", 0, false},
		{"-3", 0, false},
	} {
		if d, ok := backoff.RetryAfter(tc.h, t0); d != tc.want || ok != tc.ok {
			t.Errorf("RetryAfter(%q) = %s, %v; want %s, %v", tc.h, d, ok, tc.want, tc.ok)
		}
	}
}

func TestTransient(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"refused", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"url error", &url.Error{Op: "Get", URL: "http://x", Err: io.EOF}, true},
		{"cut short", io.ErrUnexpectedEOF, true},
		{"client timeout", context.DeadlineExceeded, true},
		{"cancelled", context.Canceled, false},
		{"plain", errors.New("bad request"), false},
		{"nil", nil, false},
	} {
		if got := backoff.Transient(tc.err); got != tc.want {
			t.Errorf("%s: Transient(%v) = %v", tc.name, tc.err, got)
		}
	}
	for code, want := range map[int]bool{200: false, 400: false, 401: false, 404: false, 408: true, 429: true, 500: true, 502: true, 503: true} {
		if got := backoff.TransientStatus(code); got != want {
			t.Errorf("TransientStatus(%d) = %v", code, got)
		}
	}
	h := http.Header{"Retry-After": {"3"}}
	if f := backoff.HTTPFailure(429, h, t0); !f.Transient || !f.RateLimited || f.After != 3*time.Second {
		t.Errorf("HTTPFailure(429, Retry-After: 3) = %+v", f)
	}
	if f := backoff.HTTPFailure(404, h, t0); f.Transient || f.RateLimited {
		t.Errorf("HTTPFailure(404) = %+v", f)
	}
}

// op fails with the errors of fails in turn, then succeeds.
func op(calls *int, fails ...error) func(context.Context) error {
	return func(context.Context) error {
		*calls++
		if *calls <= len(fails) {
			return fails[*calls-1]
		}
		return nil
	}
}

var errTransient = errors.New("transient")

// classify reads errTransient as transient, anything wrapping a
// retryAfter as rate limited with its wait.
func classify(err error) backoff.Failure {
	var ra retryAfter
	if errors.As(err, &ra) {
		return backoff.Failure{Transient: true, RateLimited: true, After: time.Duration(ra)}
	}
	return backoff.Failure{Transient: errors.Is(err, errTransient)}
}

type retryAfter time.Duration

func (r retryAfter) Error() string { return fmt.Sprintf("429, retry after %s", time.Duration(r)) }

func TestRetrier(t *testing.T) {
	final := errors.New("final")
	policy := backoff.Policy{Base: time.Second, Max: 8 * time.Second, Jitter: func() float64 { return 0 }}
	for _, tc := range []struct {
		name       string
		attempts   int
		maxWait    time.Duration
		deadline   time.Duration
		fails      []error
		wantCalls  int
		wantSleeps []time.Duration
		wantReason error // nil: success, or the error itself when final
		wantErr    error
	}{
		{"succeeds after backoff", 4, 0, 0, []error{errTransient, errTransient}, 3,
			[]time.Duration{500 * time.Millisecond, time.Second}, nil, nil},
		{"a final error at once", 4, 0, 0, []error{final}, 1, nil, nil, final},
		{"Retry-After waited as it is", 4, 0, 0, []error{retryAfter(7 * time.Second)}, 2,
			[]time.Duration{7 * time.Second}, nil, nil},
		{"gives up after the attempts", 3, 0, 0, []error{errTransient, errTransient, errTransient, errTransient}, 3,
			[]time.Duration{500 * time.Millisecond, time.Second}, backoff.ErrAttempts, errTransient},
		{"a wait over MaxWait gives up at once", 4, time.Minute, 0, []error{retryAfter(time.Hour)}, 1, nil,
			backoff.ErrWaitTooLong, nil},
		{"no time left before the deadline", 4, 0, 3 * time.Second, []error{retryAfter(5 * time.Second)}, 1, nil,
			backoff.ErrNoTime, nil},
		{"unlimited attempts", 0, 0, 0, []error{errTransient, errTransient, errTransient, errTransient, errTransient}, 6,
			[]time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Now() // the context's deadline is on the wall clock
			clk := backofftest.NewClock(now)
			var retries []int
			r := backoff.Retrier{Policy: policy, Attempts: tc.attempts, MaxWait: tc.maxWait, Clock: clk,
				OnRetry: func(attempt int, _ time.Duration, _ backoff.Failure, _ error) { retries = append(retries, attempt) }}
			ctx := context.Background()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, now.Add(tc.deadline))
				defer cancel()
			}
			calls := 0
			err := r.Do(ctx, op(&calls, tc.fails...), classify)
			if calls != tc.wantCalls || !slices.Equal(clk.Sleeps(), tc.wantSleeps) {
				t.Errorf("%d calls, sleeps %v; want %d, %v", calls, clk.Sleeps(), tc.wantCalls, tc.wantSleeps)
			}
			if len(retries) != len(tc.wantSleeps) {
				t.Errorf("OnRetry called for attempts %v", retries)
			}
			switch {
			case tc.wantReason != nil:
				var be *backoff.Error
				if !errors.As(err, &be) || !errors.Is(err, tc.wantReason) || be.Attempts != calls {
					t.Errorf("err = %v, want a *backoff.Error for %v after %d attempts", err, tc.wantReason, calls)
				}
				if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
					t.Errorf("err = %v does not wrap the last error %v", err, tc.wantErr)
				}
			case tc.wantErr != nil:
				if err != tc.wantErr {
					t.Errorf("err = %v, want %v as it is", err, tc.wantErr)
				}
			case err != nil:
				t.Errorf("err = %v", err)
			}
		})
	}
}

// TestRetrierStopsWithTheContext: a context that ends during a wait ends
// Do with the context's error.
func TestRetrierStopsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	r := backoff.Retrier{Policy: backoff.Policy{Base: time.Hour, Max: time.Hour}, Attempts: 5}
	err := r.Do(ctx, func(context.Context) error {
		calls++
		cancel()
		return errTransient
	}, classify)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, errTransient) || calls != 1 {
		t.Errorf("err = %v after %d calls", err, calls)
	}
}
