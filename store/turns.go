package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/docent-hq/docent"
)

// CreateTurn stores a question and its answer with the full trace (and,
// for a failed turn, its error text in a column of its own). It sets
// t.ID, and t.CreatedAt to now when it is zero. The total latency and the
// per-stage latencies (milliseconds, summed by stage name) are stored in
// their own columns too, for the console's aggregates.
func (db *DB) CreateTurn(ctx context.Context, t *docent.Turn) error {
	if t.CreatedAt.IsZero() {
		t.CreatedAt = db.now().UTC()
	}
	filter, err := json.Marshal(t.Question.Filter)
	if err != nil {
		return fmt.Errorf("store: create turn: %w", err)
	}
	citations, err := json.Marshal(t.Answer.Citations)
	if err != nil {
		return fmt.Errorf("store: create turn: %w", err)
	}
	trace, chunks, err := encodeTrace(t.Answer.Trace)
	if err != nil {
		return fmt.Errorf("store: create turn: %w", err)
	}
	var total time.Duration
	stages := make(map[string]float64, len(t.Answer.Trace.Stages))
	for _, s := range t.Answer.Trace.Stages {
		total += s.Duration
		stages[s.Name] += ms(s.Duration)
	}
	stagesJSON, err := json.Marshal(stages)
	if err != nil {
		return fmt.Errorf("store: create turn: %w", err)
	}
	q := t.Question
	created := formatTime(t.CreatedAt)
	var id int64
	err = db.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := putChunks(ctx, tx, chunks, created); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO turns (question, platform, channel, thread, user, filter,
				status, answer, citations, trace_z, latency_ms, stages_ms, error, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			q.Text, q.Platform, q.Channel, q.Thread, q.User, string(filter),
			string(t.Answer.Status), t.Answer.Text, string(citations), trace, ms(total), string(stagesJSON),
			t.Answer.Trace.Error, created)
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return fmt.Errorf("store: create turn: %w", err)
	}
	t.ID = id
	return nil
}

// SetTurnDelivery records whether a chat turn's reply was posted, and
// the platform's error when it was not. It returns ErrNotFound for an
// unknown ID.
func (db *DB) SetTurnDelivery(ctx context.Context, id int64, d docent.Delivery, errText string) error {
	res, err := db.exec(ctx, `UPDATE turns SET delivery = ?, delivery_error = ? WHERE id = ?`, string(d), errText, id)
	if err != nil {
		return fmt.Errorf("store: turn %d delivery: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: turn %d delivery: %w", id, ErrNotFound)
	}
	return nil
}

// ms converts a duration to fractional milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

const turnColumns = `id, question, platform, channel, thread, user, filter, status, answer, citations, trace, trace_z, created_at,
	delivery, delivery_error`

// Turn returns the turn with the given ID, or ErrNotFound.
func (db *DB) Turn(ctx context.Context, id int64) (docent.Turn, error) {
	row, err := scanTurn(db.r.QueryRowContext(ctx, `SELECT `+turnColumns+` FROM turns WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return docent.Turn{}, fmt.Errorf("store: turn %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return docent.Turn{}, fmt.Errorf("store: turn %d: %w", id, err)
	}
	turns, err := db.turnsOf(ctx, []turnRow{row})
	if err != nil {
		return docent.Turn{}, fmt.Errorf("store: turn %d: %w", id, err)
	}
	return turns[0], nil
}

// TurnFilter selects turns for ListTurns. Zero fields do not restrict.
type TurnFilter struct {
	// Status keeps turns answered with this status.
	Status docent.Status
	// Platform keeps turns asked on this platform.
	Platform string
	// Channel and Thread keep the turns of one conversation.
	Channel, Thread string
	// Failed keeps only turns that failed with an error.
	Failed bool
	// Undelivered keeps only chat turns whose reply could not be posted.
	Undelivered bool
	// Since keeps turns created at or after it; Until, before it.
	Since, Until time.Time
	// Limit caps the result (default 50); Offset skips that many first.
	Limit, Offset int
}

// ListTurns returns the turns matching f, newest first.
func (db *DB) ListTurns(ctx context.Context, f TurnFilter) ([]docent.Turn, error) {
	var where []string
	var args []any
	if f.Status != "" {
		where = append(where, "status = ?")
		args = append(args, string(f.Status))
	}
	if f.Platform != "" {
		where = append(where, "platform = ?")
		args = append(args, f.Platform)
	}
	if f.Channel != "" {
		where = append(where, "channel = ?")
		args = append(args, f.Channel)
	}
	if f.Thread != "" {
		where = append(where, "thread = ?")
		args = append(args, f.Thread)
	}
	if f.Failed {
		where = append(where, "error != ''")
	}
	if f.Undelivered {
		where = append(where, "delivery = 'failed'")
	}
	if !f.Since.IsZero() {
		where = append(where, "created_at >= ?")
		args = append(args, formatTime(f.Since))
	}
	if !f.Until.IsZero() {
		where = append(where, "created_at < ?")
		args = append(args, formatTime(f.Until))
	}
	q := `SELECT ` + turnColumns + ` FROM turns`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?"
	args = append(args, limitOr(f.Limit, 50), max(f.Offset, 0))
	rows, err := queryList(ctx, db.r, q, args, scanTurn)
	if err != nil {
		return nil, fmt.Errorf("store: list turns: %w", err)
	}
	out, err := db.turnsOf(ctx, rows)
	if err != nil {
		return nil, fmt.Errorf("store: list turns: %w", err)
	}
	return out, nil
}

// CountTurnsByStatus returns how many turns have each status.
func (db *DB) CountTurnsByStatus(ctx context.Context) (map[docent.Status]int, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT status, COUNT(*) FROM turns GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("store: count turns: %w", err)
	}
	defer rows.Close()
	out := make(map[docent.Status]int)
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return nil, fmt.Errorf("store: count turns: %w", err)
		}
		out[docent.Status(s)] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: count turns: %w", err)
	}
	return out, nil
}

// TurnCount is how many stored turns share a platform and a status.
type TurnCount struct {
	Platform string
	Status   docent.Status
	N        int
}

// CountTurnsByPlatform returns how many turns each platform has with
// each status (what docent_turns_total counts).
func (db *DB) CountTurnsByPlatform(ctx context.Context) ([]TurnCount, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT platform, status, COUNT(*) FROM turns GROUP BY platform, status ORDER BY platform, status`)
	if err != nil {
		return nil, fmt.Errorf("store: count turns: %w", err)
	}
	defer rows.Close()
	var out []TurnCount
	for rows.Next() {
		var c TurnCount
		if err := rows.Scan(&c.Platform, &c.Status, &c.N); err != nil {
			return nil, fmt.Errorf("store: count turns: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: count turns: %w", err)
	}
	return out, nil
}

// turnRow is a scanned turn whose candidates' chunks, when chunks is set,
// are still to be read from trace_chunks.
type turnRow struct {
	turn   docent.Turn
	chunks []string
}

// turnsOf completes scanned rows with their trace chunks.
func (db *DB) turnsOf(ctx context.Context, rows []turnRow) ([]docent.Turn, error) {
	out := make([]docent.Turn, len(rows))
	pending := map[int][]string{}
	for i, r := range rows {
		out[i] = r.turn
		if len(r.chunks) > 0 {
			pending[i] = r.chunks
		}
	}
	if err := db.fillChunks(ctx, out, pending); err != nil {
		return nil, err
	}
	return out, nil
}

func scanTurn(s scanner) (turnRow, error) {
	var t docent.Turn
	var filter, status, citations, trace string
	var traceZ []byte
	var created sql.NullString
	if err := s.Scan(&t.ID, &t.Question.Text, &t.Question.Platform, &t.Question.Channel, &t.Question.Thread,
		&t.Question.User, &filter, &status, &t.Answer.Text, &citations, &trace, &traceZ, &created,
		&t.Delivery, &t.DeliveryError); err != nil {
		return turnRow{}, err
	}
	t.Answer.Status = docent.Status(status)
	if err := json.Unmarshal([]byte(filter), &t.Question.Filter); err != nil {
		return turnRow{}, fmt.Errorf("filter of turn %d: %w", t.ID, err)
	}
	if err := json.Unmarshal([]byte(citations), &t.Answer.Citations); err != nil {
		return turnRow{}, fmt.Errorf("citations of turn %d: %w", t.ID, err)
	}
	var chunks []string
	if traceZ != nil {
		st, err := decodeTrace(traceZ)
		if err != nil {
			return turnRow{}, fmt.Errorf("trace of turn %d: %w", t.ID, err)
		}
		t.Answer.Trace, chunks = st.Trace, st.Chunks
	} else if err := json.Unmarshal([]byte(trace), &t.Answer.Trace); err != nil {
		// A turn stored before compact traces keeps its trace as JSON text.
		return turnRow{}, fmt.Errorf("trace of turn %d: %w", t.ID, err)
	}
	var err error
	t.CreatedAt, err = parseTime(created)
	return turnRow{turn: t, chunks: chunks}, err
}
