package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/docent-hq/docent"
)

// MarkEvent records that a platform delivered an event and reports
// whether it is new. A redelivery (the same platform and event ID, even
// after a restart) returns false, so the bot answers each event once.
func (db *DB) MarkEvent(ctx context.Context, platform, eventID string) (bool, error) {
	res, err := db.exec(ctx, `INSERT INTO bot_events (platform, event_id, received_at) VALUES (?, ?, ?)
		ON CONFLICT (platform, event_id) DO NOTHING`, platform, eventID, db.stamp())
	if err != nil {
		return false, fmt.Errorf("store: mark event: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: mark event: %w", err)
	}
	return n == 1, nil
}

// PruneEvents forgets events received before t (platforms redeliver for
// minutes, not days) and returns how many it removed.
func (db *DB) PruneEvents(ctx context.Context, before time.Time) (int64, error) {
	res, err := db.exec(ctx, `DELETE FROM bot_events WHERE received_at < ?`, formatTime(before))
	if err != nil {
		return 0, fmt.Errorf("store: prune events: %w", err)
	}
	return res.RowsAffected()
}

// CreateHandoff stores a new handoff (State requested) and sets h.ID,
// and h.RequestedAt to now when it is zero.
func (db *DB) CreateHandoff(ctx context.Context, h *docent.Handoff) error {
	if h.RequestedAt.IsZero() {
		h.RequestedAt = db.now().UTC()
	}
	if h.State == "" {
		h.State = docent.HandoffRequested
	}
	res, err := db.exec(ctx, `INSERT INTO handoffs (turn_id, platform, channel, thread, question, state,
			requested_by, requested_at, escalation_ref)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, h.TurnID, h.Platform, h.Channel, h.Thread, h.Question, string(h.State),
		h.RequestedBy, formatTime(h.RequestedAt), h.EscalationRef)
	if err != nil {
		return fmt.Errorf("store: create handoff: %w", err)
	}
	if h.ID, err = res.LastInsertId(); err != nil {
		return fmt.Errorf("store: create handoff: %w", err)
	}
	return nil
}

// UpdateHandoff writes h's state, people, times, escalation reference,
// last reply and the question asked again. It returns ErrNotFound for an unknown ID.
func (db *DB) UpdateHandoff(ctx context.Context, h docent.Handoff) error {
	res, err := db.exec(ctx, `UPDATE handoffs SET state = ?, claimed_by = ?, resolved_by = ?,
			claimed_at = ?, resolved_at = ?, escalation_ref = ?, last_reply_by = ?, last_reply = ?, asked_again = ?
		WHERE id = ?`, string(h.State), h.ClaimedBy, h.ResolvedBy, formatTime(h.ClaimedAt), formatTime(h.ResolvedAt),
		h.EscalationRef, h.LastReplyBy, h.LastReply, h.AskedAgain, h.ID)
	if err != nil {
		return fmt.Errorf("store: update handoff %d: %w", h.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: update handoff %d: %w", h.ID, ErrNotFound)
	}
	return nil
}

const handoffColumns = `id, turn_id, platform, channel, thread, question, state, requested_by, claimed_by, resolved_by,
	requested_at, claimed_at, resolved_at, escalation_ref, last_reply_by, last_reply, asked_again`

// Handoff returns the handoff with the given ID, or ErrNotFound.
func (db *DB) Handoff(ctx context.Context, id int64) (docent.Handoff, error) {
	h, err := scanHandoff(db.r.QueryRowContext(ctx, `SELECT `+handoffColumns+` FROM handoffs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return h, fmt.Errorf("store: handoff %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return h, fmt.Errorf("store: handoff %d: %w", id, err)
	}
	return h, nil
}

// ThreadHandoff returns the latest handoff of a conversation; ok is
// false when it was never handed off.
func (db *DB) ThreadHandoff(ctx context.Context, platform, channel, thread string) (h docent.Handoff, ok bool, err error) {
	h, err = scanHandoff(db.r.QueryRowContext(ctx, `SELECT `+handoffColumns+` FROM handoffs
		WHERE platform = ? AND channel = ? AND thread = ? ORDER BY id DESC LIMIT 1`, platform, channel, thread))
	if errors.Is(err, sql.ErrNoRows) {
		return h, false, nil
	}
	if err != nil {
		return h, false, fmt.Errorf("store: handoff of %s %s/%s: %w", platform, channel, thread, err)
	}
	return h, true, nil
}

// ThreadTurns returns the latest limit turns of a conversation, oldest
// first (the order a follow-up reads them in).
func (db *DB) ThreadTurns(ctx context.Context, platform, channel, thread string, limit int) ([]docent.Turn, error) {
	turns, err := db.ListTurns(ctx, TurnFilter{Platform: platform, Channel: channel, Thread: thread, Limit: limit})
	if err != nil {
		return nil, err
	}
	slices.Reverse(turns)
	return turns, nil
}

// HandoffFilter selects handoffs for ListHandoffs. Zero fields do not restrict.
type HandoffFilter struct {
	// State keeps handoffs in this state.
	State docent.HandoffState
	// Since keeps handoffs requested at or after it.
	Since time.Time
	// TurnID keeps the handoffs asked from this turn.
	TurnID int64
	// Limit caps the result (default 50); Offset skips that many first.
	Limit, Offset int
}

// ListHandoffs returns the handoffs matching f, newest first.
func (db *DB) ListHandoffs(ctx context.Context, f HandoffFilter) ([]docent.Handoff, error) {
	q := `SELECT ` + handoffColumns + ` FROM handoffs WHERE 1 = 1`
	var args []any
	if f.State != "" {
		q += ` AND state = ?`
		args = append(args, string(f.State))
	}
	if f.TurnID != 0 {
		q += ` AND turn_id = ?`
		args = append(args, f.TurnID)
	}
	if !f.Since.IsZero() {
		q += ` AND requested_at >= ?`
		args = append(args, formatTime(f.Since))
	}
	q += ` ORDER BY requested_at DESC, id DESC LIMIT ? OFFSET ?`
	args = append(args, limitOr(f.Limit, 50), max(f.Offset, 0))
	out, err := queryList(ctx, db.r, q, args, scanHandoff)
	if err != nil {
		return nil, fmt.Errorf("store: list handoffs: %w", err)
	}
	return out, nil
}

func scanHandoff(s scanner) (docent.Handoff, error) {
	var h docent.Handoff
	var state string
	var requested, claimed, resolved sql.NullString
	if err := s.Scan(&h.ID, &h.TurnID, &h.Platform, &h.Channel, &h.Thread, &h.Question, &state,
		&h.RequestedBy, &h.ClaimedBy, &h.ResolvedBy, &requested, &claimed, &resolved,
		&h.EscalationRef, &h.LastReplyBy, &h.LastReply, &h.AskedAgain); err != nil {
		return h, err
	}
	h.State = docent.HandoffState(state)
	var err error
	if h.RequestedAt, err = parseTime(requested); err != nil {
		return h, err
	}
	if h.ClaimedAt, err = parseTime(claimed); err != nil {
		return h, err
	}
	h.ResolvedAt, err = parseTime(resolved)
	return h, err
}

// CreateKnowledgeCandidate stores a person's resolving reply and sets
// k.ID, and k.CreatedAt to now when it is zero.
func (db *DB) CreateKnowledgeCandidate(ctx context.Context, k *docent.KnowledgeCandidate) error {
	if k.CreatedAt.IsZero() {
		k.CreatedAt = db.now().UTC()
	}
	res, err := db.exec(ctx, `INSERT INTO knowledge_candidates (handoff_id, turn_id, question, answer, author, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`, k.HandoffID, k.TurnID, k.Question, k.Answer, k.Author, formatTime(k.CreatedAt))
	if err != nil {
		return fmt.Errorf("store: create knowledge candidate: %w", err)
	}
	if k.ID, err = res.LastInsertId(); err != nil {
		return fmt.Errorf("store: create knowledge candidate: %w", err)
	}
	return nil
}

// ListKnowledgeCandidates returns the newest candidates first, at most limit (default 50).
func (db *DB) ListKnowledgeCandidates(ctx context.Context, limit int) ([]docent.KnowledgeCandidate, error) {
	return db.knowledgeCandidates(ctx, ``, []any{limitOr(limit, 50)})
}

// TurnKnowledgeCandidates returns the candidates resolving handoffs
// asked from the turn, newest first.
func (db *DB) TurnKnowledgeCandidates(ctx context.Context, turnID int64) ([]docent.KnowledgeCandidate, error) {
	return db.knowledgeCandidates(ctx, ` WHERE turn_id = ?`, []any{turnID, 50})
}

func (db *DB) knowledgeCandidates(ctx context.Context, where string, args []any) ([]docent.KnowledgeCandidate, error) {
	out, err := queryList(ctx, db.r, `SELECT id, handoff_id, turn_id, question, answer, author, created_at
		FROM knowledge_candidates`+where+` ORDER BY created_at DESC, id DESC LIMIT ?`, args,
		func(s scanner) (docent.KnowledgeCandidate, error) {
			var k docent.KnowledgeCandidate
			var created sql.NullString
			if err := s.Scan(&k.ID, &k.HandoffID, &k.TurnID, &k.Question, &k.Answer, &k.Author, &created); err != nil {
				return k, err
			}
			var err error
			k.CreatedAt, err = parseTime(created)
			return k, err
		})
	if err != nil {
		return nil, fmt.Errorf("store: list knowledge candidates: %w", err)
	}
	return out, nil
}
