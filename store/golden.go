package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/docent-hq/docent"
)

const goldenColumns = `id, position, question, kind, expect, facts, covered, uncovered, source, from_turn, created_at, updated_at`

// ListGolden returns the golden set in order.
func (db *DB) ListGolden(ctx context.Context) ([]docent.GoldenQuestion, error) {
	out, err := queryList(ctx, db.creader(), `SELECT `+goldenColumns+` FROM golden_questions ORDER BY position, id`, nil, scanGolden)
	if err != nil {
		return nil, fmt.Errorf("store: list golden: %w", err)
	}
	return out, nil
}

// Golden returns one golden question, or ErrNotFound.
func (db *DB) Golden(ctx context.Context, id string) (docent.GoldenQuestion, error) {
	q, err := scanGolden(db.creader().QueryRowContext(ctx, `SELECT `+goldenColumns+` FROM golden_questions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return q, fmt.Errorf("store: golden %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return q, fmt.Errorf("store: golden %q: %w", id, err)
	}
	return q, nil
}

// PutGolden inserts q (last in the set) or, when its ID exists, replaces
// its content and keeps its position. The ID is required.
func (db *DB) PutGolden(ctx context.Context, q docent.GoldenQuestion) error {
	if strings.TrimSpace(q.ID) == "" {
		return errors.New("store: put golden: id is required")
	}
	err := db.write(ctx, func(ctx context.Context, tx *sql.Tx) error { return putGolden(ctx, tx, q, db.stamp()) })
	if err != nil {
		return fmt.Errorf("store: put golden %q: %w", q.ID, err)
	}
	return nil
}

func putGolden(ctx context.Context, tx *sql.Tx, q docent.GoldenQuestion, now string) error {
	expect, err := json.Marshal(nonNil(q.Expect))
	if err != nil {
		return err
	}
	facts, err := marshalList(q.Facts)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO golden_questions (id, position, question, kind, expect, facts, covered,
			uncovered, source, from_turn, created_at, updated_at)
		VALUES (?, (SELECT COALESCE(MAX(position), 0) + 1 FROM golden_questions), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET question = excluded.question, kind = excluded.kind, expect = excluded.expect,
			facts = excluded.facts, covered = excluded.covered, uncovered = excluded.uncovered,
			source = excluded.source, updated_at = excluded.updated_at`,
		q.ID, q.Question, q.Kind, string(expect), facts, q.Covered, q.Uncovered, q.Source, q.FromTurn, now, now)
	return err
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// ImportGolden writes qs in one transaction, in their order: with replace
// the set becomes exactly qs; otherwise entries with a known ID are
// updated in place and new ones appended.
func (db *DB) ImportGolden(ctx context.Context, qs []docent.GoldenQuestion, replace bool) error {
	now := db.stamp()
	err := db.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if replace {
			if _, err := tx.ExecContext(ctx, `DELETE FROM golden_questions`); err != nil {
				return err
			}
		}
		for _, q := range qs {
			if strings.TrimSpace(q.ID) == "" {
				return errors.New("question without id")
			}
			if err := putGolden(ctx, tx, q, now); err != nil {
				return fmt.Errorf("%s: %w", q.ID, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: import golden: %w", err)
	}
	return nil
}

// DeleteGolden removes a golden question; ErrNotFound when there is none.
func (db *DB) DeleteGolden(ctx context.Context, id string) error {
	res, err := db.cexec(ctx, `DELETE FROM golden_questions WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("store: delete golden %q: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: delete golden %q: %w", id, ErrNotFound)
	}
	return nil
}

func scanGolden(s scanner) (docent.GoldenQuestion, error) {
	var q docent.GoldenQuestion
	var expect, facts string
	var created, updated sql.NullString
	if err := s.Scan(&q.ID, &q.Position, &q.Question, &q.Kind, &expect, &facts, &q.Covered, &q.Uncovered,
		&q.Source, &q.FromTurn, &created, &updated); err != nil {
		return q, err
	}
	if err := json.Unmarshal([]byte(expect), &q.Expect); err != nil {
		return q, fmt.Errorf("expect of %q: %w", q.ID, err)
	}
	if len(q.Expect) == 0 {
		q.Expect = nil
	}
	if err := unmarshalList(facts, &q.Facts); err != nil {
		return q, fmt.Errorf("facts of %q: %w", q.ID, err)
	}
	var err error
	if q.CreatedAt, err = parseTime(created); err != nil {
		return q, err
	}
	q.UpdatedAt, err = parseTime(updated)
	return q, err
}

// StartGoldenRun records a run that starts now and sets r.ID, StartedAt and Status.
func (db *DB) StartGoldenRun(ctx context.Context, r *docent.GoldenRun) error {
	r.StartedAt = db.now().UTC()
	r.Status = "running"
	res, err := db.cexec(ctx, `INSERT INTO golden_runs (status, started_at, started_by, config, questions)
		VALUES ('running', ?, ?, ?, ?)`, formatTime(r.StartedAt), r.StartedBy, r.Config, r.Questions)
	if err != nil {
		return fmt.Errorf("store: start golden run: %w", err)
	}
	if r.ID, err = res.LastInsertId(); err != nil {
		return fmt.Errorf("store: start golden run: %w", err)
	}
	return nil
}

// FinishGoldenRun records the outcome of run id and its rows in one
// transaction: a run is either still running (or abandoned) or complete
// with every row. errText non-empty marks it failed.
func (db *DB) FinishGoldenRun(ctx context.Context, id int64, report json.RawMessage, rows []docent.GoldenRunRow, errText string) error {
	status := "ok"
	if errText != "" {
		status = "failed"
	}
	if len(report) == 0 {
		report = json.RawMessage("{}")
	}
	err := db.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE golden_runs SET status = ?, finished_at = ?, report = ?, error = ?
			WHERE id = ? AND status = 'running'`, status, db.stamp(), string(report), errText, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO golden_run_rows (run_id, position, question_id, question, kind,
			status, pass, first_rank, ranked, row, expect, turn_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, r := range rows {
			ranked, err := marshalList(r.Ranked)
			if err != nil {
				return err
			}
			expect, err := marshalList(r.Expect)
			if err != nil {
				return err
			}
			row := r.Row
			if len(row) == 0 {
				row = json.RawMessage("{}")
			}
			if _, err := stmt.ExecContext(ctx, id, r.Position, r.QuestionID, r.Question, r.Kind, r.Status,
				r.Pass, r.FirstRank, ranked, string(row), expect, r.TurnID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: finish golden run %d: %w", id, err)
	}
	return nil
}

// AbandonGoldenRuns marks runs still recorded as running as failed; call
// it at startup, when no run of this process can be going on.
func (db *DB) AbandonGoldenRuns(ctx context.Context) (int64, error) {
	res, err := db.cexec(ctx, `UPDATE golden_runs SET status = 'failed', finished_at = ?,
		error = 'abandoned: the process stopped during the run' WHERE status = 'running'`, db.stamp())
	if err != nil {
		return 0, fmt.Errorf("store: abandon golden runs: %w", err)
	}
	return res.RowsAffected()
}

const goldenRunColumns = `id, status, started_at, finished_at, started_by, config, questions, report, error, calibration`

// ListGoldenRuns returns the latest runs, newest first (limit defaults to 50).
func (db *DB) ListGoldenRuns(ctx context.Context, limit int) ([]docent.GoldenRun, error) {
	out, err := queryList(ctx, db.creader(), `SELECT `+goldenRunColumns+` FROM golden_runs ORDER BY id DESC LIMIT ?`,
		[]any{limitOr(limit, 50)}, scanGoldenRun)
	if err != nil {
		return nil, fmt.Errorf("store: list golden runs: %w", err)
	}
	return out, nil
}

// GoldenRunByID returns one run, or ErrNotFound.
func (db *DB) GoldenRunByID(ctx context.Context, id int64) (docent.GoldenRun, error) {
	r, err := scanGoldenRun(db.creader().QueryRowContext(ctx, `SELECT `+goldenRunColumns+` FROM golden_runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("store: golden run %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("store: golden run %d: %w", id, err)
	}
	return r, nil
}

// SetCalibration stores what run id fitted.
func (db *DB) SetCalibration(ctx context.Context, id int64, fit json.RawMessage) error {
	res, err := db.cexec(ctx, `UPDATE golden_runs SET calibration = ? WHERE id = ?`, string(fit), id)
	if err != nil {
		return fmt.Errorf("store: golden run %d: calibration: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: golden run %d: %w", id, ErrNotFound)
	}
	return nil
}

// GoldenRunRows returns the rows of run id in set order.
func (db *DB) GoldenRunRows(ctx context.Context, id int64) ([]docent.GoldenRunRow, error) {
	out, err := queryList(ctx, db.creader(), `SELECT position, question_id, question, kind, status, pass, first_rank, ranked, row,
		expect, turn_id FROM golden_run_rows WHERE run_id = ? ORDER BY position`, []any{id}, func(s scanner) (docent.GoldenRunRow, error) {
		var r docent.GoldenRunRow
		var ranked, row, expect string
		if err := s.Scan(&r.Position, &r.QuestionID, &r.Question, &r.Kind, &r.Status, &r.Pass, &r.FirstRank, &ranked, &row,
			&expect, &r.TurnID); err != nil {
			return r, err
		}
		r.Row = json.RawMessage(row)
		if err := unmarshalList(expect, &r.Expect); err != nil {
			return r, err
		}
		err := unmarshalList(ranked, &r.Ranked)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: rows of golden run %d: %w", id, err)
	}
	return out, nil
}

func scanGoldenRun(s scanner) (docent.GoldenRun, error) {
	var r docent.GoldenRun
	var started, finished sql.NullString
	var report, calibration string
	if err := s.Scan(&r.ID, &r.Status, &started, &finished, &r.StartedBy, &r.Config, &r.Questions, &report, &r.Error, &calibration); err != nil {
		return r, err
	}
	r.Report = json.RawMessage(report)
	if calibration != "" {
		r.Calibration = json.RawMessage(calibration)
	}
	var err error
	if r.StartedAt, err = parseTime(started); err != nil {
		return r, err
	}
	r.FinishedAt, err = parseTime(finished)
	return r, err
}
