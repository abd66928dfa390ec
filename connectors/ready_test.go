package connectors_test

import (
	"context"
	"errors"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/connectorstest"
)

type syncerFunc func(ctx context.Context, src connectors.Source) error

func (f syncerFunc) Sync(ctx context.Context, src connectors.Source, _ func(connectors.Progress)) (docent.RunResult, error) {
	return docent.RunResult{Source: src.Name()}, f(ctx, src)
}

// TestReadiness: the index is not loaded until a sync succeeds (or serve
// marks it), the callback runs once, and once loaded Check is the index's
// health.
func TestReadiness(t *testing.T) {
	ctx := context.Background()
	var health error
	loaded := 0
	r := connectors.NewReadiness(func(context.Context) error { return health }, func() { loaded++ })
	if r.Loaded() || !errors.Is(r.Check(ctx), connectors.ErrNotLoaded) {
		t.Fatalf("a new Readiness: loaded %v, check %v", r.Loaded(), r.Check(ctx))
	}
	fail := errors.New("wiki down")
	next := fail
	s := r.Syncer(syncerFunc(func(context.Context, connectors.Source) error { return next }))
	src := connectorstest.NewSource("hb")
	if _, err := s.Sync(ctx, src, nil); !errors.Is(err, fail) || r.Loaded() {
		t.Fatalf("after a failed sync: %v, loaded %v", err, r.Loaded())
	}
	next = nil
	for range 2 {
		if _, err := s.Sync(ctx, src, nil); err != nil {
			t.Fatal(err)
		}
	}
	r.MarkLoaded()
	if !r.Loaded() || r.Check(ctx) != nil || loaded != 1 {
		t.Errorf("after syncs: loaded %v, check %v, callback %d times (want once)", r.Loaded(), r.Check(ctx), loaded)
	}
	health = errors.New("no leader")
	if err := r.Check(ctx); err != health {
		t.Errorf("check with the index unhealthy = %v", err)
	}
}
