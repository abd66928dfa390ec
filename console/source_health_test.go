package console

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/files"
	"github.com/docent-hq/docent/search"
)

// TestSourcesShowHealth: a source whose runs fail shows how many failed
// in a row, and once its schedule has come due often enough without a
// success, that it is stale (the scheduler's Health, as /metrics has it).
func TestSourcesShowHealth(t *testing.T) {
	var mu sync.Mutex
	now := time.Now().UTC()
	clock := testClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	var sched *connectors.Scheduler
	e := newEnv(t, func(o *Options) {
		engine := connectors.NewEngine(o.Store, o.Index.(search.Index), o.Embedder.(search.Embedder),
			search.Chunker{TargetTokens: 200}, nil, connectors.EngineOptions{StageDir: t.TempDir()})
		sched = connectors.NewScheduler(engine, nil, connectors.SchedulerOptions{Workers: 1, Clock: clock})
		// A folder that is not there: every run fails.
		broken := files.New("runbooks", files.Dir(filepath.Join(t.TempDir(), "missing")), files.Options{})
		if err := sched.Add(broken, "@every 1h"); err != nil {
			t.Fatal(err)
		}
		ctx, stop := context.WithCancel(context.Background())
		if err := sched.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stop(); sched.Wait() })
		o.Scheduler = sched
		o.Sources = []Source{{Name: "runbooks", Type: "dir", Schedule: "@every 1h", StaleAfterDays: 365}}
	})
	c := e.client()
	c.login()
	row := func() (failures, stale string) {
		r := c.get("/sources").doc.Find(`[data-testid=source-row][data-source=runbooks]`)
		return text(r.Find(`[data-testid=source-failures]`)), text(r.Find(`[data-testid=source-stale]`))
	}
	if f, s := row(); f != "" || s != "" {
		t.Errorf("before any run: failures %q, stale %q; want neither", f, s)
	}
	for want := 1; want <= 2; want++ {
		if err := sched.RunNow("runbooks"); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(30 * time.Second); sched.Status()[0].Health.ConsecutiveFailures < want; {
			if time.Now().After(deadline) {
				t.Fatalf("run %d did not fail: %+v", want, sched.Status()[0])
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if f, s := row(); f != "2 failed in a row" || s != "" {
		t.Errorf("after two failed runs: failures %q, stale %q; want 2 in a row, not stale yet", f, s)
	}
	mu.Lock()
	now = now.Add(4 * time.Hour) // three scheduled runs came due without a success
	mu.Unlock()
	if _, s := row(); !strings.HasPrefix(s, "stale: no successful run in 3 scheduled runs") {
		t.Errorf("stale = %q, want stale after 3 missed runs", s)
	}
}

// testClock is a scheduler clock at the time a function says, on which no
// schedule fires by itself.
type testClock func() time.Time

func (c testClock) Now() time.Time                     { return c() }
func (testClock) After(time.Duration) <-chan time.Time { return nil }
