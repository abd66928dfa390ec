package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docent-hq/docent"
)

// TestConcurrentWritesNeverBusy has turn writers, registry writers and
// readers all at once on one database file, as a server under load that
// syncs meanwhile: every write lands and none meets SQLITE_BUSY.
func TestConcurrentWritesNeverBusy(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	const turnWriters, perWriter, docWriters = 100, 4, 4
	var wg sync.WaitGroup
	errs := make(chan error, turnWriters*perWriter+docWriters*50+100)
	ids := make(chan int64, turnWriters*perWriter)
	for w := range turnWriters {
		wg.Go(func() {
			for i := range perWriter {
				tu := fullTurn(time.Time{})
				tu.Question.Text = fmt.Sprintf("question %d.%d", w, i)
				// Chunks differ per writer, so trace_chunks takes inserts
				// and updates at once.
				tu.Answer.Trace.Candidates[1].Chunk.Text = fmt.Sprintf("text of writer %d", w)
				if err := db.CreateTurn(ctx, &tu); err != nil {
					errs <- err
					continue
				}
				ids <- tu.ID
			}
		})
	}
	for w := range docWriters {
		wg.Go(func() {
			for i := range 50 {
				rec := docent.DocRecord{ID: fmt.Sprintf("git:%d/%d.md", w, i), Source: "git", ChunkIDs: []string{"c"}}
				if err := db.PutDocument(ctx, rec); err != nil {
					errs <- err
				}
			}
		})
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 4 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := db.ListTurns(ctx, TurnFilter{Limit: 20}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	close(ids)
	for err := range errs {
		t.Error(err)
	}
	seen := map[int64]bool{}
	for id := range ids {
		if seen[id] {
			t.Errorf("turn ID %d given twice", id)
		}
		seen[id] = true
	}
	counts, err := db.CountTurnsByStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := counts[docent.StatusAnswered]; n != turnWriters*perWriter || len(seen) != n {
		t.Errorf("stored %d turns, %d IDs returned; want %d", n, len(seen), turnWriters*perWriter)
	}
	docs, err := db.ListDocuments(ctx, DocFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != docWriters*50 {
		t.Errorf("stored %d documents, want %d", len(docs), docWriters*50)
	}
	// The last turn reads back whole, its chunks found in trace_chunks.
	got, err := db.Turn(ctx, int64(len(seen)))
	if err != nil {
		t.Fatal(err)
	}
	if c := got.Answer.Trace.Candidates; len(c) != 2 || c[0].Chunk.Text != "Leave > Parental\nSixteen weeks." ||
		!strings.HasPrefix(c[1].Chunk.Text, "text of writer ") {
		t.Errorf("candidates read back: %+v", c)
	}
}

// TestWriteFailsAlone: in one batch, a write that fails is rolled back on
// its own and the others commit.
func TestWriteFailsAlone(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	insert := func(source string, fail bool) *writeReq {
		r := &writeReq{ctx: ctx, err: make(chan error, 1), fn: func(ctx context.Context, tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO source_state (source, updated_at) VALUES (?, 'now')`, source); err != nil {
				return err
			}
			if fail {
				return errors.New("boom")
			}
			return nil
		}}
		return r
	}
	batch := []*writeReq{insert("a", false), insert("b", true), insert("c", false)}
	db.writer.commit(batch)
	for i, want := range []bool{true, false, true} {
		if err := <-batch[i].err; (err == nil) != want {
			t.Errorf("write %d: err = %v", i, err)
		}
	}
	for source, want := range map[string]bool{"a": true, "b": false, "c": true} {
		var n int
		if err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM source_state WHERE source = ?`, source).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if (n == 1) != want {
			t.Errorf("source %s stored: %v, want %v", source, n == 1, want)
		}
	}
}

// TestWriteCancelledWhileQueued: a write whose context ends while it waits
// behind another returns the context's error and never runs; once Close
// has drained the queue, writes fail with ErrClosed.
func TestWriteCancelledWhileQueued(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "docent.db"))
	if err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- db.write(ctx, func(context.Context, *sql.Tx) error {
			close(started)
			<-release
			return nil
		})
	}()
	<-started
	cctx, cancel := context.WithCancel(ctx)
	ran := false
	second := make(chan error, 1)
	go func() {
		second <- db.write(cctx, func(context.Context, *sql.Tx) error { ran = true; return nil })
	}()
	// Cancel once it waits in the queue behind the first.
	for deadline := time.Now().Add(5 * time.Second); len(db.writer.queue) != 1; {
		if time.Now().After(deadline) {
			t.Fatal("the second write never queued")
		}
		runtime.Gosched()
	}
	cancel()
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled write: err = %v, want context.Canceled", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if ran {
		t.Error("the cancelled write ran")
	}
	if err := db.SetCursor(ctx, "git", "c"); !errors.Is(err, ErrClosed) {
		t.Errorf("write after Close: err = %v, want ErrClosed", err)
	}
}

// TestFilesPrivate: the database and its WAL files are readable by the
// owner only, whatever the umask, including files made by an older binary.
func TestFilesPrivate(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "docent.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil { // as an older binary left it
		t.Fatal(err)
	}
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.SetCursor(ctx, "git", "c"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", filepath.Base(p), st.Mode().Perm())
		}
	}
}
