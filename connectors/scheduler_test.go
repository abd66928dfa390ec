package connectors_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/docent-hq/docent"

	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/connectorstest"
)

// fakeSyncer blocks each sync until released (or its context ends) and
// records how many ran at once.
type fakeSyncer struct {
	mu         sync.Mutex
	calls      map[string]int
	running    map[string]int
	active     int
	maxActive  int
	overlapped bool
	started    chan string
	release    chan struct{}
}

func newFakeSyncer() *fakeSyncer {
	return &fakeSyncer{calls: map[string]int{}, running: map[string]int{},
		started: make(chan string, 100), release: make(chan struct{})}
}

func (f *fakeSyncer) Sync(ctx context.Context, src connectors.Source, progress func(connectors.Progress)) (docent.RunResult, error) {
	name := src.Name()
	f.mu.Lock()
	f.calls[name]++
	f.running[name]++
	if f.running[name] > 1 {
		f.overlapped = true
	}
	f.active++
	f.maxActive = max(f.maxActive, f.active)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.running[name]--
		f.active--
		f.mu.Unlock()
	}()
	progress(connectors.Progress{Source: name, Done: 1, Total: 2})
	f.started <- name
	select {
	case <-f.release:
		return docent.RunResult{Source: name, Added: 1}, nil
	case <-ctx.Done():
		return docent.RunResult{Source: name, Err: "interrupted"}, ctx.Err()
	}
}

func (f *fakeSyncer) stats() (calls map[string]int, maxActive int, overlapped bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := map[string]int{}
	for k, v := range f.calls {
		c[k] = v
	}
	return c, f.maxActive, f.overlapped
}

func waitStarted(t *testing.T, f *fakeSyncer) string {
	t.Helper()
	select {
	case name := <-f.started:
		return name
	case <-time.After(5 * time.Second):
		t.Fatal("no sync started")
		return ""
	}
}

func TestSchedulerRunNow(t *testing.T) {
	f := newFakeSyncer()
	s := connectors.NewScheduler(f, nil, connectors.SchedulerOptions{Workers: 2})
	src := connectorstest.NewSource("hb")
	if err := s.Add(src, "@yearly"); err != nil {
		t.Fatal(err)
	}
	if err := s.RunNow("hb"); !errors.Is(err, connectors.ErrNotRunning) {
		t.Errorf("RunNow before Start = %v, want ErrNotRunning", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.RunNow("hb"); err != nil {
		t.Fatal(err)
	}
	waitStarted(t, f)
	st := s.Status()
	if len(st) != 1 || !st[0].Running || st[0].Progress.Done != 1 || st[0].Next.IsZero() {
		t.Errorf("status while running = %+v", st)
	}
	// A source never runs twice at once.
	if err := s.RunNow("hb"); !errors.Is(err, connectors.ErrSyncBusy) {
		t.Errorf("RunNow while running = %v, want ErrSyncBusy", err)
	}
	if err := s.RunNow("nope"); !errors.Is(err, connectors.ErrUnknownSource) {
		t.Errorf("RunNow(nope) = %v, want ErrUnknownSource", err)
	}
	f.release <- struct{}{}
	deadline := time.Now().Add(5 * time.Second)
	for s.Status()[0].Running {
		if time.Now().After(deadline) {
			t.Fatal("sync did not finish")
		}
		time.Sleep(time.Millisecond)
	}
	if st := s.Status()[0]; st.Last.Added != 1 || st.LastErr != nil {
		t.Errorf("status after run = %+v", st)
	}
	// Idle again: it can be queued again.
	if err := s.RunNow("hb"); err != nil {
		t.Errorf("RunNow after the run finished = %v", err)
	}
	waitStarted(t, f)
	cancel()
	s.Wait()
	if calls, _, overlapped := f.stats(); calls["hb"] != 2 || overlapped {
		t.Errorf("calls = %v, overlapped = %v", calls, overlapped)
	}
	if err := s.RunNow("hb"); !errors.Is(err, connectors.ErrNotRunning) {
		t.Errorf("RunNow after stop = %v, want ErrNotRunning", err)
	}
}

func TestSchedulerBoundsWorkers(t *testing.T) {
	f := newFakeSyncer()
	s := connectors.NewScheduler(f, nil, connectors.SchedulerOptions{Workers: 2, RunAtStart: true})
	for _, name := range []string{"a", "b", "c"} {
		if err := s.Add(connectorstest.NewSource(name), ""); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitStarted(t, f)
	waitStarted(t, f)
	select {
	case name := <-f.started:
		t.Fatalf("a third sync (%s) started with 2 workers", name)
	case <-time.After(50 * time.Millisecond):
	}
	queued := 0
	for _, st := range s.Status() {
		if st.Queued {
			queued++
		}
		if st.Spec != connectors.DefaultSchedule {
			t.Errorf("%s spec = %q, want the default", st.Source, st.Spec)
		}
	}
	if queued != 1 {
		t.Errorf("%d sources queued, want 1", queued)
	}
	f.release <- struct{}{}
	waitStarted(t, f)
	f.release <- struct{}{}
	f.release <- struct{}{}
	cancel()
	s.Wait()
	calls, maxActive, _ := f.stats()
	if maxActive != 2 || calls["a"] != 1 || calls["b"] != 1 || calls["c"] != 1 {
		t.Errorf("calls = %v, max concurrent = %d", calls, maxActive)
	}
}

// TestSchedulerCronSkipsOverlap lets the real cron fire every second while
// the first sync is still running: later ticks are skipped, not stacked.
func TestSchedulerCronSkipsOverlap(t *testing.T) {
	t.Parallel()
	f := newFakeSyncer()
	s := connectors.NewScheduler(f, nil, connectors.SchedulerOptions{Workers: 4})
	if err := s.Add(connectorstest.NewSource("hb"), "@every 1s"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitStarted(t, f)
	time.Sleep(2200 * time.Millisecond) // at least two more ticks
	calls, _, overlapped := f.stats()
	if calls["hb"] != 1 || overlapped {
		t.Errorf("while running: calls = %d, overlapped = %v; want 1, false", calls["hb"], overlapped)
	}
	// Stopping interrupts the running sync and waits for it.
	cancel()
	s.Wait()
	if st := s.Status()[0]; st.Running || !errors.Is(st.LastErr, context.Canceled) {
		t.Errorf("status after stop = %+v", st)
	}
}

func TestSchedulerAddValidates(t *testing.T) {
	s := connectors.NewScheduler(newFakeSyncer(), nil, connectors.SchedulerOptions{})
	for _, c := range []struct {
		name, source, spec string
		ok                 bool
	}{
		{"default spec", "a", "", true},
		{"cron fields", "b", "*/15 * * * *", true},
		{"descriptor", "c", "@hourly", true},
		{"bad spec", "d", "every tuesday", false},
		{"duplicate", "a", "@daily", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := s.Add(connectorstest.NewSource(c.source), c.spec)
			if (err == nil) != c.ok {
				t.Errorf("Add(%s, %q) = %v, want ok=%v", c.source, c.spec, err, c.ok)
			}
		})
	}
}

// TestSchedulerWithEngine runs a real sync through the scheduler.
func TestSchedulerWithEngine(t *testing.T) {
	e := newEnv(t, connectorstest.NewEmbedder("v1"))
	e.src.Put(doc("a.md", "Alpha."))
	s := connectors.NewScheduler(e.engine(), nil, connectors.SchedulerOptions{})
	if err := s.Add(e.src, "@daily"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.RunNow("hb"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		run, err := e.db.LastRun(context.Background(), "hb")
		if err == nil && run.Status == docent.RunOK {
			if run.Added != 1 {
				t.Errorf("run = %+v", run)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no finished run: %+v, %v", run, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	s.Wait()
	e.converged(e.src.Docs())
}
