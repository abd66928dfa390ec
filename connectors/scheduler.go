package connectors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
)

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
}

// Scheduler runs each source's sync on its cron schedule on a bounded pool
// of workers, and on demand (RunNow). A tick for a source that is still
// queued or running is skipped. It stops when the context given to Start
// is cancelled; Wait returns once the running syncs have returned.
type Scheduler struct {
	syncer Syncer
	log    *slog.Logger
	opts   SchedulerOptions

	mu      sync.Mutex
	jobs    map[string]*job
	order   []string
	queue   chan *job
	cron    *cron.Cron
	running bool // between Start and the cancellation of its context
	wg      sync.WaitGroup
	stopped chan struct{}
}

type job struct {
	src      Source
	spec     string
	entry    cron.EntryID
	queued   bool
	busy     bool
	progress Progress
	last     docent.RunResult
	lastErr  error
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
	return &Scheduler{
		syncer:  syncer,
		log:     log,
		opts:    opts,
		jobs:    map[string]*job{},
		cron:    cron.New(cron.WithLogger(cronLogger{log})),
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
	j := &job{src: src, spec: spec}
	j.entry = s.cron.Schedule(sched, cron.FuncJob(func() {
		if err := s.enqueue(j); err != nil {
			s.log.Info("scheduled sync skipped", slog.String("source", name), slog.Any("error", err))
		}
	}))
	s.jobs[name] = j
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
	s.mu.Unlock()

	for range s.opts.Workers {
		s.wg.Add(1)
		go s.work(ctx)
	}
	s.cron.Start()
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
		<-s.cron.Stop().Done()
		s.wg.Wait()
		close(s.stopped)
	}()
	return nil
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
			Progress: j.progress, Last: j.last, LastErr: j.lastErr, Next: s.cron.Entry(j.entry).Next})
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
	s.mu.Lock()
	j.queued, j.busy = false, true
	j.progress = Progress{Source: j.src.Name()}
	s.mu.Unlock()

	res, err := s.syncer.Sync(ctx, j.src, func(p Progress) {
		s.mu.Lock()
		j.progress = p
		s.mu.Unlock()
	})

	s.mu.Lock()
	j.busy = false
	j.progress = Progress{}
	j.last, j.lastErr = res, err
	s.mu.Unlock()
}

// cronLogger sends cron's log lines to slog.
type cronLogger struct{ log *slog.Logger }

func (l cronLogger) Info(msg string, kv ...any) { l.log.Debug("cron: "+msg, kv...) }

func (l cronLogger) Error(err error, msg string, kv ...any) {
	l.log.Error("cron: "+msg, append(kv, slog.Any("error", err))...)
}
