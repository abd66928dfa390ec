package llm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRetryDelay(t *testing.T) {
	r := Retry{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}.withDefaults()
	for attempt, want := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 4: 800 * time.Millisecond, 5: time.Second, 40: time.Second} {
		for range 50 {
			if d := r.delay(attempt); d < want/2 || d > want {
				t.Fatalf("delay after attempt %d = %s, want within [%s, %s]", attempt, d, want/2, want)
			}
		}
	}
}

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
	slow := Retry{Attempts: 5, BaseDelay: time.Second, MaxDelay: time.Second}
	calls = 0
	start := time.Now()
	err = slow.Do(ctx, nil, "x", transient, func(context.Context) error { calls++; return boom })
	if calls != 1 || !strings.Contains(err.Error(), "no time left to retry") || time.Since(start) > 40*time.Millisecond {
		t.Errorf("deadline: %d calls in %s, %v", calls, time.Since(start), err)
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
