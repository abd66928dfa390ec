// Package lograte keeps a failure that every request repeats (a full
// disk, a readiness probe every few seconds) from flooding the log: one
// line per interval, carrying how many were held back since the last.
package lograte

import (
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// Quiet lets one log line through per interval. The zero value is not
// usable; make one with New.
type Quiet struct {
	every      rate.Sometimes
	suppressed atomic.Int64
}

// New returns a Quiet that lets the first line through, then one per
// interval.
func New(interval time.Duration) *Quiet {
	return &Quiet{every: rate.Sometimes{First: 1, Interval: interval}}
}

// Log calls write, with how many lines were held back since the last
// one written, when the interval allows; otherwise it counts one more
// held back.
func (q *Quiet) Log(write func(heldBack int)) {
	ran := false
	q.every.Do(func() {
		ran = true
		write(int(q.suppressed.Swap(0)))
	})
	if !ran {
		q.suppressed.Add(1)
	}
}
