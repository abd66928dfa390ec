package connectors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// Derive adds derivers to the engine's corpus pass: after each run that
// changed the index, one Scan of it feeds every deriver (with a Trainable
// embedder the scan that gathers the model's fit corpus is that pass), so
// that state derived from the whole corpus is computed when the corpus
// changes, once, and read as it is. Call it before the first Sync.
func (e *Engine) Derive(ds ...search.Deriver) {
	e.passMu.Lock()
	defer e.passMu.Unlock()
	e.derivers = append(e.derivers, ds...)
}

// Pass feeds every stored chunk to the derivers: what a run that changed
// the index ends with, and what a process that opens an index it did not
// sync runs once. Passes take turns.
func (e *Engine) Pass(ctx context.Context) error {
	e.passMu.Lock()
	defer e.passMu.Unlock()
	p := e.beginPass()
	if p == nil {
		return nil
	}
	err := e.idx.Scan(ctx, func(c docent.Chunk) error {
		p.add(c)
		return nil
	})
	if err != nil {
		err = fmt.Errorf("connectors: corpus pass: %w", err)
	}
	p.done(err)
	return err
}

// pass is one corpus pass under way.
type pass struct {
	adds  []func(docent.Chunk)
	dones []func(error)
}

// beginPass starts a pass on every deriver; nil when there are none.
// e.passMu is held.
func (e *Engine) beginPass() *pass {
	if len(e.derivers) == 0 {
		return nil
	}
	p := &pass{}
	for _, d := range e.derivers {
		add, done := d.BeginPass()
		p.adds, p.dones = append(p.adds, add), append(p.dones, done)
	}
	return p
}

func (p *pass) add(c docent.Chunk) {
	for _, add := range p.adds {
		add(c)
	}
}

func (p *pass) done(err error) {
	for _, done := range p.dones {
		done(err)
	}
}

// errPassAbandoned ends a pass gathered with the fit corpus that the run
// did not index as planned: a fresh pass over the index replaces it.
var errPassAbandoned = errors.New("connectors: corpus pass abandoned")

// endPass ends the run's corpus pass. The pass that gathered a Trainable
// embedder's fit corpus saw the chunks the index holds after the run when
// every changed document landed; otherwise, or without such a pass, the
// index is scanned once more. A failed pass is logged: the derivers keep
// their previous state and the next run's pass replaces it.
func (r *run) endPass(ctx context.Context, runErr error) {
	e := r.e
	if r.pass != nil {
		p := r.pass
		r.pass = nil
		if runErr == nil && failedCount(r.res.Errors) == 0 {
			p.done(nil)
			e.passMu.Unlock()
			return
		}
		p.done(errPassAbandoned)
		e.passMu.Unlock()
	}
	if err := e.Pass(context.WithoutCancel(ctx)); err != nil {
		e.log.Error("corpus pass failed", slog.String("source", r.name), slog.Any("error", err))
	}
}
