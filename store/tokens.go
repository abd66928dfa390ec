package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/docent-hq/docent"
)

// cexec runs one write statement for the console's tables, through the
// writer.
func (db *DB) cexec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return db.exec(ctx, q, args...)
}

// creader is the connection pool the console's reads use.
func (db *DB) creader() *sql.DB { return db.r }

// CreateAPIToken stores t and sets its ID, and CreatedAt to now when zero.
// Name and Hash are required; a hash already stored is an error.
func (db *DB) CreateAPIToken(ctx context.Context, t *docent.APIToken) error {
	if t.Name == "" || t.Hash == "" {
		return errors.New("store: create api token: name and hash are required")
	}
	if t.CreatedAt.IsZero() {
		t.CreatedAt = db.now().UTC()
	}
	sources, err := marshalList(t.Scope.Sources)
	if err != nil {
		return fmt.Errorf("store: create api token: %w", err)
	}
	labels, err := marshalList(t.Scope.Labels)
	if err != nil {
		return fmt.Errorf("store: create api token: %w", err)
	}
	res, err := db.cexec(ctx, `INSERT INTO api_tokens (name, hash, prefix, rate_per_minute, scope_sources, scope_labels, created_by, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, t.Name, t.Hash, t.Prefix, t.RatePerMinute, sources, labels, t.CreatedBy, formatTime(t.CreatedAt))
	if err != nil {
		return fmt.Errorf("store: create api token: %w", err)
	}
	if t.ID, err = res.LastInsertId(); err != nil {
		return fmt.Errorf("store: create api token: %w", err)
	}
	return nil
}

const tokenColumns = `id, name, hash, prefix, rate_per_minute, scope_sources, scope_labels, created_by, created_at, last_used_at, revoked_at`

// APITokenByHash returns the token with this hash, revoked or not, or ErrNotFound.
func (db *DB) APITokenByHash(ctx context.Context, hash string) (docent.APIToken, error) {
	t, err := scanToken(db.creader().QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM api_tokens WHERE hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return t, fmt.Errorf("store: api token: %w", ErrNotFound)
	}
	if err != nil {
		return t, fmt.Errorf("store: api token: %w", err)
	}
	return t, nil
}

// ListAPITokens returns every token, newest first.
func (db *DB) ListAPITokens(ctx context.Context) ([]docent.APIToken, error) {
	out, err := queryList(ctx, db.creader(), `SELECT `+tokenColumns+` FROM api_tokens ORDER BY id DESC`, nil, scanToken)
	if err != nil {
		return nil, fmt.Errorf("store: list api tokens: %w", err)
	}
	return out, nil
}

// RevokeAPIToken revokes token id now. It returns ErrNotFound for an
// unknown token; revoking twice keeps the first time.
func (db *DB) RevokeAPIToken(ctx context.Context, id int64) error {
	res, err := db.cexec(ctx, `UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`, db.stamp(), id)
	if err != nil {
		return fmt.Errorf("store: revoke api token %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: revoke api token %d: %w", id, ErrNotFound)
	}
	return nil
}

// TouchAPIToken records that token id was accepted at t.
func (db *DB) TouchAPIToken(ctx context.Context, id int64, t time.Time) error {
	if _, err := db.cexec(ctx, `UPDATE api_tokens SET last_used_at = ? WHERE id = ?`, formatTime(t), id); err != nil {
		return fmt.Errorf("store: touch api token %d: %w", id, err)
	}
	return nil
}

func scanToken(s scanner) (docent.APIToken, error) {
	var t docent.APIToken
	var created, used, revoked sql.NullString
	var sources, labels string
	if err := s.Scan(&t.ID, &t.Name, &t.Hash, &t.Prefix, &t.RatePerMinute, &sources, &labels, &t.CreatedBy, &created, &used, &revoked); err != nil {
		return t, err
	}
	if err := unmarshalList(sources, &t.Scope.Sources); err != nil {
		return t, fmt.Errorf("scope sources of token %d: %w", t.ID, err)
	}
	if err := unmarshalList(labels, &t.Scope.Labels); err != nil {
		return t, fmt.Errorf("scope labels of token %d: %w", t.ID, err)
	}
	var err error
	if t.CreatedAt, err = parseTime(created); err != nil {
		return t, err
	}
	if t.LastUsedAt, err = parseTime(used); err != nil {
		return t, err
	}
	t.RevokedAt, err = parseTime(revoked)
	return t, err
}

// AckStale stores (or replaces) the acknowledgement of a.DocID; At defaults to now.
func (db *DB) AckStale(ctx context.Context, a docent.StaleAck) error {
	if a.DocID == "" || a.Until.IsZero() {
		return errors.New("store: ack stale: document and until are required")
	}
	if a.At.IsZero() {
		a.At = db.now().UTC()
	}
	_, err := db.cexec(ctx, `INSERT INTO stale_acks (doc_id, until, acked_by, acked_at, note) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (doc_id) DO UPDATE SET until = excluded.until, acked_by = excluded.acked_by,
			acked_at = excluded.acked_at, note = excluded.note`,
		a.DocID, formatTime(a.Until), a.By, formatTime(a.At), a.Note)
	if err != nil {
		return fmt.Errorf("store: ack stale %q: %w", a.DocID, err)
	}
	return nil
}

// UnackStale removes the acknowledgement of docID, if any.
func (db *DB) UnackStale(ctx context.Context, docID string) error {
	if _, err := db.cexec(ctx, `DELETE FROM stale_acks WHERE doc_id = ?`, docID); err != nil {
		return fmt.Errorf("store: unack stale %q: %w", docID, err)
	}
	return nil
}

// StaleAcks returns every acknowledgement still in force at now, by document.
func (db *DB) StaleAcks(ctx context.Context, now time.Time) (map[string]docent.StaleAck, error) {
	list, err := queryList(ctx, db.creader(), `SELECT doc_id, until, acked_by, acked_at, note FROM stale_acks WHERE until > ?`,
		[]any{formatTime(now)}, func(s scanner) (docent.StaleAck, error) {
			var a docent.StaleAck
			var until, at sql.NullString
			if err := s.Scan(&a.DocID, &until, &a.By, &at, &a.Note); err != nil {
				return a, err
			}
			var err error
			if a.Until, err = parseTime(until); err != nil {
				return a, err
			}
			a.At, err = parseTime(at)
			return a, err
		})
	if err != nil {
		return nil, fmt.Errorf("store: stale acks: %w", err)
	}
	out := make(map[string]docent.StaleAck, len(list))
	for _, a := range list {
		out[a.DocID] = a
	}
	return out, nil
}
