// Package backofftest has the fake clock that drives retries, rate
// limiters and schedulers under test.
package backofftest

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Clock is a fake clock: Sleep advances it at once (or returns the
// context's error) and records the wait, so retry and rate-limit tests
// never sleep for real. It is safe for concurrent use and implements
// backoff.Clock.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	sleeps  []time.Duration
	waiters []waiter
}

// waiter is an After channel and when it fires.
type waiter struct {
	at time.Time
	ch chan time.Time
}

// NewClock returns a Clock set to start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep advances the clock by d and records it, unless ctx has ended.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	c.fireLocked()
	return nil
}

// Advance moves the clock forward by d without recording a sleep, firing
// the After channels that come due.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.fireLocked()
}

// After returns a channel that receives the clock's time once the clock
// has been moved (Advance, Sleep) d past now; at once when d <= 0. It is
// how a scheduler waits on the fake clock.
func (c *Clock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, waiter{at: c.now.Add(d), ch: ch})
	return ch
}

// Waiters is how many After channels wait for the clock to move: a test
// advances the clock once what it drives is waiting.
func (c *Clock) Waiters() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}

func (c *Clock) fireLocked() {
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(c.now) {
			kept = append(kept, w)
			continue
		}
		w.ch <- c.now
	}
	c.waiters = kept
}

// Sleeps returns the waits Sleep was asked for, in order.
func (c *Clock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.sleeps)
}
