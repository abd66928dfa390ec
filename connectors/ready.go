package connectors

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/docent-hq/docent"
)

// ErrNotLoaded is Readiness.Check's error before the index is loaded.
var ErrNotLoaded = errors.New("connectors: the index is not loaded yet")

// Readiness is whether the index holds something to answer from, and can
// serve. The sync side owns it: serve marks it loaded when it opens an
// index that holds chunks, or when a sync first succeeds (Syncer); the
// API, the console's playground and the chat adapters only read it, so a
// question is never answered "not in the docs" because the docs are not
// loaded yet. The zero value is not loaded and has no health check.
type Readiness struct {
	loaded atomic.Bool
	// health, when set, is checked once loaded (a remote index's health).
	health func(context.Context) error
	// onLoaded is called once, when the index is first marked loaded.
	onLoaded func()
}

// NewReadiness returns a Readiness that is not loaded yet. health (may be
// nil) is the index's own check, run by Check once loaded; onLoaded (may
// be nil) is called once, when the index is first marked loaded.
func NewReadiness(health func(context.Context) error, onLoaded func()) *Readiness {
	return &Readiness{health: health, onLoaded: onLoaded}
}

// Loaded reports whether the index holds something to answer from.
func (r *Readiness) Loaded() bool { return r.loaded.Load() }

// MarkLoaded records that the index holds something to answer from.
func (r *Readiness) MarkLoaded() {
	if r.loaded.CompareAndSwap(false, true) && r.onLoaded != nil {
		r.onLoaded()
	}
}

// Check returns nil when the index is loaded and its health check (if
// any) passes; ErrNotLoaded before it is loaded, else the check's error.
func (r *Readiness) Check(ctx context.Context) error {
	if !r.Loaded() {
		return ErrNotLoaded
	}
	if r.health != nil {
		return r.health(ctx)
	}
	return nil
}

// Syncer wraps s so that its first successful run marks the index loaded:
// a server that started on an empty index becomes ready when a sync
// lands.
func (r *Readiness) Syncer(s Syncer) Syncer { return readySyncer{s, r} }

type readySyncer struct {
	Syncer
	r *Readiness
}

func (s readySyncer) Sync(ctx context.Context, src Source, progress func(Progress)) (docent.RunResult, error) {
	res, err := s.Syncer.Sync(ctx, src, progress)
	if err == nil {
		s.r.MarkLoaded()
	}
	return res, err
}
