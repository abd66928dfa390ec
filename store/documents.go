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

const docColumns = `id, source, path, url, title, space, labels, owner, author, content_hash,
	updated_at, first_seen, last_seen, deleted_at, chunk_ids, stale`

// Documents returns the live (not deleted) documents of source, by ID.
func (db *DB) Documents(ctx context.Context, source string) (map[string]docent.DocRecord, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+docColumns+` FROM documents
		WHERE source = ? AND deleted_at IS NULL`, source)
	if err != nil {
		return nil, fmt.Errorf("store: documents of %s: %w", source, err)
	}
	defer rows.Close()
	out := make(map[string]docent.DocRecord)
	for rows.Next() {
		rec, err := scanDoc(rows)
		if err != nil {
			return nil, fmt.Errorf("store: documents of %s: %w", source, err)
		}
		out[rec.ID] = rec
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: documents of %s: %w", source, err)
	}
	return out, nil
}

// Document returns one document record, live or deleted, or ErrNotFound.
func (db *DB) Document(ctx context.Context, id string) (docent.DocRecord, error) {
	row := db.r.QueryRowContext(ctx, `SELECT `+docColumns+` FROM documents WHERE id = ?`, id)
	rec, err := scanDoc(row)
	if errors.Is(err, sql.ErrNoRows) {
		return docent.DocRecord{}, fmt.Errorf("store: document %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return docent.DocRecord{}, fmt.Errorf("store: document %q: %w", id, err)
	}
	return rec, nil
}

// DocumentByURL returns the live document whose URL is url (compared
// without a #fragment, which citations add for a section), or
// ErrNotFound. When several live documents share the URL, the one with
// the smallest ID is returned.
func (db *DB) DocumentByURL(ctx context.Context, url string) (docent.DocRecord, error) {
	url, _, _ = strings.Cut(url, "#")
	row := db.r.QueryRowContext(ctx, `SELECT `+docColumns+` FROM documents
		WHERE url = ? AND deleted_at IS NULL ORDER BY id LIMIT 1`, url)
	rec, err := scanDoc(row)
	if errors.Is(err, sql.ErrNoRows) {
		return docent.DocRecord{}, fmt.Errorf("store: document at %q: %w", url, ErrNotFound)
	}
	if err != nil {
		return docent.DocRecord{}, fmt.Errorf("store: document at %q: %w", url, err)
	}
	return rec, nil
}

// PutDocument inserts or replaces the record rec.ID and marks it live
// (see PutDocuments).
func (db *DB) PutDocument(ctx context.Context, rec docent.DocRecord) error {
	return db.PutDocuments(ctx, []docent.DocRecord{rec})
}

// PutDocuments inserts or replaces the records and marks them live, in
// one transaction: all of them or, on error, none. FirstSeen is set when
// an ID is new (and kept otherwise), LastSeen always; the FirstSeen,
// LastSeen and DeletedAt fields of the records are ignored. The sync
// engine records each embedding batch's documents in one call, not one
// commit a page.
func (db *DB) PutDocuments(ctx context.Context, recs []docent.DocRecord) error {
	if len(recs) == 0 {
		return nil
	}
	type row struct {
		rec            docent.DocRecord
		labels, chunks string
	}
	rows := make([]row, len(recs))
	for i, rec := range recs {
		if rec.ID == "" || rec.Source == "" {
			return errors.New("store: put document: ID and Source are required")
		}
		labels, err := marshalList(rec.Labels)
		if err != nil {
			return fmt.Errorf("store: put document %q: %w", rec.ID, err)
		}
		chunks, err := marshalList(rec.ChunkIDs)
		if err != nil {
			return fmt.Errorf("store: put document %q: %w", rec.ID, err)
		}
		rows[i] = row{rec, labels, chunks}
	}
	now := db.stamp()
	err := db.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO documents (id, source, path, url, title, space, labels,
			owner, author, content_hash, updated_at, first_seen, last_seen, deleted_at, chunk_count, chunk_ids)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)
		ON CONFLICT (id) DO UPDATE SET source = excluded.source, path = excluded.path,
			url = excluded.url, title = excluded.title, space = excluded.space,
			labels = excluded.labels, owner = excluded.owner, author = excluded.author,
			content_hash = excluded.content_hash, updated_at = excluded.updated_at,
			last_seen = excluded.last_seen, deleted_at = NULL,
			chunk_count = excluded.chunk_count, chunk_ids = excluded.chunk_ids`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, r := range rows {
			rec := r.rec
			if _, err := stmt.ExecContext(ctx, rec.ID, rec.Source, rec.Path, rec.URL, rec.Title, rec.Space, r.labels,
				rec.Owner, rec.Author, rec.ContentHash, formatTime(rec.UpdatedAt), now, now,
				len(rec.ChunkIDs), r.chunks); err != nil {
				return fmt.Errorf("document %q: %w", rec.ID, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: put documents: %w", err)
	}
	return nil
}

// MarkDeleted marks the live documents among ids as deleted now and forgets
// their chunk IDs (the engine removed them from the index first). Unknown
// and already-deleted IDs are ignored.
func (db *DB) MarkDeleted(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	now := db.stamp()
	err := db.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `UPDATE documents
			SET deleted_at = ?, chunk_count = 0, chunk_ids = '[]'
			WHERE id = ? AND deleted_at IS NULL`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, id := range ids {
			if _, err := stmt.ExecContext(ctx, now, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: mark deleted: %w", err)
	}
	return nil
}

// DocumentsByID returns the records of the given IDs that the registry
// holds, live or deleted, by ID; unknown IDs are left out. It is a point
// read per ID: what the chat path's stale flags use.
func (db *DB) DocumentsByID(ctx context.Context, ids []string) (map[string]docent.DocRecord, error) {
	out := make(map[string]docent.DocRecord, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	q := `SELECT ` + docColumns + ` FROM documents WHERE id IN (?` + strings.Repeat(", ?", len(ids)-1) + `)`
	list, err := queryList(ctx, db.r, q, args, scanDoc)
	if err != nil {
		return nil, fmt.Errorf("store: documents by id: %w", err)
	}
	for _, rec := range list {
		out[rec.ID] = rec
	}
	return out, nil
}

// SetStaleStates stores the derived state of each document in states
// (by ID), in one transaction; documents not named keep theirs, unknown
// IDs are ignored. A zero state clears the document's.
func (db *DB) SetStaleStates(ctx context.Context, states map[string]docent.StaleState) error {
	if len(states) == 0 {
		return nil
	}
	enc := make(map[string]string, len(states))
	for id, st := range states {
		if st.After.IsZero() && st.MaxAgeDays == 0 && len(st.Findings) == 0 {
			enc[id] = ""
			continue
		}
		b, err := json.Marshal(st)
		if err != nil {
			return fmt.Errorf("store: set stale state of %q: %w", id, err)
		}
		enc[id] = string(b)
	}
	err := db.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `UPDATE documents SET stale = ? WHERE id = ?`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for id, v := range enc {
			if _, err := stmt.ExecContext(ctx, v, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: set stale states: %w", err)
	}
	return nil
}

// DocState selects documents by whether they are live.
type DocState string

// Document states for DocFilter.
const (
	// DocLive selects documents present at their source (the default).
	DocLive DocState = ""
	// DocDeleted selects documents gone from their source.
	DocDeleted DocState = "deleted"
	// DocAny selects both.
	DocAny DocState = "any"
)

// DocFilter selects documents for ListDocuments. Zero fields do not restrict.
type DocFilter struct {
	// Source keeps documents of this source.
	Source string
	// State keeps live, deleted or all documents; live by default.
	State DocState
	// UpdatedBefore keeps documents last changed at their source before this
	// time (stale documents).
	UpdatedBefore time.Time
	// Limit caps the result (default 100); Offset skips that many first.
	Limit, Offset int
}

// ListDocuments returns documents matching f, least recently updated first.
func (db *DB) ListDocuments(ctx context.Context, f DocFilter) ([]docent.DocRecord, error) {
	var where []string
	var args []any
	if f.Source != "" {
		where = append(where, "source = ?")
		args = append(args, f.Source)
	}
	switch f.State {
	case DocLive:
		where = append(where, "deleted_at IS NULL")
	case DocDeleted:
		where = append(where, "deleted_at IS NOT NULL")
	case DocAny:
	default:
		return nil, fmt.Errorf("store: list documents: unknown state %q", f.State)
	}
	if !f.UpdatedBefore.IsZero() {
		where = append(where, "updated_at < ?")
		args = append(args, formatTime(f.UpdatedBefore))
	}
	q := `SELECT ` + docColumns + ` FROM documents`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY updated_at, id LIMIT ? OFFSET ?"
	args = append(args, limitOr(f.Limit, 100), max(f.Offset, 0))
	out, err := queryList(ctx, db.r, q, args, scanDoc)
	if err != nil {
		return nil, fmt.Errorf("store: list documents: %w", err)
	}
	return out, nil
}

// Cursor returns the cursor stored for source, "" when there is none.
func (db *DB) Cursor(ctx context.Context, source string) (string, error) {
	var c string
	err := db.r.QueryRowContext(ctx, `SELECT cursor FROM source_state WHERE source = ?`, source).Scan(&c)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: cursor of %s: %w", source, err)
	}
	return c, nil
}

// SetCursor stores the cursor for source's next sync.
func (db *DB) SetCursor(ctx context.Context, source, cursor string) error {
	_, err := db.exec(ctx, `INSERT INTO source_state (source, cursor, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (source) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at`,
		source, cursor, db.stamp())
	if err != nil {
		return fmt.Errorf("store: set cursor of %s: %w", source, err)
	}
	return nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

func scanDoc(s scanner) (docent.DocRecord, error) {
	var rec docent.DocRecord
	var labels, chunks, stale string
	var updated, first, last, deleted sql.NullString
	if err := s.Scan(&rec.ID, &rec.Source, &rec.Path, &rec.URL, &rec.Title, &rec.Space, &labels,
		&rec.Owner, &rec.Author, &rec.ContentHash, &updated, &first, &last, &deleted, &chunks, &stale); err != nil {
		return rec, err
	}
	if stale != "" {
		if err := json.Unmarshal([]byte(stale), &rec.Stale); err != nil {
			return rec, fmt.Errorf("stale state of %q: %w", rec.ID, err)
		}
	}
	if err := unmarshalList(labels, &rec.Labels); err != nil {
		return rec, fmt.Errorf("labels of %q: %w", rec.ID, err)
	}
	if err := unmarshalList(chunks, &rec.ChunkIDs); err != nil {
		return rec, fmt.Errorf("chunk ids of %q: %w", rec.ID, err)
	}
	var err error
	for _, p := range []struct {
		dst *time.Time
		src sql.NullString
	}{{&rec.UpdatedAt, updated}, {&rec.FirstSeen, first}, {&rec.LastSeen, last}, {&rec.DeletedAt, deleted}} {
		if *p.dst, err = parseTime(p.src); err != nil {
			return rec, err
		}
	}
	return rec, nil
}

// marshalList encodes a string list as JSON, nil as "[]".
func marshalList(v []string) (string, error) {
	if len(v) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// unmarshalList decodes a JSON string list, leaving dst nil when empty.
func unmarshalList(s string, dst *[]string) error {
	if s == "" || s == "[]" || s == "null" {
		*dst = nil
		return nil
	}
	return json.Unmarshal([]byte(s), dst)
}

// queryList runs q with args and scans every row with scan, in order.
// Errors are returned unwrapped; callers add their own prefix.
func queryList[T any](ctx context.Context, db *sql.DB, q string, args []any, scan func(scanner) (T, error)) ([]T, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// limitOr returns limit, or def when limit is not positive.
func limitOr(limit, def int) int {
	if limit <= 0 {
		return def
	}
	return limit
}
