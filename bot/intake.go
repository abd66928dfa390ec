package bot

import (
	"context"
	"fmt"
	"sync"
)

// Intake runs an adapter's event handlers on a bounded pool of workers,
// so that a burst of events holds a bounded number of goroutines: the
// events wait in a bounded backlog (a slice, not goroutines), oldest
// first. Handlers should be quick — deciding, acknowledging, queueing an
// answer (Config.Admission), not answering. It is safe for concurrent
// use.
type Intake struct {
	work   context.Context
	cancel context.CancelFunc
	queue  chan func(context.Context)

	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
	// pending counts the events taken and not yet handled.
	pending sync.WaitGroup
}

// NewIntake starts workers (default 16) over a backlog of at most
// backlog events (default 10,000).
func NewIntake(workers, backlog int) *Intake {
	if workers <= 0 {
		workers = 16
	}
	if backlog <= 0 {
		backlog = 10_000
	}
	in := &Intake{queue: make(chan func(context.Context), backlog)}
	in.work, in.cancel = context.WithCancel(context.Background())
	for range workers {
		in.wg.Go(func() {
			for fn := range in.queue {
				fn(in.work)
				in.pending.Done()
			}
		})
	}
	return in
}

// Go queues fn. It reports false, running nothing, when the backlog is
// full or Close has begun.
func (in *Intake) Go(fn func(ctx context.Context)) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return false
	}
	in.pending.Add(1)
	select {
	case in.queue <- fn:
		return true
	default:
		in.pending.Done()
		return false
	}
}

// Wait waits until every event taken so far is handled: a test asserts
// what did not happen after it, instead of sleeping.
func (in *Intake) Wait() { in.pending.Wait() }

// Close stops taking events and waits for the backlog to be handled.
// When ctx ends first the handlers' context is cancelled, and Close
// returns ctx's error once they stopped.
func (in *Intake) Close(ctx context.Context) error {
	in.mu.Lock()
	if !in.closed {
		in.closed = true
		close(in.queue)
	}
	in.mu.Unlock()
	done := make(chan struct{})
	go func() {
		in.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		in.cancel()
		return nil
	case <-ctx.Done():
		in.cancel()
		<-done
		return fmt.Errorf("bot: events in flight cancelled: %w", ctx.Err())
	}
}
