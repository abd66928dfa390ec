package api

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"
)

// Limits bound the asks a server works on. When more arrive than it can
// take, the extra ones are refused at once, before any work is done, with
// 503 and Retry-After: an answer is never computed and then thrown away.
type Limits struct {
	// MaxInFlight is how many asks are answered at once. Default
	// 4 × GOMAXPROCS: the offline pipeline is CPU-bound, and a few extra
	// cover the time an ask waits on the store.
	MaxInFlight int
	// MaxQueue is how many asks may wait for a free slot; an ask that
	// finds the queue full is refused at once. Default 1024.
	MaxQueue int
	// MaxWait is how long an ask may wait for a slot before it is
	// refused. Default DefaultMaxWait.
	MaxWait time.Duration
}

// DefaultMaxWait is how long an ask waits for a slot by default.
const DefaultMaxWait = 10 * time.Second

func (l Limits) withDefaults() Limits {
	if l.MaxInFlight <= 0 {
		l.MaxInFlight = 4 * runtime.GOMAXPROCS(0)
	}
	if l.MaxQueue <= 0 {
		l.MaxQueue = 1024
	}
	if l.MaxWait <= 0 {
		l.MaxWait = DefaultMaxWait
	}
	return l
}

// Limiter admits at most MaxInFlight asks at once, first come first
// served, with at most MaxQueue waiting. One Limiter is shared by every
// entrance that answers on a server (POST /api/ask, MCP's ask_docs), so
// that together they never work on more than MaxInFlight asks. It is safe
// for concurrent use.
type Limiter struct {
	slots   chan struct{}
	waiting atomic.Int64
	limits  Limits
	last    atomic.Int64 // unix nanoseconds of the last Release
}

// NewLimiter returns a Limiter; zero fields of l take the defaults.
func NewLimiter(l Limits) *Limiter {
	l = l.withDefaults()
	return &Limiter{slots: make(chan struct{}, l.MaxInFlight), limits: l}
}

// Acquire waits for a slot. It reports false when the queue is full, the
// wait is over MaxWait or ctx ends first; otherwise the caller must call
// Release when the ask is done.
func (l *Limiter) Acquire(ctx context.Context) bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
	}
	if l.waiting.Add(1) > int64(l.limits.MaxQueue) {
		l.waiting.Add(-1)
		return false
	}
	defer l.waiting.Add(-1)
	t := time.NewTimer(l.limits.MaxWait)
	defer t.Stop()
	select {
	case l.slots <- struct{}{}:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// Release frees the slot an Acquire took.
func (l *Limiter) Release() {
	<-l.slots
	l.last.Store(time.Now().UnixNano())
}

// LastRelease is when an admitted ask last ended (zero before the first).
func (l *Limiter) LastRelease() time.Time {
	if n := l.last.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}
