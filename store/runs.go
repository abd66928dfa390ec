package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/docent-hq/docent"
)

// StartRun records that a sync of source started now and returns its ID.
func (db *DB) StartRun(ctx context.Context, source string) (int64, error) {
	res, err := db.exec(ctx, `INSERT INTO sync_runs (source, started_at, status) VALUES (?, ?, 'running')`,
		source, db.stamp())
	if err != nil {
		return 0, fmt.Errorf("store: start run of %s: %w", source, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("store: start run of %s: %w", source, err)
	}
	return id, nil
}

// FinishRun records the outcome of run id: status failed when r.Err is set,
// ok otherwise. Finished defaults to now. It returns ErrNotFound for an
// unknown run.
func (db *DB) FinishRun(ctx context.Context, id int64, r docent.RunResult) error {
	status := docent.RunOK
	if r.Err != "" {
		status = docent.RunFailed
	}
	errs := []byte("[]")
	if len(r.Errors) > 0 {
		var err error
		if errs, err = json.Marshal(r.Errors); err != nil {
			return fmt.Errorf("store: finish run %d: %w", id, err)
		}
	}
	content, err := json.Marshal(r.Content)
	if err != nil {
		return fmt.Errorf("store: finish run %d: %w", id, err)
	}
	finished := formatTime(r.Finished)
	if finished == nil {
		finished = db.stamp()
	}
	res, err := db.exec(ctx, `UPDATE sync_runs SET finished_at = ?, status = ?, seen = ?, added = ?,
			updated = ?, unchanged = ?, deleted = ?, failed = ?, errors = ?, error = ?,
			requests = ?, retries = ?, rate_limited = ?, waited_ms = ?, content = ?
		WHERE id = ?`,
		finished, status, r.Seen, r.Added, r.Updated, r.Unchanged, r.Deleted, r.Failed, string(errs), r.Err,
		r.Requests, r.Retries, r.RateLimited, r.Waited.Milliseconds(), string(content), id)
	if err != nil {
		return fmt.Errorf("store: finish run %d: %w", id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("store: finish run %d: %w", id, ErrNotFound)
	}
	return nil
}

// AbandonRuns marks every run still recorded as running as failed: call it
// at startup, when no sync of this process can be running. It returns how
// many runs it marked.
func (db *DB) AbandonRuns(ctx context.Context) (int64, error) {
	res, err := db.exec(ctx, `UPDATE sync_runs SET status = 'failed', finished_at = ?,
		error = 'abandoned: the process stopped during the run' WHERE status = 'running'`, db.stamp())
	if err != nil {
		return 0, fmt.Errorf("store: abandon runs: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: abandon runs: %w", err)
	}
	return n, nil
}

const runColumns = `id, source, started_at, finished_at, status, seen, added, updated, unchanged, deleted, failed,
	errors, error, requests, retries, rate_limited, waited_ms, content`

// ListRuns returns the latest runs, newest first: of source, or of every
// source when source is "". limit defaults to 50.
func (db *DB) ListRuns(ctx context.Context, source string, limit int) ([]docent.SyncRun, error) {
	q := `SELECT ` + runColumns + ` FROM sync_runs`
	var args []any
	if source != "" {
		q += ` WHERE source = ?`
		args = append(args, source)
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, limitOr(limit, 50))
	out, err := queryList(ctx, db.r, q, args, scanRun)
	if err != nil {
		return nil, fmt.Errorf("store: list runs: %w", err)
	}
	return out, nil
}

// LastRun returns the latest run of source, or ErrNotFound.
func (db *DB) LastRun(ctx context.Context, source string) (docent.SyncRun, error) {
	r, err := scanRun(db.r.QueryRowContext(ctx, `SELECT `+runColumns+` FROM sync_runs
		WHERE source = ? ORDER BY id DESC LIMIT 1`, source))
	if errors.Is(err, sql.ErrNoRows) {
		return docent.SyncRun{}, fmt.Errorf("store: last run of %s: %w", source, ErrNotFound)
	}
	if err != nil {
		return docent.SyncRun{}, fmt.Errorf("store: last run of %s: %w", source, err)
	}
	return r, nil
}

func scanRun(s scanner) (docent.SyncRun, error) {
	var r docent.SyncRun
	var started, finished sql.NullString
	var errs, content string
	var waitedMS int64
	if err := s.Scan(&r.ID, &r.Source, &started, &finished, &r.Status, &r.Seen, &r.Added, &r.Updated,
		&r.Unchanged, &r.Deleted, &r.Failed, &errs, &r.Err, &r.Requests, &r.Retries, &r.RateLimited, &waitedMS, &content); err != nil {
		return r, err
	}
	if content != "" && content != "{}" {
		if err := json.Unmarshal([]byte(content), &r.Content); err != nil {
			return r, fmt.Errorf("content counts of run %d: %w", r.ID, err)
		}
	}
	r.Waited = time.Duration(waitedMS) * time.Millisecond
	var err error
	if r.Started, err = parseTime(started); err != nil {
		return r, err
	}
	if r.Finished, err = parseTime(finished); err != nil {
		return r, err
	}
	if errs != "" && errs != "[]" {
		if err := json.Unmarshal([]byte(errs), &r.Errors); err != nil {
			return r, fmt.Errorf("errors of run %d: %w", r.ID, err)
		}
	}
	return r, nil
}

// RunHealth returns, for source, when its last successful run finished
// (zero if none has) and how many runs have failed since (or ever, when
// none succeeded). Runs still running are not counted.
func (db *DB) RunHealth(ctx context.Context, source string) (lastOK time.Time, failures int, err error) {
	var finished sql.NullString
	var lastOKID sql.NullInt64
	err = db.r.QueryRowContext(ctx, `SELECT id, finished_at FROM sync_runs
		WHERE source = ? AND status = 'ok' ORDER BY id DESC LIMIT 1`, source).Scan(&lastOKID, &finished)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, 0, fmt.Errorf("store: run health of %s: %w", source, err)
	}
	if lastOK, err = parseTime(finished); err != nil {
		return time.Time{}, 0, fmt.Errorf("store: run health of %s: %w", source, err)
	}
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM sync_runs
		WHERE source = ? AND status = 'failed' AND id > ?`, source, lastOKID.Int64).Scan(&failures); err != nil {
		return time.Time{}, 0, fmt.Errorf("store: run health of %s: %w", source, err)
	}
	return lastOK, failures, nil
}
