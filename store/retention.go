package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Retention bounds the turns kept. Zero fields do not restrict.
type Retention struct {
	// MaxAge drops turns created longer ago than this.
	MaxAge time.Duration
	// MaxTurns keeps at most this many turns, the newest.
	MaxTurns int
}

// DefaultRetention keeps 90 days of turns, and at most 1,000,000 of them
// (about 4 GB at the measured size of a turn; see README).
var DefaultRetention = Retention{MaxAge: 90 * 24 * time.Hour, MaxTurns: 1_000_000}

// PruneResult is what PruneTurns removed.
type PruneResult struct {
	// Turns is how many turns were deleted, with their traces.
	Turns int64
	// Chunks is how many trace chunks were deleted because no turn left
	// refers to them.
	Chunks int64
	// SizeBefore and SizeAfter are the database size in bytes (its page
	// count times the page size, what the file holds once the WAL is
	// checkpointed) before and after.
	SizeBefore, SizeAfter int64
}

// pruneBatch is how many rows one delete removes, so that turn writes
// queued meanwhile wait for one short transaction at most.
const pruneBatch = 1000

// PruneTurns deletes the turns outside r, with their traces (and
// feedback), and the trace chunks no remaining turn refers to, then returns the freed pages to the
// file system (incremental vacuum, then a WAL checkpoint that truncates
// the log), so the database file shrinks.
func (db *DB) PruneTurns(ctx context.Context, r Retention) (PruneResult, error) {
	var res PruneResult
	var err error
	if res.SizeBefore, err = db.size(ctx); err != nil {
		return res, fmt.Errorf("store: prune turns: %w", err)
	}
	if r.MaxAge > 0 {
		cutoff := formatTime(db.now().Add(-r.MaxAge))
		n, err := db.deleteBatches(ctx, `DELETE FROM turns WHERE id IN
			(SELECT id FROM turns WHERE created_at < ? ORDER BY id LIMIT ?)`, cutoff)
		res.Turns += n
		if err != nil {
			return res, fmt.Errorf("store: prune turns older than %s: %w", r.MaxAge, err)
		}
	}
	if r.MaxTurns > 0 {
		var last int64 // the newest turn beyond the count
		err := db.r.QueryRowContext(ctx, `SELECT id FROM turns ORDER BY id DESC LIMIT 1 OFFSET ?`, r.MaxTurns).Scan(&last)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return res, fmt.Errorf("store: prune turns: %w", err)
		}
		if err == nil {
			n, err := db.deleteBatches(ctx, `DELETE FROM turns WHERE id IN
				(SELECT id FROM turns WHERE id <= ? ORDER BY id LIMIT ?)`, last)
			res.Turns += n
			if err != nil {
				return res, fmt.Errorf("store: prune turns beyond %d: %w", r.MaxTurns, err)
			}
		}
	}
	// A chunk in use by a remaining turn was last used at or after that
	// turn's creation, so at or after the oldest remaining turn's.
	n, err := db.deleteBatches(ctx, `DELETE FROM trace_chunks WHERE hash IN
		(SELECT hash FROM trace_chunks
		 WHERE last_used < COALESCE((SELECT MIN(created_at) FROM turns), '9999') LIMIT ?)`)
	res.Chunks = n
	if err != nil {
		return res, fmt.Errorf("store: prune trace chunks: %w", err)
	}
	if err := db.Compact(ctx); err != nil {
		return res, err
	}
	if res.SizeAfter, err = db.size(ctx); err != nil {
		return res, fmt.Errorf("store: prune turns: %w", err)
	}
	return res, nil
}

// deleteBatches runs a delete whose last parameter is the batch size until
// it deletes less than a batch, each batch its own write.
func (db *DB) deleteBatches(ctx context.Context, query string, args ...any) (int64, error) {
	var total int64
	for {
		res, err := db.exec(ctx, query, append(args, pruneBatch)...)
		if err != nil {
			return total, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, err
		}
		total += n
		if n < pruneBatch {
			return total, nil
		}
	}
}

// Compact returns the database's free pages to the file system: an
// incremental vacuum moves them to the end of the file and a WAL
// checkpoint truncates the file (and the log) there.
func (db *DB) Compact(ctx context.Context) error {
	if _, err := db.exec(ctx, `PRAGMA incremental_vacuum`); err != nil {
		return fmt.Errorf("store: incremental vacuum: %w", err)
	}
	// Outside a transaction, on the write connection (the pool holds one,
	// so this waits for the writer rather than contending with it).
	var busy, logged, checkpointed int
	if err := db.w.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logged, &checkpointed); err != nil {
		return fmt.Errorf("store: checkpoint: %w", err)
	}
	return nil
}

// size is the database size in bytes: its page count times the page size.
func (db *DB) size(ctx context.Context) (int64, error) {
	var pages, size int64
	err := db.r.QueryRowContext(ctx, `SELECT p.page_count, s.page_size
		FROM pragma_page_count() p, pragma_page_size() s`).Scan(&pages, &size)
	return pages * size, err
}
