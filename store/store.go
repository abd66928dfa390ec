// Package store persists docent's state in one SQLite file (modernc.org/sqlite,
// no cgo): the document registry and source cursors the sync engine diffs
// against, sync run records, and turns (the retrieval log of every answer).
//
// Open applies the versioned migrations in order, one transaction each, and
// records them in schema_migrations, so opening a database written by any
// earlier version brings it to the current schema with its data intact.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
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
	db  *sql.DB
	now func() time.Time
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
// The connection uses WAL journaling, a busy timeout and foreign keys.
func Open(ctx context.Context, path string, opts ...Option) (*DB, error) {
	return openAt(ctx, path, len(migrations), opts...)
}

// openAt opens the database and migrates it up to version (tests use it to
// build databases at earlier schema versions).
func openAt(ctx context.Context, path string, version int, opts ...Option) (*DB, error) {
	if path == "" {
		return nil, errors.New("store: open: empty path")
	}
	memory := path == ":memory:" || strings.Contains(path, "mode=memory")
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "foreign_keys(1)")
	if !memory {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
	}
	// Write transactions take the lock up front so that concurrent writers
	// wait on busy_timeout instead of failing on a lock upgrade.
	q.Set("_txlock", "immediate")
	dsn := "file:" + path + "?" + q.Encode()
	if memory {
		dsn = ":memory:?" + q.Encode()
	}
	sdb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if memory {
		// Every connection to ":memory:" is a different database.
		sdb.SetMaxOpenConns(1)
	}
	db := &DB{db: sdb, now: time.Now}
	for _, o := range opts {
		o(db)
	}
	if err := sdb.PingContext(ctx); err != nil {
		sdb.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := db.migrate(ctx, version); err != nil {
		sdb.Close()
		return nil, err
	}
	return db, nil
}

// Close closes the database.
func (db *DB) Close() error {
	if err := db.db.Close(); err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}

// SchemaVersion returns the highest migration applied.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := db.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("store: schema version: %w", err)
	}
	return v, nil
}

// migrate applies migrations[current:version], each in its own transaction.
func (db *DB) migrate(ctx context.Context, version int) error {
	if _, err := db.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
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
		if err := db.tx(ctx, func(tx *sql.Tx) error {
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

// tx runs fn in a transaction, committing when it returns nil.
func (db *DB) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := db.db.BeginTx(ctx, nil)
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
