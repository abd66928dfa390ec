package connectors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/docent-hq/docent"

	"github.com/robfig/cron/v3"
)

// DefaultSchedule is the cron spec of a source configured without one.
const DefaultSchedule = "@every 30m"

// Scheduler errors.
var (
	// ErrUnknownSource is returned by RunNow for a source never added.
	ErrUnknownSource = errors.New("connectors: unknown source")
	// ErrSyncBusy is returned by RunNow when the source is already queued
	// or running; a source never syncs twice at once.
	ErrSyncBusy = errors.New("connectors: sync already queued or running")
	// ErrNotRunning is returned by RunNow before Start or after the
	// scheduler's context was cancelled.
	ErrNotRunning = errors.New("connectors: scheduler is not running")
	// ErrPanic is wrapped by the error of a run that panicked; the
	// scheduler recovers and records it as a failed run.
	ErrPanic = errors.New("connectors: sync panicked")
)

// DefaultStaleAfter is how many scheduled runs may pass without a
// successful one before a source is reported stale.
const DefaultStaleAfter = 3

// HealthStore tells the scheduler, when it starts, how each source's
// earlier runs went; *store.DB implements it.
type HealthStore interface {
	// RunHealth returns when source's last successful run finished (zero
	// if none did) and how many runs failed since.
	RunHealth(ctx context.Context, source string) (lastOK time.Time, failures int, err error)
}

// Health is how a source's syncs have been going: what the console
// shows, what /metrics exports, and what is logged at warn.
type Health struct {
	// LastSuccess is when the last successful run finished (zero if
	// none has).
	LastSuccess time.Time
	// ConsecutiveFailures counts the failed runs since then.
	ConsecutiveFailures int
	// LastError is the last run's error ("" when it succeeded).
	LastError string
	// MissedRuns counts the scheduled runs that came due since the last
	// success (since the scheduler started, when none ever succeeded),
	// up to StaleAfter.
	MissedRuns int
	// Stale is true once StaleAfter scheduled runs have come due without
	// a successful one: the source's documents may be out of date.
	Stale bool
}

// Healthy reports whether the source's last run succeeded and it is not
// stale.
func (h Health) Healthy() bool { return h.ConsecutiveFailures == 0 && !h.Stale }

// Syncer runs one sync of a source; *Engine implements it.
type Syncer interface {
	// Sync brings the index up to date with src (see Engine.Sync).
	Sync(ctx context.Context, src Source, progress func(Progress)) (docent.RunResult, error)
}

// SchedulerOptions configure a Scheduler. Zero fields take the defaults.
type SchedulerOptions struct {
	// Workers is how many syncs run at once. Default 2.
	Workers int
	// DefaultSpec is the cron spec of sources added with an empty one.
	// Default DefaultSchedule.
	DefaultSpec string
	// RunAtStart queues every source once when the scheduler starts, so a
	// fresh install indexes without waiting for the first tick.
	RunAtStart bool
	// StaleAfter is how many scheduled runs may come due without a
	// successful one before a source is stale. Default DefaultStaleAfter.
	StaleAfter int
	// History, when set, seeds each source's health at Start from the
	// runs recorded before (a restart does not forget a failing source).
	History HealthStore
	// OnHealth, when set, is called with a source's health after each of
	// its runs and at each health check (every minute while running).
	OnHealth func(source string, h Health)
	// Clock is the scheduler's time: the schedules fire on it and health
	// is worked out at its Now. The wall clock by default; tests drive
	// the schedules with a fake one (backofftest.Clock).
	Clock Clock
}

// Clock reads the time and waits on it.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// After returns a channel that receives once d has passed.
	After(d time.Duration) <-chan time.Time
}

type wallClock struct{}

func (wallClock) Now() time.Time                         { return time.Now() }
func (wallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// healthEvery is how often a running scheduler works out every source's
// health.
const healthEvery = time.Minute

// Scheduler runs each source's sync on its own cron schedule (robfig/cron
// parses the specs; the scheduler's own loop fires them on its Clock) on a
// bounded pool of workers, and on demand (RunNow, "sync now"). A source's runs
// never overlap: a tick (or a RunNow) for a source that is still queued or
// running is skipped, as cron's SkipIfStillRunning would, while other
// sources keep their own schedules. A sync that panics is recovered and
// counted as a failed run. The scheduler keeps each source's Health
// (consecutive failures, runs due since the last success), logs at warn
// when a source fails or turns stale, and hands it to OnHealth. It stops
// when the context given to Start is cancelled: running syncs see their
// context cancelled, and Wait returns once they have returned.
type Scheduler struct {
	syncer Syncer
	log    *slog.Logger
	opts   SchedulerOptions

	mu      sync.Mutex
	jobs    map[string]*job
	order   []string
	queue   chan *job
	running bool // between Start and the cancellation of its context
	started time.Time
	wg      sync.WaitGroup
	stopped chan struct{}
}

type job struct {
	src      Source
	spec     string
	sched    cron.Schedule
	next     time.Time // when the schedule next fires (zero before Start)
	queued   bool
	busy     bool
	progress Progress
	last     docent.RunResult
	lastErr  error
	health   Health
}

// JobStatus is the state of one scheduled source, for the console.
type JobStatus struct {
	// Source is the source name and Spec its cron schedule.
	Source string
	Spec   string
	// Queued and Running say whether a sync is waiting for a worker or running.
	Queued, Running bool
	// Progress is the running sync's progress (zero when idle).
	Progress Progress
	// Last is the result of the last sync this scheduler ran (zero if
	// none) and LastErr its error.
	Last    docent.RunResult
	LastErr error
	// Next is when the schedule fires next (zero before Start).
	Next time.Time
	// Health is how the source's syncs have been going.
	Health Health
}

// NewScheduler returns a scheduler that runs syncs with syncer.
func NewScheduler(syncer Syncer, log *slog.Logger, opts SchedulerOptions) *Scheduler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.DefaultSpec == "" {
		opts.DefaultSpec = DefaultSchedule
	}
	if opts.StaleAfter <= 0 {
		opts.StaleAfter = DefaultStaleAfter
	}
	if opts.Clock == nil {
		opts.Clock = wallClock{}
	}
	return &Scheduler{
		syncer:  syncer,
		log:     log,
		opts:    opts,
		jobs:    map[string]*job{},
		stopped: make(chan struct{}),
	}
}

// Add schedules src with the cron spec (standard five fields, or a
// descriptor such as "@hourly" or "@every 15m"; "" means the default).
// It fails for an invalid spec, a duplicate source name, or after Start.
func (s *Scheduler) Add(src Source, spec string) error {
	if spec == "" {
		spec = s.opts.DefaultSpec
	}
	sched, err := cron.ParseStandard(spec)
	if err != nil {
		return fmt.Errorf("connectors: schedule %s: %w", src.Name(), err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.queue != nil {
		return fmt.Errorf("connectors: schedule %s: scheduler already started", src.Name())
	}
	name := src.Name()
	if _, dup := s.jobs[name]; dup {
		return fmt.Errorf("connectors: schedule %s: source added twice", name)
	}
	s.jobs[name] = &job{src: src, spec: spec, sched: sched}
	s.order = append(s.order, name)
	return nil
}

// Start starts the schedules and the workers. They stop when ctx is
// cancelled: queued syncs are dropped and running ones see ctx cancelled.
func (s *Scheduler) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.queue != nil {
		s.mu.Unlock()
		return errors.New("connectors: scheduler already started")
	}
	// Each source is queued at most once, so the queue never fills.
	s.queue = make(chan *job, len(s.jobs))
	s.running = true
	s.started = s.opts.Clock.Now()
	for _, j := range s.jobs {
		j.next = j.sched.Next(s.started)
	}
	s.mu.Unlock()

	if s.opts.History != nil {
		for _, name := range s.order {
			lastOK, failures, err := s.opts.History.RunHealth(ctx, name)
			if err != nil {
				s.log.Warn("read sync history", slog.String("source", name), slog.Any("error", err))
				continue
			}
			s.mu.Lock()
			h := &s.jobs[name].health
			h.LastSuccess, h.ConsecutiveFailures = lastOK, failures
			s.mu.Unlock()
		}
	}
	s.CheckHealth()

	for range s.opts.Workers {
		s.wg.Add(1)
		go s.work(ctx)
	}
	ticks := make(chan struct{})
	go func() {
		defer close(ticks)
		s.tick(ctx)
	}()
	if s.opts.RunAtStart {
		for _, name := range s.order {
			if err := s.enqueue(s.jobs[name]); err != nil {
				s.log.Warn("initial sync not queued", slog.String("source", name), slog.Any("error", err))
			}
		}
	}
	go func() {
		<-ctx.Done()
		s.mu.Lock()
		s.running = false
		s.mu.Unlock()
		<-ticks
		s.wg.Wait()
		close(s.stopped)
	}()
	return nil
}

// tick fires the schedules until ctx ends: it waits on the clock for the
// earliest due time (a source's next run, or the minute's health check),
// queues every source that came due (a tick for a source still queued or
// running is skipped) and works out each source's next run from then.
func (s *Scheduler) tick(ctx context.Context) {
	health := s.opts.Clock.Now().Add(healthEvery)
	for {
		s.mu.Lock()
		due := health
		for _, j := range s.jobs {
			if !j.next.IsZero() && j.next.Before(due) {
				due = j.next
			}
		}
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-s.opts.Clock.After(due.Sub(s.opts.Clock.Now())):
		}
		now := s.opts.Clock.Now()
		var fire []*job
		s.mu.Lock()
		for _, name := range s.order {
			j := s.jobs[name]
			if !j.next.IsZero() && !j.next.After(now) {
				fire = append(fire, j)
				j.next = j.sched.Next(now)
			}
		}
		s.mu.Unlock()
		for _, j := range fire {
			if err := s.enqueue(j); err != nil {
				s.log.Info("scheduled sync skipped", slog.String("source", j.src.Name()), slog.Any("error", err))
			}
		}
		if !health.After(now) {
			s.CheckHealth()
			health = now.Add(healthEvery)
		}
	}
}

// Wait blocks until the scheduler has stopped after its context was
// cancelled, and every sync it started has returned.
func (s *Scheduler) Wait() { <-s.stopped }

// RunNow queues a sync of the named source for the next free worker. It
// returns ErrUnknownSource, ErrSyncBusy when that source is already queued
// or running, or ErrNotRunning.
func (s *Scheduler) RunNow(source string) error {
	s.mu.Lock()
	j, ok := s.jobs[source]
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownSource, source)
	}
	return s.enqueue(j)
}

// Status returns the state of every source, in the order they were added.
func (s *Scheduler) Status() []JobStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]JobStatus, 0, len(s.order))
	for _, name := range s.order {
		j := s.jobs[name]
		out = append(out, JobStatus{Source: name, Spec: j.spec, Queued: j.queued, Running: j.busy,
			Progress: j.progress, Last: j.last, LastErr: j.lastErr, Next: j.next,
			Health: s.healthLocked(j, s.opts.Clock.Now())})
	}
	return out
}

// enqueue queues j unless it is already queued or running.
func (s *Scheduler) enqueue(j *job) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		return ErrNotRunning
	}
	if j.queued || j.busy {
		return fmt.Errorf("%w: %s", ErrSyncBusy, j.src.Name())
	}
	select {
	case s.queue <- j:
		j.queued = true
		return nil
	default: // unreachable: the queue holds every job once
		return fmt.Errorf("%w: %s", ErrSyncBusy, j.src.Name())
	}
}

// work runs queued syncs until ctx is cancelled.
func (s *Scheduler) work(ctx context.Context) {
	defer s.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case j := <-s.queue:
			if ctx.Err() != nil {
				return
			}
			s.runJob(ctx, j)
		}
	}
}

func (s *Scheduler) runJob(ctx context.Context, j *job) {
	name := j.src.Name()
	s.mu.Lock()
	j.queued, j.busy = false, true
	j.progress = Progress{Source: name}
	s.mu.Unlock()

	res, err := s.sync(ctx, j)

	s.mu.Lock()
	j.busy = false
	j.progress = Progress{}
	j.last, j.lastErr = res, err
	h := &j.health
	if err == nil {
		h.LastSuccess = res.Finished
		if h.LastSuccess.IsZero() {
			h.LastSuccess = s.opts.Clock.Now()
		}
		h.ConsecutiveFailures, h.LastError = 0, ""
	} else {
		h.ConsecutiveFailures++
		h.LastError = err.Error()
	}
	health, turnedStale := s.updateHealthLocked(j)
	s.mu.Unlock()
	if turnedStale {
		s.logStale(name, j.spec, health)
	}

	if s.opts.OnHealth != nil {
		s.opts.OnHealth(name, health)
	}
}

// sync runs one sync of j, recovering a panic as a failed run.
func (s *Scheduler) sync(ctx context.Context, j *job) (res docent.RunResult, err error) {
	name := j.src.Name()
	started := s.opts.Clock.Now().UTC()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %s: %v", ErrPanic, name, p)
			res = docent.RunResult{Source: name, Started: started, Finished: s.opts.Clock.Now().UTC(), Err: err.Error()}
			s.log.Error("sync panicked", slog.String("source", name), slog.Any("panic", p),
				slog.String("stack", string(debug.Stack())))
		}
	}()
	return s.syncer.Sync(ctx, j.src, func(p Progress) {
		s.mu.Lock()
		j.progress = p
		s.mu.Unlock()
	})
}

// CheckHealth works out every source's health now, logs at warn each
// source that has just turned stale, and hands the health to OnHealth.
// The scheduler calls it every minute while it runs.
func (s *Scheduler) CheckHealth() {
	type report struct {
		name string
		h    Health
	}
	var reports []report
	s.mu.Lock()
	var stale []report
	for _, name := range s.order {
		j := s.jobs[name]
		h, turnedStale := s.updateHealthLocked(j)
		if turnedStale {
			stale = append(stale, report{name, h})
		}
		reports = append(reports, report{name, h})
	}
	s.mu.Unlock()
	for _, r := range stale {
		s.logStale(r.name, s.jobs[r.name].spec, r.h)
	}
	if s.opts.OnHealth != nil {
		for _, r := range reports {
			s.opts.OnHealth(r.name, r.h)
		}
	}
}

// updateHealthLocked works out j's health now, keeps it, and reports
// whether the source has just turned stale. s.mu is held.
func (s *Scheduler) updateHealthLocked(j *job) (Health, bool) {
	wasStale := j.health.Stale
	h := s.healthLocked(j, s.opts.Clock.Now())
	j.health.Stale, j.health.MissedRuns = h.Stale, h.MissedRuns
	return h, h.Stale && !wasStale
}

func (s *Scheduler) logStale(name, spec string, h Health) {
	s.log.Warn("source is stale: no successful sync in its last scheduled runs", slog.String("source", name),
		slog.Int("missed_runs", h.MissedRuns), slog.String("schedule", spec),
		slog.Time("last_success", h.LastSuccess), slog.String("last_error", h.LastError))
}

// healthLocked is j's health at now: the scheduled runs that came due
// since its last success (or since the scheduler started, when none ever
// succeeded) decide whether it is stale. s.mu is held.
func (s *Scheduler) healthLocked(j *job, now time.Time) Health {
	h := j.health
	from := h.LastSuccess
	if from.IsZero() {
		from = s.started
	}
	h.MissedRuns = 0
	if !from.IsZero() && j.sched != nil {
		for t := j.sched.Next(from); !t.IsZero() && !t.After(now) && h.MissedRuns < s.opts.StaleAfter; t = j.sched.Next(t) {
			h.MissedRuns++
		}
	}
	h.Stale = h.MissedRuns >= s.opts.StaleAfter
	return h
}
