package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/docent-hq/docent"
)

// CreateFeedback stores a rating of a turn and sets f.ID, and f.CreatedAt
// to now when it is zero. It returns ErrNotFound when the turn does not
// exist, and an error for a rating other than helpful or not_helpful.
func (db *DB) CreateFeedback(ctx context.Context, f *docent.Feedback) error {
	if f.Rating != docent.RatingHelpful && f.Rating != docent.RatingNotHelpful {
		return fmt.Errorf("store: create feedback: unknown rating %q", f.Rating)
	}
	if f.CreatedAt.IsZero() {
		f.CreatedAt = db.now().UTC()
	}
	var exists int
	err := db.r.QueryRowContext(ctx, `SELECT 1 FROM turns WHERE id = ?`, f.TurnID).Scan(&exists)
	if err == sql.ErrNoRows {
		return fmt.Errorf("store: create feedback: turn %d: %w", f.TurnID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("store: create feedback: %w", err)
	}
	res, err := db.exec(ctx, `INSERT INTO feedback (turn_id, rating, reason, platform, user, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`, f.TurnID, string(f.Rating), f.Reason, f.Platform, f.User, formatTime(f.CreatedAt))
	if err != nil {
		return fmt.Errorf("store: create feedback: %w", err)
	}
	if f.ID, err = res.LastInsertId(); err != nil {
		return fmt.Errorf("store: create feedback: %w", err)
	}
	return nil
}

// TurnFeedback returns the feedback on a turn, oldest first.
func (db *DB) TurnFeedback(ctx context.Context, turnID int64) ([]docent.Feedback, error) {
	out, err := queryList(ctx, db.r, `SELECT id, turn_id, rating, reason, platform, user, created_at
		FROM feedback WHERE turn_id = ? ORDER BY created_at, id`, []any{turnID}, scanFeedback)
	if err != nil {
		return nil, fmt.Errorf("store: feedback of turn %d: %w", turnID, err)
	}
	return out, nil
}

func scanFeedback(s scanner) (docent.Feedback, error) {
	var f docent.Feedback
	var rating string
	var created sql.NullString
	if err := s.Scan(&f.ID, &f.TurnID, &rating, &f.Reason, &f.Platform, &f.User, &created); err != nil {
		return f, err
	}
	f.Rating = docent.Rating(rating)
	var err error
	f.CreatedAt, err = parseTime(created)
	return f, err
}
