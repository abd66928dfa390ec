// Package admission is the one admission control in front of the answer
// pipeline. Every entrance that answers questions — the HTTP API, the
// Slack and Discord adapters, the console's playground and the MCP server
// — takes a slot from the same Controller before any retrieval runs, so
// that together they never run more than Slots pipelines at once.
//
// Questions that find every slot taken wait in one bounded queue, served
// fairly: round robin between platforms ("api", "slack", "discord",
// "console", "mcp"), then round robin between the channels of a platform
// (a Slack channel, a Discord thread's channel, an API token), oldest
// first within a channel. A flood in one channel delays that channel, not
// the others.
//
// Refusals come early, before any work: a question whose expected wait
// (its place in that fair order times the measured time per answer) is
// over its bound (MaxWait for a request holding a connection, JobWait
// for a chat question already acknowledged) is refused at once; when the queue is full, the newest
// question of the platform and then the channel with the most waiting
// gives way (the newcomer itself, when that is its own); a question that
// still waits its bound is refused then. Each entrance turns a refusal into
// its platform's busy reply (503 with Retry-After on HTTP).
package admission

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"
)

// Reason says why a question was refused.
type Reason string

// Reasons.
const (
	// ReasonWait: its expected wait was over MaxWait (refused at once), or
	// it waited MaxWait.
	ReasonWait Reason = "wait"
	// ReasonFull: the queue was full and its platform and channel had the
	// most waiting (a newcomer, or the newest waiter pushed out for one).
	ReasonFull Reason = "queue_full"
)

// ErrBusy is what every refusal wraps (errors.Is(err, ErrBusy)).
var ErrBusy = errors.New("admission: too busy")

// BusyError is a refusal: the pipeline cannot take the question now.
type BusyError struct {
	// Reason says why.
	Reason Reason
	// RetryAfter is when asking again is likely to be admitted, at least a
	// second.
	RetryAfter time.Duration
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("admission: too busy (%s); retry in %s", e.Reason, e.RetryAfter)
}

// Is makes a BusyError match ErrBusy.
func (e *BusyError) Is(target error) bool { return target == ErrBusy }

// Options configure a Controller. Zero fields take the defaults.
type Options struct {
	// Slots is how many questions are answered at once. Default 4 ×
	// GOMAXPROCS: the offline pipeline is CPU-bound, and a few extra cover
	// the time an answer waits on the store or a platform.
	Slots int
	// MaxQueue bounds the questions waiting for a slot, across every
	// entrance. Default 1024.
	MaxQueue int
	// MaxWait is the longest a blocked Acquire (an HTTP request holding
	// its connection) waits for a slot. Default DefaultMaxWait.
	MaxWait time.Duration
	// JobWait is the longest a queued Go job (a chat question, acked
	// already, its asker shown that it is being worked on) waits. Default
	// DefaultJobWait.
	JobWait time.Duration
	// Now is the clock answer times are measured on (time.Now when nil).
	Now func() time.Time
	// OnShed, when set, is told of every refusal, with the question's
	// platform, for metrics. It must not block nor call the Controller.
	OnShed func(platform string, reason Reason)
}

// Default waits for a slot.
const (
	DefaultMaxWait = 10 * time.Second
	DefaultJobWait = time.Minute
)

// serviceWeight is the weight of the latest answer time in the running
// mean the wait estimate uses.
const serviceWeight = 0.2

// Controller is the admission control. It is safe for concurrent use.
type Controller struct {
	opts Options

	mu      sync.Mutex
	running int
	waiting int
	// ring is the platforms with someone waiting, in round-robin order;
	// next is the index of the one served next.
	ring []*platform
	next int
	// byName finds a platform's queue.
	byName map[string]*platform
	// service is the running mean time an admitted question holds its
	// slot (0 before the first one ends).
	service time.Duration
	last    time.Time
}

// platform is one platform's waiters, by channel.
type platform struct {
	name  string
	n     int
	ring  []*channel
	next  int
	chans map[string]*channel
}

// channel is one channel's waiters, oldest first.
type channel struct {
	name    string
	waiters []*waiter
}

// waiter is a question waiting for a slot: a blocked Acquire (grant set)
// or a queued Go job (job set).
type waiter struct {
	platform, channel string
	grant             chan struct{}
	job               func(context.Context, error)
	ctx               context.Context
	// err is set before grant is closed when the waiter is refused.
	err error
	// bound is the longest it may wait (MaxWait or JobWait).
	bound time.Duration
	// queued is true while it waits; stop cancels its timer and its
	// context watch.
	queued bool
	stop   func()
}

// New returns a Controller.
func New(o Options) *Controller {
	if o.Slots <= 0 {
		o.Slots = 4 * runtime.GOMAXPROCS(0)
	}
	if o.MaxQueue <= 0 {
		o.MaxQueue = 1024
	}
	if o.MaxWait <= 0 {
		o.MaxWait = DefaultMaxWait
	}
	if o.JobWait <= 0 {
		o.JobWait = DefaultJobWait
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Controller{opts: o, byName: map[string]*platform{}}
}

// Acquire waits for a slot for a question from channel on platform. It
// returns a *BusyError when the question is refused (at once, or after
// waiting MaxWait) and ctx's error when ctx ends first. Otherwise the
// caller must call release, once, when the answer is done.
func (c *Controller) Acquire(ctx context.Context, platform, channel string) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := &waiter{platform: platform, channel: channel, grant: make(chan struct{}), ctx: ctx, bound: c.opts.MaxWait}
	c.mu.Lock()
	if c.freeLocked() {
		c.running++
		c.mu.Unlock()
		return c.releaser(), nil
	}
	if err := c.enqueueLocked(w); err != nil {
		c.mu.Unlock()
		c.shed(platform, err)
		return nil, err
	}
	c.mu.Unlock()
	select {
	case <-w.grant:
	case <-ctx.Done():
		c.mu.Lock()
		if w.queued {
			c.removeLocked(w)
			c.mu.Unlock()
			w.stop()
			return nil, ctx.Err()
		}
		c.mu.Unlock()
		<-w.grant // granted or refused meanwhile
	}
	if w.err != nil {
		return nil, w.err
	}
	if ctx.Err() != nil {
		c.releaser()()
		return nil, ctx.Err()
	}
	return c.releaser(), nil
}

// Go runs job once a slot is free, on its own goroutine and under ctx,
// releasing the slot when job returns; the caller does not wait. job is
// called exactly once: with a nil error when admitted; with a *BusyError
// when the question is refused — at once, on the caller's goroutine,
// when it is refused on arrival, or later on its own goroutine when it
// waited JobWait or gave way to another channel's; with ctx's error when
// ctx ends while it waits. Waiting jobs hold no goroutine.
func (c *Controller) Go(ctx context.Context, platform, channel string, job func(ctx context.Context, err error)) {
	if err := ctx.Err(); err != nil {
		job(ctx, err)
		return
	}
	w := &waiter{platform: platform, channel: channel, job: job, ctx: ctx, bound: c.opts.JobWait}
	c.mu.Lock()
	if c.freeLocked() {
		c.running++
		c.mu.Unlock()
		c.start(w)
		return
	}
	err := c.enqueueLocked(w)
	c.mu.Unlock()
	if err != nil {
		c.shed(platform, err)
		job(ctx, err)
	}
}

// freeLocked reports whether a newcomer may run at once: a slot is free
// and no one is waiting for it.
func (c *Controller) freeLocked() bool { return c.running < c.opts.Slots && c.waiting == 0 }

// start runs an admitted job.
func (c *Controller) start(w *waiter) {
	release := c.releaser()
	go func() {
		defer release()
		w.job(w.ctx, nil)
	}()
}

// releaser returns the function that frees a slot taken now: it measures
// how long the slot was held and hands the slot to the next waiter.
func (c *Controller) releaser() func() {
	began := c.opts.Now()
	var once sync.Once
	return func() { once.Do(func() { c.release(c.opts.Now().Sub(began)) }) }
}

func (c *Controller) release(held time.Duration) {
	c.mu.Lock()
	c.running--
	c.last = c.opts.Now()
	if held > 0 {
		if c.service == 0 {
			c.service = held
		} else {
			c.service = time.Duration(serviceWeight*float64(held) + (1-serviceWeight)*float64(c.service))
		}
	}
	var next *waiter
	if c.running < c.opts.Slots && c.waiting > 0 {
		next = c.popLocked()
		c.running++
	}
	c.mu.Unlock()
	if next == nil {
		return
	}
	next.stop()
	if next.job != nil {
		c.start(next)
		return
	}
	close(next.grant)
}

// enqueueLocked queues w or refuses it with a *BusyError.
func (c *Controller) enqueueLocked(w *waiter) error {
	if wait := c.estimateLocked(w.platform, w.channel); c.service > 0 && wait > w.bound {
		return &BusyError{Reason: ReasonWait, RetryAfter: retryAfter(wait - w.bound)}
	}
	if c.waiting >= c.opts.MaxQueue {
		victim := c.victimLocked(w.platform, w.channel)
		if victim == nil {
			return &BusyError{Reason: ReasonFull, RetryAfter: retryAfter(c.drainLocked())}
		}
		c.removeLocked(victim)
		err := &BusyError{Reason: ReasonFull, RetryAfter: retryAfter(c.drainLocked())}
		c.shed(victim.platform, err)
		c.refuse(victim, err)
	}
	p := c.byName[w.platform]
	if p == nil {
		p = &platform{name: w.platform, chans: map[string]*channel{}}
		c.byName[w.platform] = p
	}
	if p.n == 0 {
		c.ring = append(c.ring, p)
	}
	ch := p.chans[w.channel]
	if ch == nil {
		ch = &channel{name: w.channel}
		p.chans[w.channel] = ch
	}
	if len(ch.waiters) == 0 {
		p.ring = append(p.ring, ch)
	}
	ch.waiters = append(ch.waiters, w)
	p.n++
	c.waiting++
	w.queued = true
	timer := time.AfterFunc(w.bound, func() { c.expire(w) })
	stopCtx := func() bool { return true }
	if w.job != nil {
		stopCtx = context.AfterFunc(w.ctx, func() { c.cancel(w) })
	}
	w.stop = func() { timer.Stop(); stopCtx() }
	return nil
}

// drainLocked is how long the questions waiting now take to be served.
func (c *Controller) drainLocked() time.Duration {
	return time.Duration(float64(c.service) * float64(c.waiting) / float64(c.opts.Slots))
}

// retryAfter rounds a wait up to whole seconds, at least one.
func retryAfter(d time.Duration) time.Duration {
	return max(time.Second, time.Duration(math.Ceil(d.Seconds()))*time.Second)
}

// estimateLocked is how long a newcomer from channel on platform would
// wait: its place in the fair order (the waiters served before it, round
// robin between platforms, then between a platform's channels) over the
// slots, times the time per answer.
func (c *Controller) estimateLocked(plat, name string) time.Duration {
	inPlatform := 1
	if p := c.byName[plat]; p != nil {
		mine := 0
		if ch := p.chans[name]; ch != nil {
			mine = len(ch.waiters)
		}
		inPlatform = mine + 1
		for _, ch := range p.ring {
			if ch.name != name {
				inPlatform += min(len(ch.waiters), mine+1)
			}
		}
	}
	place := inPlatform
	for _, p := range c.ring {
		if p.name != plat {
			place += min(p.n, inPlatform)
		}
	}
	return time.Duration(float64(c.service) * float64(place) / float64(c.opts.Slots))
}

// victimLocked picks who gives way when the queue is full: the newest
// waiter of the channel with the most waiting, in the platform with the
// most waiting, counting the newcomer. It returns nil when that is the
// newcomer (ties go against it: it has not waited yet).
func (c *Controller) victimLocked(plat, name string) *waiter {
	var top *platform
	most := 1
	if p := c.byName[plat]; p != nil {
		most = p.n + 1
	}
	for _, p := range c.ring {
		if p.name != plat && p.n > most {
			top, most = p, p.n
		}
	}
	if top == nil {
		top = c.byName[plat]
		if top == nil {
			return nil
		}
		// The newcomer's platform: the same choice between its channels.
		var longest *channel
		most := 1
		if ch := top.chans[name]; ch != nil {
			most = len(ch.waiters) + 1
		}
		for _, ch := range top.ring {
			if ch.name != name && len(ch.waiters) > most {
				longest, most = ch, len(ch.waiters)
			}
		}
		if longest == nil {
			return nil
		}
		return longest.waiters[len(longest.waiters)-1]
	}
	var longest *channel
	for _, ch := range top.ring {
		if longest == nil || len(ch.waiters) > len(longest.waiters) {
			longest = ch
		}
	}
	return longest.waiters[len(longest.waiters)-1]
}

// popLocked takes the next waiter in the fair order.
func (c *Controller) popLocked() *waiter {
	c.next %= len(c.ring)
	p := c.ring[c.next]
	p.next %= len(p.ring)
	ch := p.ring[p.next]
	w := ch.waiters[0]
	ch.waiters = ch.waiters[1:]
	if len(ch.waiters) == 0 {
		p.ring = slices.Delete(p.ring, p.next, p.next+1)
		delete(p.chans, ch.name)
	} else {
		p.next++
	}
	p.n--
	c.waiting--
	if p.n == 0 {
		c.ring = slices.Delete(c.ring, c.next, c.next+1)
		delete(c.byName, p.name)
	} else {
		c.next++
	}
	w.queued = false
	return w
}

// removeLocked takes w out of the queue, wherever it is.
func (c *Controller) removeLocked(w *waiter) {
	p := c.byName[w.platform]
	ch := p.chans[w.channel]
	i := slices.Index(ch.waiters, w)
	ch.waiters = slices.Delete(ch.waiters, i, i+1)
	if len(ch.waiters) == 0 {
		j := slices.Index(p.ring, ch)
		p.ring = slices.Delete(p.ring, j, j+1)
		if j < p.next {
			p.next--
		}
		delete(p.chans, ch.name)
	}
	p.n--
	c.waiting--
	if p.n == 0 {
		j := slices.Index(c.ring, p)
		c.ring = slices.Delete(c.ring, j, j+1)
		if j < c.next {
			c.next--
		}
		delete(c.byName, p.name)
	}
	w.queued = false
}

// expire refuses w when it has waited MaxWait.
func (c *Controller) expire(w *waiter) {
	c.mu.Lock()
	if !w.queued {
		c.mu.Unlock()
		return
	}
	c.removeLocked(w)
	err := &BusyError{Reason: ReasonWait, RetryAfter: retryAfter(c.drainLocked())}
	c.mu.Unlock()
	c.shed(w.platform, err)
	c.refuse(w, err)
}

// cancel drops a queued job whose context ended.
func (c *Controller) cancel(w *waiter) {
	c.mu.Lock()
	if !w.queued {
		c.mu.Unlock()
		return
	}
	c.removeLocked(w)
	c.mu.Unlock()
	w.stop()
	go w.job(w.ctx, w.ctx.Err())
}

// refuse tells a waiter taken out of the queue that it was refused; the
// caller holds no lock, or holds c.mu when w is being pushed out (refuse
// never takes it).
func (c *Controller) refuse(w *waiter, err *BusyError) {
	if w.stop != nil {
		go w.stop()
	}
	if w.job != nil {
		go w.job(w.ctx, err)
		return
	}
	w.err = err
	close(w.grant)
}

func (c *Controller) shed(platform string, err error) {
	var be *BusyError
	if c.opts.OnShed != nil && errors.As(err, &be) {
		c.opts.OnShed(platform, be.Reason)
	}
}

// Stats is a snapshot of the controller.
type Stats struct {
	// Slots is the bound; Running how many are taken.
	Slots, Running int
	// Waiting is how many questions wait, by platform.
	Waiting map[string]int
}

// Stats returns a snapshot.
func (c *Controller) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := Stats{Slots: c.opts.Slots, Running: c.running, Waiting: map[string]int{}}
	for _, p := range c.ring {
		s.Waiting[p.name] = p.n
	}
	return s
}

// LastRelease is when an admitted question last ended (zero before the
// first).
func (c *Controller) LastRelease() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}
