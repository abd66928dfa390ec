package admission_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docent-hq/docent/admission"
)

// clock is a test clock that only moves when told.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// hold takes the controller's only slot until the returned function is
// called.
func hold(t *testing.T, c *admission.Controller) func() {
	t.Helper()
	release, err := c.Acquire(context.Background(), "test", "hold")
	if err != nil {
		t.Fatal(err)
	}
	return release
}

// outcome is what one queued job was told.
type outcome struct {
	label string
	err   error
}

// jobs records, in order, what queued jobs were told.
type jobs struct {
	mu   sync.Mutex
	got  []outcome
	done chan outcome
}

func newJobs() *jobs { return &jobs{done: make(chan outcome, 1000)} }

func (j *jobs) job(label string) func(context.Context, error) {
	return func(_ context.Context, err error) {
		j.mu.Lock()
		j.got = append(j.got, outcome{label, err})
		j.mu.Unlock()
		j.done <- outcome{label, err}
	}
}

// wait waits for n outcomes and returns them in the order they came.
func (j *jobs) wait(t *testing.T, n int) []outcome {
	t.Helper()
	var out []outcome
	for range n {
		select {
		case o := <-j.done:
			out = append(out, o)
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d of %d jobs were told anything: %v", len(out), n, out)
		}
	}
	return out
}

func labels(os []outcome) []string {
	var out []string
	for _, o := range os {
		out = append(out, o.label)
	}
	return out
}

func TestFairOrderBetweenPlatformsThenChannels(t *testing.T) {
	c := admission.New(admission.Options{Slots: 1})
	release := hold(t, c)
	j := newJobs()
	ctx := context.Background()
	for _, q := range []struct{ platform, channel, label string }{
		{"slack", "C1", "C1-1"}, {"slack", "C1", "C1-2"}, {"slack", "C1", "C1-3"}, {"slack", "C1", "C1-4"},
		{"slack", "C2", "C2-1"}, {"discord", "D1", "D1-1"}, {"api", "token", "api-1"}, {"slack", "C1", "C1-5"},
	} {
		c.Go(ctx, q.platform, q.channel, j.job(q.label))
	}
	if s := c.Stats(); s.Waiting["slack"] != 6 || s.Waiting["discord"] != 1 || s.Running != 1 {
		t.Fatalf("stats = %+v, want 6 slack and 1 discord waiting, 1 running", s)
	}
	release()
	got := labels(j.wait(t, 8))
	want := []string{"C1-1", "D1-1", "api-1", "C2-1", "C1-2", "C1-3", "C1-4", "C1-5"}
	if !equal(got, want) {
		t.Errorf("served in order %v, want %v (round robin between platforms, then channels)", got, want)
	}
}

func TestFullQueueGivesWayFromTheLongestPlatformAndChannel(t *testing.T) {
	c := admission.New(admission.Options{Slots: 1, MaxQueue: 3})
	release := hold(t, c)
	j := newJobs()
	ctx := context.Background()
	for _, l := range []string{"C1-1", "C1-2", "C1-3"} {
		c.Go(ctx, "slack", "C1", j.job(l))
	}
	// Discord has no one waiting: the newest of Slack's C1 gives way.
	c.Go(ctx, "discord", "D1", j.job("D1-1"))
	if o := j.wait(t, 1)[0]; o.label != "C1-3" || !busy(o.err, admission.ReasonFull) {
		t.Fatalf("gave way: %+v, want C1-3 refused queue_full", o)
	}
	// Slack still has the most waiting, and C1 the most of Slack: the
	// newcomer from C1 is refused at once.
	c.Go(ctx, "slack", "C1", j.job("C1-4"))
	if o := j.wait(t, 1)[0]; o.label != "C1-4" || !busy(o.err, admission.ReasonFull) {
		t.Fatalf("refused: %+v, want C1-4 refused queue_full", o)
	}
	// A newcomer from another Slack channel pushes out C1's newest.
	c.Go(ctx, "slack", "C2", j.job("C2-1"))
	if o := j.wait(t, 1)[0]; o.label != "C1-2" || !busy(o.err, admission.ReasonFull) {
		t.Fatalf("gave way: %+v, want C1-2 refused queue_full", o)
	}
	release()
	got := j.wait(t, 3)
	for _, o := range got {
		if o.err != nil {
			t.Errorf("%s: %v, want admitted", o.label, o.err)
		}
	}
	if want := []string{"C1-1", "D1-1", "C2-1"}; !equal(labels(got), want) {
		t.Errorf("served %v, want %v", labels(got), want)
	}
}

// TestShedsEarlyByItsPlaceInTheFairOrder: with the time per answer
// known, a question whose expected wait is over MaxWait is refused at
// once; the estimate counts its place in the fair order, so a flood in
// one channel sheds that channel and not a quiet one.
func TestShedsEarlyByItsPlaceInTheFairOrder(t *testing.T) {
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	var shedMu sync.Mutex
	shed := map[string]int{}
	c := admission.New(admission.Options{Slots: 1, MaxWait: 25 * time.Second, JobWait: 25 * time.Second, Now: clk.Now,
		OnShed: func(platform string, r admission.Reason) {
			shedMu.Lock()
			shed[platform+"/"+string(r)]++
			shedMu.Unlock()
		}})
	// One answer that takes 10s sets the time per answer.
	release := hold(t, c)
	clk.Advance(10 * time.Second)
	release()

	release = hold(t, c)
	j := newJobs()
	ctx := context.Background()
	c.Go(ctx, "slack", "C1", j.job("C1-1")) // 10s
	c.Go(ctx, "slack", "C1", j.job("C1-2")) // 20s
	c.Go(ctx, "slack", "C1", j.job("C1-3")) // 30s: refused at once
	o := j.wait(t, 1)[0]
	var be *admission.BusyError
	if o.label != "C1-3" || !errors.As(o.err, &be) || be.Reason != admission.ReasonWait || be.RetryAfter != 5*time.Second {
		t.Fatalf("C1-3: %+v, want refused (wait, retry after 5s)", o)
	}
	// A quiet channel and another platform go after C1's first only.
	c.Go(ctx, "slack", "C2", j.job("C2-1"))
	c.Go(ctx, "discord", "D1", j.job("D1-1"))
	if s := c.Stats(); s.Waiting["slack"] != 3 || s.Waiting["discord"] != 1 {
		t.Fatalf("stats = %+v, want C2 and D1 queued beside C1's two", s)
	}
	release()
	for _, o := range j.wait(t, 4) {
		if o.err != nil {
			t.Errorf("%s: %v, want admitted", o.label, o.err)
		}
	}
	shedMu.Lock()
	defer shedMu.Unlock()
	if len(shed) != 1 || shed["slack/wait"] != 1 {
		t.Errorf("OnShed saw %v, want one slack/wait", shed)
	}
}

func TestWaitIsBoundedByMaxWait(t *testing.T) {
	c := admission.New(admission.Options{Slots: 1, MaxWait: 50 * time.Millisecond, JobWait: 50 * time.Millisecond})
	release := hold(t, c)
	defer release()
	_, err := c.Acquire(context.Background(), "api", "")
	if !busy(err, admission.ReasonWait) || !errors.Is(err, admission.ErrBusy) {
		t.Fatalf("Acquire after MaxWait: %v, want refused (wait)", err)
	}
	j := newJobs()
	c.Go(context.Background(), "slack", "C1", j.job("late"))
	if o := j.wait(t, 1)[0]; !busy(o.err, admission.ReasonWait) {
		t.Fatalf("queued job after MaxWait: %v, want refused (wait)", o.err)
	}
	if s := c.Stats(); len(s.Waiting) != 0 {
		t.Errorf("still waiting: %v", s.Waiting)
	}
}

func TestCancelledWaitersLeaveTheQueue(t *testing.T) {
	c := admission.New(admission.Options{Slots: 1})
	release := hold(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	j := newJobs()
	c.Go(ctx, "slack", "C1", j.job("gone"))
	errc := make(chan error, 1)
	go func() {
		_, err := c.Acquire(ctx, "api", "")
		errc <- err
	}()
	waitFor(t, func() bool { return c.Stats().Waiting["api"] == 1 })
	cancel()
	if o := j.wait(t, 1)[0]; !errors.Is(o.err, context.Canceled) {
		t.Errorf("cancelled job told %v, want context.Canceled", o.err)
	}
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Acquire: %v, want context.Canceled", err)
	}
	if s := c.Stats(); len(s.Waiting) != 0 {
		t.Errorf("still waiting: %v", s.Waiting)
	}
	release()
	// The slot is free again for a newcomer.
	r, err := c.Acquire(context.Background(), "api", "")
	if err != nil {
		t.Fatal(err)
	}
	r()
	r() // a second release is a no-op
	if s := c.Stats(); s.Running != 0 {
		t.Errorf("running = %d after every release", s.Running)
	}
}

// TestBoundedRunsAndGoroutines: a thousand queued jobs run at most Slots
// at a time and hold no goroutine while they wait.
func TestBoundedRunsAndGoroutines(t *testing.T) {
	const slots, n = 4, 1000
	c := admission.New(admission.Options{Slots: slots, MaxQueue: n})
	gate := make(chan struct{})
	var running, peak atomic.Int64
	var wg sync.WaitGroup
	wg.Add(n)
	before := runtime.NumGoroutine()
	for i := range n {
		c.Go(context.Background(), "slack", string(rune('A'+i%7)), func(_ context.Context, err error) {
			defer wg.Done()
			if err != nil {
				t.Error(err)
				return
			}
			r := running.Add(1)
			for p := peak.Load(); r > p && !peak.CompareAndSwap(p, r); p = peak.Load() {
			}
			<-gate
			running.Add(-1)
		})
	}
	waitFor(t, func() bool { return c.Stats().Running == slots })
	if g := runtime.NumGoroutine() - before; g > slots+8 {
		t.Errorf("%d goroutines for %d queued jobs, want about %d (one per running job)", g, n, slots)
	}
	close(gate)
	wg.Wait()
	if p := peak.Load(); p > slots {
		t.Errorf("%d jobs ran at once, want at most %d", p, slots)
	}
}

func busy(err error, r admission.Reason) bool {
	var be *admission.BusyError
	return errors.As(err, &be) && be.Reason == r && be.RetryAfter >= time.Second
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// waitFor waits until cond holds, checking after each scheduler yield.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		runtime.Gosched()
	}
}
