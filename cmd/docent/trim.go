package main

import (
	"context"
	"runtime"
	"runtime/debug"
	"time"
)

// trimIdle is how long serve waits after the last answered question
// before it gives the memory of a burst back.
const trimIdle = 15 * time.Second

// trimmer gives memory back to the operating system once a burst of
// questions is over: when no question has ended for idle, it calls free
// (freeMemory in production), once per burst. Go returns freed heap
// lazily, and an idle server may not collect at all for two minutes, so
// without it the memory a burst needed stays resident.
type trimmer struct {
	// last reports when the last question ended (zero before the first).
	last func() time.Time
	idle time.Duration
	free func()

	trimmed time.Time // the end of the burst last trimmed after
}

// check calls free if the burst that ended at last() has been over for
// idle at now and was not trimmed yet. It reports whether it did.
func (t *trimmer) check(now time.Time) bool {
	end := t.last()
	if end.IsZero() || !end.After(t.trimmed) || now.Sub(end) < t.idle {
		return false
	}
	t.free()
	t.trimmed = end
	return true
}

// run checks every idle/3 until ctx ends.
func (t *trimmer) run(ctx context.Context) {
	tick := time.NewTicker(t.idle / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			t.check(now)
		}
	}
}

// freeMemory collects twice and returns every free page to the operating
// system: the first collection empties sync.Pools into their victim
// caches, the second (inside FreeOSMemory) frees those too.
func freeMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}
