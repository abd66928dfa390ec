package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/docent-hq/docent"
)

// Write health: after unhealthyAfter writes in a row failed to store,
// WriteHealth reports the store unavailable; any write that succeeds
// (a caller's, or the probe WriteHealth makes at most once every
// probeEvery while unhealthy) makes it healthy again.
const (
	unhealthyAfter = 3
	probeEvery     = 2 * time.Second
	// probeBytes is what the probe writes: about a turn with its trace,
	// so that a database with room for the probe has room for a turn.
	probeBytes = 16 << 10
)

// health counts the writes in a row that failed to store.
type health struct {
	failures atomic.Int64
	lastErr  atomic.Pointer[error]

	mu     sync.Mutex // serialises probes
	probed time.Time
}

// unavailable reports whether err is the database failing to store
// (full, an I/O error, read-only, locked, corrupt, out of memory) rather
// than refusing a write.
func unavailable(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN,
		sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED,
		sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_PROTOCOL, sqlite3.SQLITE_NOLFS, sqlite3.SQLITE_PERM:
		return true
	}
	return false
}

// observe records a write's outcome and returns its error, wrapping
// docent.ErrStorageUnavailable when the database failed to store it.
func (h *health) observe(err error) error {
	switch {
	case err == nil:
		h.failures.Store(0)
		return nil
	case unavailable(err):
		h.failures.Add(1)
		h.lastErr.Store(&err)
		return fmt.Errorf("%w: %w", docent.ErrStorageUnavailable, err)
	}
	return err
}

// WriteHealth returns nil while writes succeed, and an error wrapping
// docent.ErrStorageUnavailable once the last three writes all failed to
// store (a full disk, an I/O error). While it reports unavailable it
// tries a write of its own, at most once every 2 seconds, so that it
// recovers as soon as the database takes writes again, with or without
// other traffic. Readiness (/readyz) runs it.
func (db *DB) WriteHealth(ctx context.Context) error {
	h := &db.health
	if h.failures.Load() < unhealthyAfter {
		return nil
	}
	h.mu.Lock()
	if time.Since(h.probed) >= probeEvery {
		h.probed = time.Now()
		h.mu.Unlock()
		_ = db.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO write_probe (data) VALUES (randomblob(?))`, probeBytes); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `DELETE FROM write_probe`)
			return err
		})
	} else {
		h.mu.Unlock()
	}
	n := h.failures.Load()
	if n < unhealthyAfter {
		return nil
	}
	cause := errors.New("unknown")
	if p := h.lastErr.Load(); p != nil {
		cause = *p
	}
	return fmt.Errorf("store: %w: the last %d writes failed: %w", docent.ErrStorageUnavailable, n, cause)
}
