// Package memtrim gives a server's memory back to the operating system
// once a burst of requests is over. Go returns freed heap lazily, and an
// idle server may not collect at all for two minutes, so without it the
// memory a burst needed stays resident.
package memtrim

import (
	"context"
	"runtime"
	"runtime/debug"
	"time"
)

// DefaultIdle is how long after the last request a burst is over.
const DefaultIdle = 15 * time.Second

// Trimmer calls Free once per burst, when no request has ended for Idle.
type Trimmer struct {
	// Last reports when the last request ended (zero before the first).
	Last func() time.Time
	// Idle is how long after Last a burst is over; DefaultIdle when zero.
	Idle time.Duration
	// Free gives the memory back; FreeMemory when nil.
	Free func()

	trimmed time.Time // the end of the burst last trimmed after
}

// New returns a Trimmer over last with the defaults.
func New(last func() time.Time) *Trimmer { return &Trimmer{Last: last} }

func (t *Trimmer) idle() time.Duration {
	if t.Idle <= 0 {
		return DefaultIdle
	}
	return t.Idle
}

// Check calls Free if the burst that ended at Last() has been over for
// Idle at now and was not trimmed yet. It reports whether it did.
func (t *Trimmer) Check(now time.Time) bool {
	end := t.Last()
	if end.IsZero() || !end.After(t.trimmed) || now.Sub(end) < t.idle() {
		return false
	}
	if t.Free != nil {
		t.Free()
	} else {
		FreeMemory()
	}
	t.trimmed = end
	return true
}

// Run checks every Idle/3 until ctx ends.
func (t *Trimmer) Run(ctx context.Context) {
	tick := time.NewTicker(t.idle() / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			t.Check(now)
		}
	}
}

// FreeMemory collects twice and returns every free page to the operating
// system: the first collection empties sync.Pools into their victim
// caches, the second (inside FreeOSMemory) frees those too.
func FreeMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}
