package connectorstest

import (
	"context"
	"errors"
	"sync"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/search"
)

// ErrCrash is the error (or panic value) of an injected fault.
var ErrCrash = errors.New("connectorstest: simulated crash")

// Faults counts writes shared by a FaultIndex and a FaultRegistry and
// fails every write after the first After. With Panic set the failing
// write panics with ErrCrash, like a process killed at that point; the
// write itself never happens.
type Faults struct {
	mu     sync.Mutex
	after  int
	panic  bool
	fn     func()
	writes int
}

// NewFaults returns Faults that let after writes through (after < 0: all).
func NewFaults(after int, panics bool) *Faults { return &Faults{after: after, panic: panics} }

// NewFaultsFunc returns Faults that call fn at the first write after the
// first after writes, instead of writing (a test kills its own process
// there); if fn returns, the write fails with ErrCrash.
func NewFaultsFunc(after int, fn func()) *Faults { return &Faults{after: after, fn: fn} }

// Writes returns how many writes were attempted.
func (f *Faults) Writes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes
}

func (f *Faults) hit() error {
	f.mu.Lock()
	f.writes++
	fail := f.after >= 0 && f.writes > f.after
	f.mu.Unlock()
	if !fail {
		return nil
	}
	if f.fn != nil {
		f.fn()
	}
	if f.panic {
		panic(ErrCrash)
	}
	return ErrCrash
}

// FaultIndex is a search.Index whose writes go through Faults.
type FaultIndex struct {
	search.Index
	Faults *Faults
}

// Upsert fails or panics when Faults says so, and otherwise upserts.
func (x FaultIndex) Upsert(ctx context.Context, chunks []docent.Chunk) error {
	if err := x.Faults.hit(); err != nil {
		return err
	}
	return x.Index.Upsert(ctx, chunks)
}

// DeleteDocs fails or panics when Faults says so, and otherwise deletes.
func (x FaultIndex) DeleteDocs(ctx context.Context, docIDs ...string) error {
	if err := x.Faults.hit(); err != nil {
		return err
	}
	return x.Index.DeleteDocs(ctx, docIDs...)
}

// SetEmbedderName fails or panics when Faults says so, and otherwise sets the name.
func (x FaultIndex) SetEmbedderName(ctx context.Context, name string) error {
	if err := x.Faults.hit(); err != nil {
		return err
	}
	return x.Index.SetEmbedderName(ctx, name)
}

// FaultRegistry is a connectors.Registry whose document and cursor writes
// go through Faults (run records are not faulted).
type FaultRegistry struct {
	connectors.Registry
	Faults *Faults
}

// PutDocuments fails or panics when Faults says so, and otherwise writes.
func (r FaultRegistry) PutDocuments(ctx context.Context, recs []docent.DocRecord) error {
	if err := r.Faults.hit(); err != nil {
		return err
	}
	return r.Registry.PutDocuments(ctx, recs)
}

// MarkDeleted fails or panics when Faults says so, and otherwise writes.
func (r FaultRegistry) MarkDeleted(ctx context.Context, ids []string) error {
	if err := r.Faults.hit(); err != nil {
		return err
	}
	return r.Registry.MarkDeleted(ctx, ids)
}

// SetCursor fails or panics when Faults says so, and otherwise writes.
func (r FaultRegistry) SetCursor(ctx context.Context, source, cursor string) error {
	if err := r.Faults.hit(); err != nil {
		return err
	}
	return r.Registry.SetCursor(ctx, source, cursor)
}
