package connectors_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
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
	waitFor(t, func() bool { return !s.Status()[0].Running })
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
	// Both workers are busy: the third source waits in the queue (and
	// maxActive below says no third sync ever ran beside them).
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

// t0 is when the fake clocks of the scheduler tests start.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// tickTo waits until the scheduler waits on clk for its next due time,
// then moves clk by d: the schedules that come due fire, once each.
func tickTo(t *testing.T, clk *connectorstest.Clock, d time.Duration) {
	t.Helper()
	waitFor(t, func() bool { return clk.Waiters() == 1 })
	clk.Advance(d)
}

// TestSchedulerCronSkipsOverlap fires an "@every 1s" schedule on a fake
// clock while the first sync is still running: later ticks are skipped,
// not stacked.
func TestSchedulerCronSkipsOverlap(t *testing.T) {
	f := newFakeSyncer()
	clk := connectorstest.NewClock(t0)
	var logs strings.Builder
	var logMu sync.Mutex
	log := slog.New(slog.NewTextHandler(lockedWriter{&logs, &logMu}, nil))
	s := connectors.NewScheduler(f, log, connectors.SchedulerOptions{Workers: 4, Clock: clk})
	if err := s.Add(connectorstest.NewSource("hb"), "@every 1s"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	tickTo(t, clk, time.Second)
	waitStarted(t, f)
	tickTo(t, clk, time.Second)
	tickTo(t, clk, time.Second)
	waitFor(t, func() bool { return clk.Waiters() == 1 }) // both ticks handled
	calls, _, overlapped := f.stats()
	if calls["hb"] != 1 || overlapped || s.Status()[0].Queued {
		t.Errorf("while running: calls = %d, overlapped = %v, queued %v; want 1, false, false", calls["hb"], overlapped, s.Status()[0].Queued)
	}
	logMu.Lock()
	skipped := strings.Count(logs.String(), "scheduled sync skipped")
	logMu.Unlock()
	if skipped != 2 {
		t.Errorf("%d ticks skipped, want the 2 that came while the sync ran", skipped)
	}
	if next := s.Status()[0].Next; !next.Equal(t0.Add(4 * time.Second)) {
		t.Errorf("next run at %s, want %s", next, t0.Add(4*time.Second))
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
	var run docent.SyncRun
	waitFor(t, func() bool {
		var err error
		run, err = e.db.LastRun(context.Background(), "hb")
		return err == nil && run.Status == docent.RunOK
	})
	if run.Added != 1 {
		t.Errorf("run = %+v", run)
	}
	cancel()
	s.Wait()
	e.converged(e.src.Docs())
}

// funcSyncer runs each source's sync with the function given for it.
type funcSyncer struct {
	mu    sync.Mutex
	fns   map[string]func(ctx context.Context) (docent.RunResult, error)
	calls map[string]int
}

func (f *funcSyncer) Sync(ctx context.Context, src connectors.Source, _ func(connectors.Progress)) (docent.RunResult, error) {
	f.mu.Lock()
	f.calls[src.Name()]++
	fn := f.fns[src.Name()]
	f.mu.Unlock()
	return fn(ctx)
}

func (f *funcSyncer) count(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[name]
}

// TestSchedulerIndependentSchedules runs two sources on different cron
// schedules, on a fake clock: the fast one keeps its pace while the slow
// one's only run hangs, and the slow one's ticks during that run are
// skipped.
func TestSchedulerIndependentSchedules(t *testing.T) {
	clk := connectorstest.NewClock(t0)
	slowStarted := make(chan struct{}, 10)
	f := &funcSyncer{calls: map[string]int{}, fns: map[string]func(context.Context) (docent.RunResult, error){
		"fast": func(context.Context) (docent.RunResult, error) { return docent.RunResult{Source: "fast"}, nil },
		"slow": func(ctx context.Context) (docent.RunResult, error) {
			slowStarted <- struct{}{}
			<-ctx.Done() // runs until shutdown
			return docent.RunResult{Source: "slow"}, ctx.Err()
		},
	}}
	s := connectors.NewScheduler(f, nil, connectors.SchedulerOptions{Workers: 2, Clock: clk})
	if err := s.Add(connectorstest.NewSource("fast"), "@every 1s"); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(connectorstest.NewSource("slow"), "@every 2s"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	fastIdle := func(n int) func() bool {
		return func() bool { st := s.Status()[0]; return f.count("fast") == n && !st.Queued && !st.Running }
	}
	for second := 1; second <= 6; second++ {
		tickTo(t, clk, time.Second)
		waitFor(t, fastIdle(second)) // the fast source ran this second's tick
		if second == 2 {
			select {
			case <-slowStarted:
			case <-time.After(5 * time.Second):
				t.Fatal("the slow source never ran")
			}
		}
	}
	waitFor(t, func() bool { return clk.Waiters() == 1 })
	slow := f.count("slow")
	cancel()
	s.Wait()
	if slow != 1 {
		t.Errorf("slow source ran %d times in 6s on @every 2s: its ticks while running must be skipped", slow)
	}
}

// TestSchedulerRunNowQueuesOnce: "sync now" for a source waiting for a
// worker queues one run; asking again while it waits is refused; it runs
// once.
func TestSchedulerRunNowQueuesOnce(t *testing.T) {
	release := make(chan struct{})
	f := &funcSyncer{calls: map[string]int{}, fns: map[string]func(context.Context) (docent.RunResult, error){
		"busy": func(context.Context) (docent.RunResult, error) { <-release; return docent.RunResult{}, nil },
		"wiki": func(context.Context) (docent.RunResult, error) { return docent.RunResult{Added: 1}, nil },
	}}
	s := connectors.NewScheduler(f, nil, connectors.SchedulerOptions{Workers: 1})
	for _, name := range []string{"busy", "wiki"} {
		if err := s.Add(connectorstest.NewSource(name), "@yearly"); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.RunNow("busy"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return s.Status()[0].Running })
	if err := s.RunNow("wiki"); err != nil {
		t.Fatal(err)
	}
	if err := s.RunNow("wiki"); !errors.Is(err, connectors.ErrSyncBusy) {
		t.Errorf("second sync now while queued = %v, want ErrSyncBusy", err)
	}
	if st := s.Status()[1]; !st.Queued {
		t.Errorf("wiki status %+v, want queued", st)
	}
	close(release)
	waitFor(t, func() bool { st := s.Status()[1]; return !st.Queued && !st.Running && st.Last.Added == 1 })
	if n := f.count("wiki"); n != 1 {
		t.Errorf("wiki ran %d times, want once", n)
	}
	// Nothing else was queued for it: a new "sync now" is taken, and is
	// its second run.
	if err := s.RunNow("wiki"); err != nil {
		t.Fatalf("sync now after the run = %v; a second run was still queued", err)
	}
	waitFor(t, func() bool { st := s.Status()[1]; return f.count("wiki") == 2 && !st.Queued && !st.Running })
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(time.Millisecond)
	}
}

// panicSource panics while listing.
type panicSource struct{ name string }

func (p panicSource) Name() string { return p.name }

func (p panicSource) List(context.Context, string, connectors.Listing) (connectors.Listed, error) {
	panic("boom: nil map in a connector")
}

// TestSchedulerRecoversPanic runs a source that panics through the real
// engine: the scheduler survives, the run is recorded as failed in the
// registry and in the source's health, and the next run goes ahead.
func TestSchedulerRecoversPanic(t *testing.T) {
	e := newEnv(t, connectorstest.NewEmbedder("v1"))
	var healths []connectors.Health
	var mu sync.Mutex
	s := connectors.NewScheduler(e.engine(), nil, connectors.SchedulerOptions{OnHealth: func(_ string, h connectors.Health) {
		mu.Lock()
		healths = append(healths, h)
		mu.Unlock()
	}})
	if err := s.Add(panicSource{"hb"}, "@yearly"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := s.RunNow("hb"); err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
		waitFor(t, func() bool { st := s.Status()[0]; return st.LastErr != nil && st.Health.ConsecutiveFailures == i+1 })
	}
	cancel()
	s.Wait()
	st := s.Status()[0]
	if !errors.Is(st.LastErr, connectors.ErrPanic) || !strings.Contains(st.Health.LastError, "boom") || st.Last.Err == "" {
		t.Errorf("status after a panic = %+v", st)
	}
	run, err := e.db.LastRun(context.Background(), "hb")
	if err != nil || run.Status != docent.RunFailed || !strings.Contains(run.Err, "panic: boom") {
		t.Errorf("recorded run = %+v, %v; want failed with the panic", run, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(healths) < 2 || healths[len(healths)-1].ConsecutiveFailures != 2 {
		t.Errorf("health reports %+v", healths)
	}
}

// history is a HealthStore with fixed answers.
type history map[string]struct {
	lastOK   time.Time
	failures int
}

func (h history) RunHealth(_ context.Context, source string) (time.Time, int, error) {
	r := h[source]
	return r.lastOK, r.failures, nil
}

// TestSchedulerHealth follows a source through failures, staleness and
// recovery on a fake clock: consecutive failures count up and are logged
// at warn; once three scheduled runs came due without a success the
// source is stale (logged once); a success clears both. A restart reads
// the failures recorded before.
func TestSchedulerHealth(t *testing.T) {
	clk := connectorstest.NewClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	var logs strings.Builder
	var logMu sync.Mutex
	log := slog.New(slog.NewTextHandler(lockedWriter{&logs, &logMu}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	fail := errors.New("confluence: source \"wiki\": 503 Service Unavailable")
	var mu sync.Mutex
	next := fail
	f := &funcSyncer{calls: map[string]int{}, fns: map[string]func(context.Context) (docent.RunResult, error){
		"wiki": func(context.Context) (docent.RunResult, error) {
			mu.Lock()
			defer mu.Unlock()
			if next != nil {
				return docent.RunResult{Source: "wiki", Err: next.Error()}, next
			}
			return docent.RunResult{Source: "wiki", Finished: clk.Now()}, nil
		},
	}}
	reported := map[string]connectors.Health{}
	var repMu sync.Mutex
	s := connectors.NewScheduler(f, log, connectors.SchedulerOptions{
		Clock:   nowOnly{clk}, // the test runs the source and checks health itself
		History: history{"wiki": {lastOK: clk.Now().Add(-time.Hour), failures: 2}},
		OnHealth: func(src string, h connectors.Health) {
			repMu.Lock()
			reported[src] = h
			repMu.Unlock()
		},
	})
	if err := s.Add(connectorstest.NewSource("wiki"), "@every 15m"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); s.Wait() }()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	health := func() connectors.Health { return s.Status()[0].Health }

	// Seeded from history: two failures, last success an hour ago (four
	// 15-minute runs due since: stale already).
	if h := health(); h.ConsecutiveFailures != 2 || !h.Stale || h.Healthy() {
		t.Errorf("health after start = %+v, want 2 failures and stale", h)
	}
	run := func() {
		t.Helper()
		n := f.count("wiki")
		if err := s.RunNow("wiki"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() bool { return f.count("wiki") == n+1 && !s.Status()[0].Running })
	}
	run()
	if h := health(); h.ConsecutiveFailures != 3 || h.LastError != fail.Error() {
		t.Errorf("health after a failure = %+v", h)
	}
	// A success clears failures and staleness.
	mu.Lock()
	next = nil
	mu.Unlock()
	run()
	if h := health(); !h.Healthy() || h.ConsecutiveFailures != 0 || h.MissedRuns != 0 || !h.LastSuccess.Equal(clk.Now()) {
		t.Errorf("health after a success = %+v", h)
	}
	// Failing again; time passes: two runs due, then a third: stale.
	mu.Lock()
	next = fail
	mu.Unlock()
	run()
	clk.Advance(31 * time.Minute)
	s.CheckHealth()
	if h := health(); h.Stale || h.MissedRuns != 2 || h.ConsecutiveFailures != 1 {
		t.Errorf("health 31 minutes on = %+v, want 2 runs due, not stale", h)
	}
	clk.Advance(15 * time.Minute)
	s.CheckHealth()
	s.CheckHealth() // logged once, not at every check
	if h := health(); !h.Stale || h.MissedRuns != 3 {
		t.Errorf("health 46 minutes on = %+v, want stale", h)
	}
	repMu.Lock()
	if r := reported["wiki"]; !r.Stale || r.ConsecutiveFailures != 1 {
		t.Errorf("OnHealth got %+v", r)
	}
	repMu.Unlock()
	logMu.Lock()
	out := logs.String()
	logMu.Unlock()
	if n := strings.Count(out, "source is stale"); n != 2 { // at start (seeded), and now
		t.Errorf("stale warnings logged %d times, want 2:\n%s", n, out)
	}
	// The syncer (the engine) logs each failed run; the scheduler does not
	// report it a second time.
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, fail.Error()) && !strings.Contains(line, "source is stale") {
			t.Errorf("the scheduler logged a failed run the syncer reports: %s", line)
		}
	}
}

// nowOnly is a clock whose time the test moves and on which nothing fires:
// the schedules never come due by themselves.
type nowOnly struct{ clk *connectorstest.Clock }

func (c nowOnly) Now() time.Time                     { return c.clk.Now() }
func (nowOnly) After(time.Duration) <-chan time.Time { return nil }

type lockedWriter struct {
	w  *strings.Builder
	mu *sync.Mutex
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// stallingSource hands over its documents, then stalls mid-listing until
// its context ends, as a slow wiki does when shutdown comes.
type stallingSource struct {
	*connectorstest.Source
	after   int
	stalled chan struct{}
}

func (s *stallingSource) List(ctx context.Context, cursor string, l connectors.Listing) (connectors.Listed, error) {
	return s.Source.List(ctx, cursor, &stallingListing{Listing: l, ctx: ctx, s: s})
}

type stallingListing struct {
	connectors.Listing
	ctx context.Context
	s   *stallingSource
	n   int
}

func (l *stallingListing) Document(ctx context.Context, d docent.Document) error {
	if err := l.Listing.Document(ctx, d); err != nil {
		return err
	}
	if l.n++; l.n == l.s.after {
		close(l.s.stalled)
		<-l.ctx.Done()
		return l.ctx.Err()
	}
	return nil
}

// TestSchedulerShutdownMidRun stops the scheduler while a real sync is
// half way through a listing: the run is recorded as interrupted, nothing
// is deleted, and the next run converges on the source.
func TestSchedulerShutdownMidRun(t *testing.T) {
	e := newEnv(t, connectorstest.NewEmbedder("v1"))
	e.opts.BatchSize = 2
	var docs []docent.Document
	for i := range 12 {
		docs = append(docs, doc(fmt.Sprintf("p%02d.md", i), fmt.Sprintf("Page %d.\n\nMore about %d.", i, i)))
	}
	e.src.Put(docs...)
	e.sync()
	e.src.Put(doc("p03.md", "Page 3, revised."), doc("p20.md", "A new page."))
	e.src.Delete("hb:p05.md")
	src := &stallingSource{Source: e.src, after: 1, stalled: make(chan struct{})}
	s := connectors.NewScheduler(e.engine(), nil, connectors.SchedulerOptions{})
	if err := s.Add(src, "@yearly"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.RunNow("hb"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-src.stalled:
	case <-time.After(5 * time.Second):
		t.Fatal("the sync never started listing")
	}
	cancel()
	s.Wait()
	run, err := e.db.LastRun(context.Background(), "hb")
	if err != nil || run.Status != docent.RunFailed || run.Err != "interrupted" {
		t.Errorf("interrupted run recorded as %+v, %v", run, err)
	}
	if _, ok := e.chunkIDs()["hb:p05.md"]; !ok {
		t.Errorf("an interrupted run deleted a document")
	}
	// The next run, uninterrupted, converges.
	res := e.sync()
	if res.Deleted != 1 {
		t.Errorf("recovery run = %+v", res)
	}
	e.converged(e.src.Docs())
}
