package llm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent/internal/backoff/backofftest"
)

func TestRetryDo(t *testing.T) {
	transient := func(error) Failure { return Failure{Transient: true} }
	boom := errors.New("503")
	r := Retry{Attempts: 3, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}

	calls := 0
	err := r.Do(context.Background(), nil, "x", transient, func(context.Context) error { calls++; return boom })
	if calls != 3 || !errors.Is(err, ErrUnavailable) || !errors.Is(err, boom) || !strings.Contains(err.Error(), "gave up after 3 attempts") {
		t.Errorf("%d calls, %v", calls, err)
	}

	calls = 0
	limited := func(error) Failure { return Failure{Transient: true, RateLimited: true} }
	err = r.Do(context.Background(), nil, "x", limited, func(context.Context) error { calls++; return boom })
	if !errors.Is(err, ErrRateLimited) || !errors.Is(err, ErrUnavailable) {
		t.Errorf("rate limited: %v", err)
	}

	// Not enough time left before the deadline: give up without waiting.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	clk := backofftest.NewClock(time.Now())
	slow := Retry{Attempts: 5, BaseDelay: time.Second, MaxDelay: time.Second, Clock: clk}
	calls = 0
	err = slow.Do(ctx, nil, "x", transient, func(context.Context) error { calls++; return boom })
	if calls != 1 || !strings.Contains(err.Error(), "no time left to retry") || len(clk.Sleeps()) != 0 {
		t.Errorf("deadline: %d calls, slept %v, %v", calls, clk.Sleeps(), err)
	}

	// A provider's wait is waited as it is, on the clock.
	clk = backofftest.NewClock(time.Now())
	calls = 0
	after := func(error) Failure { return Failure{Transient: true, RateLimited: true, After: 3 * time.Second} }
	err = Retry{Attempts: 4, BaseDelay: time.Millisecond, MaxDelay: 8 * time.Second, Clock: clk}.Do(context.Background(), nil, "x", after,
		func(context.Context) error {
			calls++
			if calls == 1 {
				return boom
			}
			return nil
		})
	if err != nil || calls != 2 || len(clk.Sleeps()) != 1 || clk.Sleeps()[0] != 3*time.Second {
		t.Errorf("Retry-After: %d calls, slept %v, %v", calls, clk.Sleeps(), err)
	}

	// A cancelled context stops at once and says so.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if err := r.Do(ctx, nil, "x", transient, func(context.Context) error { return boom }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	// A final error is returned as it is, once.
	calls = 0
	final := func(error) Failure { return Failure{} }
	if err := r.Do(context.Background(), nil, "x", final, func(context.Context) error { calls++; return boom }); err != boom || calls != 1 {
		t.Errorf("final: %d calls, %v", calls, err)
	}
}
