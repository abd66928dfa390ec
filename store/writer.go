package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// ErrClosed is returned by writes submitted after Close.
var ErrClosed = errors.New("store: closed")

// Writer tuning: how many writes may wait, and how many one transaction
// commits at most.
const (
	writeQueue = 4096
	writeBatch = 256
)

// writer owns the write connection. Writes are queued on a bounded channel
// and a single goroutine commits them in batches: each batch is one
// transaction, each write in it runs inside its own savepoint, so a write
// that fails is rolled back alone and the others in its batch still commit.
// Under load, many turns share one commit instead of each waiting for the
// database lock in turn.
type writer struct {
	conn  *sql.DB
	queue chan *writeReq
	done  chan struct{}

	mu     sync.RWMutex // held shared by senders, exclusively by close
	closed bool
}

// writeReq is one queued write. state moves from pending to running (the
// writer took it) or to abandoned (its caller gave up first).
type writeReq struct {
	ctx   context.Context
	fn    func(context.Context, *sql.Tx) error
	state atomic.Int32
	err   chan error
}

const (
	reqPending int32 = iota
	reqRunning
	reqAbandoned
)

func startWriter(conn *sql.DB) *writer {
	w := &writer{conn: conn, queue: make(chan *writeReq, writeQueue), done: make(chan struct{})}
	go w.loop()
	return w
}

// write queues fn and waits for its outcome. fn runs in a transaction on
// the write connection, with ctx stripped of its cancellation: once the
// writer has started a write, the caller waits for it, so an error always
// means nothing was written. A write still queued when ctx ends is dropped
// and ctx's error returned. A write the database failed to store (a full
// disk, an I/O error) returns an error wrapping
// docent.ErrStorageUnavailable, and counts against WriteHealth.
func (db *DB) write(ctx context.Context, fn func(context.Context, *sql.Tx) error) error {
	err := db.writer.submit(ctx, fn)
	if errors.Is(err, ErrClosed) || (err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err())) {
		return err
	}
	return db.health.observe(err)
}

// exec runs one statement through the writer.
func (db *DB) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := db.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		res, err = tx.ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}

func (w *writer) submit(ctx context.Context, fn func(context.Context, *sql.Tx) error) error {
	req := &writeReq{ctx: context.WithoutCancel(ctx), fn: fn, err: make(chan error, 1)}
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return ErrClosed
	}
	select {
	case w.queue <- req:
	case <-ctx.Done():
		w.mu.RUnlock()
		return ctx.Err()
	}
	w.mu.RUnlock()
	select {
	case err := <-req.err:
		return err
	case <-ctx.Done():
		if req.state.CompareAndSwap(reqPending, reqAbandoned) {
			return ctx.Err()
		}
		return <-req.err // already running: its outcome is the truth
	}
}

// close stops accepting writes and returns once every queued write is done.
func (w *writer) close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		<-w.done
		return
	}
	w.closed = true
	close(w.queue)
	w.mu.Unlock()
	<-w.done
}

func (w *writer) loop() {
	defer close(w.done)
	batch := make([]*writeReq, 0, writeBatch)
	for req := range w.queue {
		batch = append(batch[:0], req)
	fill:
		for len(batch) < writeBatch {
			select {
			case r, ok := <-w.queue:
				if !ok {
					break fill
				}
				batch = append(batch, r)
			default:
				break fill
			}
		}
		w.commit(batch)
	}
}

// commit runs the live requests of batch in one transaction and reports
// to each. When the transaction itself fails (begin or commit), every
// request that had succeeded inside it gets that error.
func (w *writer) commit(batch []*writeReq) {
	live := batch[:0:0]
	for _, r := range batch {
		if r.state.CompareAndSwap(reqPending, reqRunning) {
			live = append(live, r)
		}
	}
	if len(live) == 0 {
		return
	}
	errs := make([]error, len(live))
	txErr := inTx(context.Background(), w.conn, func(tx *sql.Tx) error {
		for i, r := range live {
			errs[i] = savepoint(r.ctx, tx, r.fn)
		}
		return nil
	})
	for i, r := range live {
		if errs[i] == nil && txErr != nil {
			errs[i] = fmt.Errorf("commit: %w", txErr)
		}
		r.err <- errs[i]
	}
}

// savepoint runs fn so that its changes are undone alone when it fails.
func savepoint(ctx context.Context, tx *sql.Tx, fn func(context.Context, *sql.Tx) error) error {
	if _, err := tx.ExecContext(ctx, `SAVEPOINT w`); err != nil {
		return err
	}
	if err := fn(ctx, tx); err != nil {
		if _, rerr := tx.ExecContext(ctx, `ROLLBACK TO w`); rerr != nil {
			return errors.Join(err, rerr)
		}
		if _, rerr := tx.ExecContext(ctx, `RELEASE w`); rerr != nil {
			return errors.Join(err, rerr)
		}
		return err
	}
	_, err := tx.ExecContext(ctx, `RELEASE w`)
	return err
}
