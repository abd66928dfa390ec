//go:build unix

package connectors_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/local"
	"github.com/docent-hq/docent/store"
)

// killSource is the source before (state 1) and after (state 2) the
// changes the killed run applies. Both processes build it the same way, so
// its cursors agree.
func killSource(state int) *connectorstest.Source {
	src := connectorstest.NewSource("hb")
	src.SetIncremental(true)
	src.Put(doc("a.md", "Alpha one.\n\nAlpha two."), doc("b.md", "Bravo."), doc("c.md", "Charlie."))
	if state == 2 {
		src.Put(doc("a.md", "Alpha one.\n\nAlpha revised."), doc("d.md", "Delta words."))
		src.Delete("hb:c.md")
	}
	return src
}

// TestSyncSurvivesKill kills a real process with SIGKILL at each write of a
// sync (between the index and registry writes among them, and while the
// source is still listing: each document is written as the next one
// arrives), then syncs the same files again and checks the stores
// converged on the source. With a Trainable embedder the run stages the
// changed documents in a file, which a killed process must not leave
// behind.
func TestSyncSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	t.Parallel()
	for _, emb := range []string{"plain", "trainable"} {
		t.Run(emb, func(t *testing.T) {
			t.Parallel()
			killAtEveryWrite(t, emb)
		})
	}
}

func killAtEveryWrite(t *testing.T, emb string) {
	ctx := context.Background()
	reusing := 0 // recoveries that kept stored vectors
	for n := 0; ; n++ {
		dir := t.TempDir()
		e := openKillEnv(t, dir, emb)
		if _, err := connectors.NewEngine(e.db, e.idx, e.emb, e.ch, nil, e.opts).Sync(ctx, killSource(1), nil); err != nil {
			t.Fatal(err)
		}
		e.close()

		cmd := exec.Command(os.Args[0], "-test.run=^TestKillHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), "DOCENT_KILL_DIR="+dir, "DOCENT_KILL_AT="+strconv.Itoa(n), "DOCENT_KILL_EMB="+emb)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err == nil {
			if n < 4 {
				t.Fatalf("run finished before write %d: %s", n+1, out)
			}
			t.Logf("converged after a kill at each of the run's %d writes (%d recoveries reused stored vectors)", n, reusing)
			if emb == "plain" && reusing == 0 {
				// The edited document's unchanged paragraph, and a
				// document written to the index just before the kill,
				// keep their vectors; AssertConverged checked each one
				// is the embedding of its text.
				t.Error("no recovery reused a stored vector")
			}
			return
		}
		if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("helper at write %d: %v\n%s", n+1, err, out)
		}
		if left, err := os.ReadDir(e.opts.StageDir); err != nil || len(left) > 0 {
			t.Errorf("kill at write %d left files in the stage directory: %v %v", n+1, left, err)
		}

		e = openKillEnv(t, dir, emb)
		src := killSource(2)
		res, err := connectors.NewEngine(e.db, e.idx, e.emb, e.ch, nil, e.opts).Sync(ctx, src, nil)
		if err != nil || res.Failed != 0 {
			t.Fatalf("recovery after a kill at write %d: %+v, %v", n+1, res, err)
		}
		if res.Content.Reused > 0 {
			reusing++
		}
		connectorstest.AssertConverged(t, e.idx, e.db, e.ch, e.emb, "hb", src.Docs())
		e.close()
		if t.Failed() {
			t.Fatalf("did not converge after a kill at write %d", n+1)
		}
	}
}

// TestKillHelper is the process TestSyncSurvivesKill kills.
func TestKillHelper(t *testing.T) {
	dir := os.Getenv("DOCENT_KILL_DIR")
	if dir == "" {
		t.Skip("run by TestSyncSurvivesKill")
	}
	at, err := strconv.Atoi(os.Getenv("DOCENT_KILL_AT"))
	if err != nil {
		t.Fatal(err)
	}
	e := openKillEnv(t, dir, os.Getenv("DOCENT_KILL_EMB"))
	faults := connectorstest.NewFaultsFunc(at, func() {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // wait for the signal
	})
	eng := connectors.NewEngine(connectorstest.FaultRegistry{Registry: e.db, Faults: faults},
		connectorstest.FaultIndex{Index: e.idx, Faults: faults}, e.emb, e.ch, nil, e.opts)
	if _, err := eng.Sync(context.Background(), killSource(2), nil); err != nil {
		t.Fatal(err)
	}
	fmt.Println("sync completed")
}

// killEnv is an env that can be closed and reopened on the same files.
type killEnv struct {
	env
}

// openKillEnv opens the stores under dir with a fresh embedder (emb
// "trainable" for a connectorstest.Trainable, which a new process fits
// again) and writes one document per index call.
func openKillEnv(t *testing.T, dir, emb string) *killEnv {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(dir, "docent.db"))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := local.Open(ctx, filepath.Join(dir, "index.db"), local.Options{})
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	stage := filepath.Join(dir, "stage")
	if err := os.MkdirAll(stage, 0o755); err != nil {
		t.Fatal(err)
	}
	var e search.Embedder = connectorstest.NewEmbedder("v1")
	if emb == "trainable" {
		e = &connectorstest.Trainable{}
	}
	return &killEnv{env{t: t, db: db, idx: idx, emb: e,
		opts: connectors.EngineOptions{BatchSize: 1, StageDir: stage}}}
}

func (e *killEnv) close() {
	e.idx.Close()
	e.db.Close()
}
