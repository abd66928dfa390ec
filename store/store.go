// Package store persists docent's state in one SQLite file (modernc.org/sqlite,
// no cgo): the document registry and source cursors the sync engine diffs
// against, sync run records, and turns (the retrieval log of every answer).
//
// Open applies the versioned migrations in order, one transaction each, and
// records them in schema_migrations, so opening a database written by any
// earlier version brings it to the current schema with its data intact.
//
// Writes and reads use separate connections. Every write goes through one
// writer goroutine that owns the only write connection and commits what is
// queued in batches (see writer.go), so concurrent writers in this process
// never meet SQLITE_BUSY; reads run on their own pool of read-only
// connections, which WAL journaling lets proceed beside the writer.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"runtime"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// ErrNotFound is returned when a requested row does not exist.
var ErrNotFound = errors.New("store: not found")

// timeLayout is fixed width, so stored times sort as text, and keeps
// nanoseconds, so times read back equal to what was written.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// DB is a handle to the docent SQLite database. It is safe for concurrent use.
type DB struct {
	// w is the one write connection; only the writer goroutine and
	// migrations use it.
	w *sql.DB
	// r is the pool of read-only connections (w itself for ":memory:").
	r   *sql.DB
	now func() time.Time

	writer *writer
	health health
}

// Option configures Open.
type Option func(*DB)

// WithClock makes the store read the current time from now instead of
// time.Now (tests inject a fixed or advancing clock).
func WithClock(now func() time.Time) Option {
	return func(db *DB) { db.now = now }
}

// Open opens (creating if needed) the database at path and migrates it to
// the current schema. path ":memory:" opens a private in-memory database.
// The connections use WAL journaling, a busy timeout, foreign keys and
// incremental auto-vacuum (a database made before that is vacuumed once,
// here, to switch it on).
func Open(ctx context.Context, path string, opts ...Option) (*DB, error) {
	return openAt(ctx, path, len(migrations), opts...)
}

// readers is the size of the read pool; readerIdle is how long an unused
// read connection stays open.
var (
	readers    = max(4, 2*runtime.GOMAXPROCS(0))
	readerIdle = 30 * time.Second
)

// openAt opens the database and migrates it up to version (tests use it to
// build databases at earlier schema versions).
func openAt(ctx context.Context, path string, version int, opts ...Option) (*DB, error) {
	if path == "" {
		return nil, errors.New("store: open: empty path")
	}
	memory := path == ":memory:" || strings.Contains(path, "mode=memory")
	dsn := func(readOnly bool) string {
		q := url.Values{}
		q.Add("_pragma", "busy_timeout(5000)")
		q.Add("_pragma", "foreign_keys(1)")
		if readOnly {
			// Only pragmas that take no lock: a reader must never wait
			// for the writer (WAL mode is set by the writer, in the file).
			q.Add("_pragma", "query_only(1)")
		} else {
			if !memory {
				q.Add("_pragma", "journal_mode(WAL)")
				q.Add("_pragma", "synchronous(NORMAL)")
			}
			// Transactions take the write lock up front: a writer in
			// another process (docent ask) waits on busy_timeout instead
			// of failing on a lock upgrade.
			q.Set("_txlock", "immediate")
		}
		if memory {
			return ":memory:?" + q.Encode()
		}
		return "file:" + path + "?" + q.Encode()
	}
	if !memory {
		if err := privateFiles(path); err != nil {
			return nil, fmt.Errorf("store: open %s: %w", path, err)
		}
	}
	w, err := sql.Open("sqlite", dsn(false))
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// One write connection: writes in this process queue in Go, never on
	// SQLite's lock. (":memory:" needs it too: each connection is its own
	// database.)
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	db := &DB{w: w, r: w, now: time.Now}
	for _, o := range opts {
		o(db)
	}
	fail := func(err error) (*DB, error) {
		db.closePools()
		return nil, err
	}
	if err := w.PingContext(ctx); err != nil {
		return fail(fmt.Errorf("store: open %s: %w", path, err))
	}
	if !memory {
		// Before the first table: a new database is made with
		// incremental auto-vacuum (ensureIncrementalVacuum converts older
		// ones). Setting it writes the header, so only the writer does.
		if err := db.newIncrementalVacuum(ctx); err != nil {
			return fail(fmt.Errorf("store: open %s: %w", path, err))
		}
	}
	if err := db.migrate(ctx, version); err != nil {
		return fail(err)
	}
	if !memory {
		if err := db.ensureIncrementalVacuum(ctx); err != nil {
			return fail(err)
		}
		if db.r, err = sql.Open("sqlite", dsn(true)); err != nil {
			return fail(fmt.Errorf("store: open %s: %w", path, err))
		}
		db.r.SetMaxOpenConns(readers)
		db.r.SetMaxIdleConns(readers)
		// Connections a burst of reads opened close once idle, with
		// their page caches and file descriptors.
		db.r.SetConnMaxIdleTime(readerIdle)
	}
	db.writer = startWriter(db.w)
	return db, nil
}

// privateFiles creates the database file readable by its owner only, and
// makes an existing one (and its WAL files) so. SQLite gives the WAL and
// shared-memory files it creates the database file's mode.
func privateFiles(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// newIncrementalVacuum sets incremental auto-vacuum on a database that has
// no pages yet.
func (db *DB) newIncrementalVacuum(ctx context.Context) error {
	var pages int
	if err := db.w.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		return err
	}
	if pages > 0 {
		return nil
	}
	_, err := db.w.ExecContext(ctx, `PRAGMA auto_vacuum = incremental`)
	return err
}

// ensureIncrementalVacuum switches a database created without incremental
// auto-vacuum to it. That takes a VACUUM, which rewrites the file: it runs
// once, on the first open by a binary that prunes turns.
func (db *DB) ensureIncrementalVacuum(ctx context.Context) error {
	var mode int
	if err := db.w.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil {
		return fmt.Errorf("store: auto_vacuum: %w", err)
	}
	if mode == 2 {
		return nil
	}
	if _, err := db.w.ExecContext(ctx, `PRAGMA auto_vacuum = incremental`); err != nil {
		return fmt.Errorf("store: auto_vacuum: %w", err)
	}
	if _, err := db.w.ExecContext(ctx, `VACUUM`); err != nil {
		return fmt.Errorf("store: vacuum to enable auto_vacuum: %w", err)
	}
	return nil
}

// Close waits for queued writes to be committed and closes the database.
func (db *DB) Close() error {
	var err error
	if db.writer != nil {
		db.writer.close()
	}
	if cerr := db.closePools(); cerr != nil {
		err = fmt.Errorf("store: close: %w", cerr)
	}
	return err
}

func (db *DB) closePools() error {
	var errs []error
	if db.r != nil && db.r != db.w {
		errs = append(errs, db.r.Close())
	}
	errs = append(errs, db.w.Close())
	return errors.Join(errs...)
}

// SchemaVersion returns the highest migration applied.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := db.r.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("store: schema version: %w", err)
	}
	return v, nil
}

// migrate applies migrations[current:version], each in its own transaction.
func (db *DB) migrate(ctx context.Context, version int) error {
	if _, err := db.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		applied_at TEXT NOT NULL
	)`); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	current, err := db.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	if current > len(migrations) {
		return fmt.Errorf("store: migrate: database schema version %d is newer than this binary (%d)", current, len(migrations))
	}
	for v := current + 1; v <= version; v++ {
		if err := inTx(ctx, db.w, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, migrations[v-1]); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`, v, db.stamp())
			return err
		}); err != nil {
			return fmt.Errorf("store: migrate to version %d: %w", v, err)
		}
	}
	return nil
}

// inTx runs fn in a transaction on conn, committing when it returns nil.
func inTx(ctx context.Context, conn *sql.DB, fn func(*sql.Tx) error) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// stamp is the current time, formatted for storage.
func (db *DB) stamp() string { return db.now().UTC().Format(timeLayout) }

// formatTime formats t in UTC for storage; the zero time is stored as NULL.
func formatTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(timeLayout)
}

// parseTime reads a time written by formatTime; NULL is the zero time.
func parseTime(s sql.NullString) (time.Time, error) {
	if !s.Valid || s.String == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(timeLayout, s.String)
	if err != nil {
		return time.Time{}, fmt.Errorf("parse time %q: %w", s.String, err)
	}
	return t.UTC(), nil
}
