package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// AddSynonym stores a synonym entry (offline.Synonyms format) that by
// added from the console.
func (db *DB) AddSynonym(ctx context.Context, entry, by string) error {
	if _, err := db.cexec(ctx, `INSERT INTO synonyms (entry, added_by, added_at) VALUES (?, ?, ?)`, entry, by, db.stamp()); err != nil {
		return fmt.Errorf("store: add synonym: %w", err)
	}
	return nil
}

// ListSynonyms returns the stored synonym entries, oldest first.
func (db *DB) ListSynonyms(ctx context.Context) ([]string, error) {
	out, err := queryList(ctx, db.creader(), `SELECT entry FROM synonyms ORDER BY id`, nil, func(s scanner) (string, error) {
		var e string
		return e, s.Scan(&e)
	})
	if err != nil {
		return nil, fmt.Errorf("store: list synonyms: %w", err)
	}
	return out, nil
}

// SetSetting stores value under key (replacing it), as set by by.
func (db *DB) SetSetting(ctx context.Context, key, value, by string) error {
	_, err := db.cexec(ctx, `INSERT INTO settings (key, value, updated_by, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
		key, value, by, db.stamp())
	if err != nil {
		return fmt.Errorf("store: setting %s: %w", key, err)
	}
	return nil
}

// Setting returns the value stored under key, and false when there is
// none.
func (db *DB) Setting(ctx context.Context, key string) (string, bool, error) {
	var v string
	err := db.creader().QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("store: setting %s: %w", key, err)
	}
	return v, true, nil
}
