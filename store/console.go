package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/docent-hq/docent"
)

// TurnQuery selects turns for SearchTurns. Zero fields do not restrict.
type TurnQuery struct {
	// Status keeps turns with this outcome.
	Status docent.Status
	// Feedback keeps turns rated "helpful" or "not_helpful", or "none" for unrated.
	Feedback string
	// Platform and Channel keep turns asked there.
	Platform, Channel string
	// CitedSource keeps turns citing a document of this source; CitedDoc
	// turns citing this document.
	CitedSource, CitedDoc string
	// Text keeps turns whose question contains it (case-insensitive).
	Text string
	// Since and Until bound the creation time: [Since, Until).
	Since, Until time.Time
	// ExcludePlatform leaves out turns of this platform (golden runs).
	ExcludePlatform string
	// Misses keeps the misses inbox: not found, uncertain, failed,
	// rated not helpful or handed off, never small talk. Review is then "open" (not
	// reviewed, the default), "reviewed" or "all"; Assignee keeps one
	// person's.
	Misses   bool
	Review   string
	Assignee string
	// Limit caps the page (default 50); Offset skips that many first.
	Limit, Offset int
}

const summaryColumns = `t.id, t.question, t.platform, t.channel, t.user, t.status, t.error, t.citations, t.latency_ms, t.created_at,
	(SELECT COUNT(*) FROM feedback f WHERE f.turn_id = t.id AND f.rating = 'helpful'),
	(SELECT COUNT(*) FROM feedback f WHERE f.turn_id = t.id AND f.rating = 'not_helpful'),
	COALESCE((SELECT h.state FROM handoffs h WHERE h.turn_id = t.id ORDER BY h.id DESC LIMIT 1), ''),
	m.reviewed_at, COALESCE(m.reviewed_by, ''), COALESCE(m.assignee, ''), t.delivery,
	COALESCE((SELECT g.id FROM golden_questions g WHERE g.from_turn = t.id ORDER BY g.position LIMIT 1), '')`

// missCondition is what puts a turn in the misses inbox: not found,
// uncertain, failed, rated not helpful or handed off. Small talk (a
// greeting, thanks) never is, whatever its rating.
const missCondition = `(t.status != 'small_talk' AND (t.status IN ('not_found', 'uncertain', 'error') OR t.error != ''
	OR EXISTS (SELECT 1 FROM feedback f WHERE f.turn_id = t.id AND f.rating = 'not_helpful')
	OR EXISTS (SELECT 1 FROM handoffs h WHERE h.turn_id = t.id)))`

func (q TurnQuery) where() (string, []any) {
	var where []string
	var args []any
	add := func(cond string, a ...any) {
		where = append(where, cond)
		args = append(args, a...)
	}
	if q.Status != "" {
		add("t.status = ?", string(q.Status))
	}
	switch q.Feedback {
	case "helpful", "not_helpful":
		add("EXISTS (SELECT 1 FROM feedback f WHERE f.turn_id = t.id AND f.rating = ?)", q.Feedback)
	case "none":
		add("NOT EXISTS (SELECT 1 FROM feedback f WHERE f.turn_id = t.id)")
	}
	if q.Platform != "" {
		add("t.platform = ?", q.Platform)
	}
	if q.ExcludePlatform != "" {
		add("t.platform != ?", q.ExcludePlatform)
	}
	if q.Channel != "" {
		add("t.channel = ?", q.Channel)
	}
	if q.CitedSource != "" {
		add("EXISTS (SELECT 1 FROM json_each(t.citations) c WHERE json_extract(c.value, '$.doc_id') LIKE ? ESCAPE '\\')",
			likeEscape(q.CitedSource)+":%")
	}
	if q.CitedDoc != "" {
		add("EXISTS (SELECT 1 FROM json_each(t.citations) c WHERE json_extract(c.value, '$.doc_id') = ?)", q.CitedDoc)
	}
	if q.Text != "" {
		add("t.question LIKE ? ESCAPE '\\'", "%"+likeEscape(q.Text)+"%")
	}
	if !q.Since.IsZero() {
		add("t.created_at >= ?", formatTime(q.Since))
	}
	if !q.Until.IsZero() {
		add("t.created_at < ?", formatTime(q.Until))
	}
	if q.Misses {
		add(missCondition)
		switch q.Review {
		case "reviewed":
			add("m.reviewed_at IS NOT NULL")
		case "all":
		default:
			add("m.reviewed_at IS NULL")
		}
	}
	if q.Assignee != "" {
		add("m.assignee = ?", q.Assignee)
	}
	if len(where) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(where, " AND "), args
}

// likeEscape escapes LIKE's wildcards in s (with \ as the escape).
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// SearchTurns returns one page of the turns q selects, newest first, and
// how many it selects in all.
func (db *DB) SearchTurns(ctx context.Context, q TurnQuery) ([]docent.TurnSummary, int, error) {
	where, args := q.where()
	from := ` FROM turns t LEFT JOIN miss_reviews m ON m.turn_id = t.id` + where
	var total int
	if err := db.creader().QueryRowContext(ctx, `SELECT COUNT(*)`+from, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: search turns: %w", err)
	}
	page := append(append([]any(nil), args...), limitOr(q.Limit, 50), max(q.Offset, 0))
	out, err := queryList(ctx, db.creader(), `SELECT `+summaryColumns+from+` ORDER BY t.created_at DESC, t.id DESC LIMIT ? OFFSET ?`,
		page, scanSummary)
	if err != nil {
		return nil, 0, fmt.Errorf("store: search turns: %w", err)
	}
	return out, total, nil
}

// TurnSummaryByID returns the summary of one turn, or ErrNotFound.
func (db *DB) TurnSummaryByID(ctx context.Context, id int64) (docent.TurnSummary, error) {
	s, err := scanSummary(db.creader().QueryRowContext(ctx, `SELECT `+summaryColumns+
		` FROM turns t LEFT JOIN miss_reviews m ON m.turn_id = t.id WHERE t.id = ?`, id))
	if err == sql.ErrNoRows {
		return s, fmt.Errorf("store: turn %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return s, fmt.Errorf("store: turn %d: %w", id, err)
	}
	return s, nil
}

func scanSummary(s scanner) (docent.TurnSummary, error) {
	var t docent.TurnSummary
	var status, citations string
	var created, reviewed sql.NullString
	if err := s.Scan(&t.ID, &t.Question, &t.Platform, &t.Channel, &t.User, &status, &t.Error, &citations,
		&t.LatencyMS, &created, &t.Helpful, &t.NotHelpful, &t.Handoff, &reviewed, &t.ReviewedBy, &t.Assignee,
		&t.Delivery, &t.Golden); err != nil {
		return t, err
	}
	t.Status = docent.Status(status)
	if err := json.Unmarshal([]byte(citations), &t.Citations); err != nil {
		return t, fmt.Errorf("citations of turn %d: %w", t.ID, err)
	}
	var err error
	if t.CreatedAt, err = parseTime(created); err != nil {
		return t, err
	}
	t.ReviewedAt, err = parseTime(reviewed)
	return t, err
}

// TurnChannels returns the distinct platforms and channels turns were asked in.
func (db *DB) TurnChannels(ctx context.Context) (platforms, channels []string, err error) {
	for _, c := range []struct {
		col string
		dst *[]string
	}{{"platform", &platforms}, {"channel", &channels}} {
		*c.dst, err = queryList(ctx, db.creader(), `SELECT DISTINCT `+c.col+` FROM turns WHERE `+c.col+` != '' ORDER BY 1`, nil,
			scanString)
		if err != nil {
			return nil, nil, fmt.Errorf("store: turn channels: %w", err)
		}
	}
	return platforms, channels, nil
}

// SetReviewed marks a turn of the misses inbox reviewed by by (or, with
// reviewed false, open again). It returns ErrNotFound for an unknown turn.
func (db *DB) SetReviewed(ctx context.Context, turnID int64, by string, reviewed bool) error {
	at := any(nil)
	if reviewed {
		at = db.stamp()
	} else {
		by = ""
	}
	return db.upsertReview(ctx, turnID, `reviewed_at = excluded.reviewed_at, reviewed_by = excluded.reviewed_by`,
		at, by, "", nil, "")
}

// AssignMiss assigns a turn of the misses inbox to assignee ("" unassigns).
// It returns ErrNotFound for an unknown turn.
func (db *DB) AssignMiss(ctx context.Context, turnID int64, assignee, by string) error {
	at := any(nil)
	if assignee != "" {
		at = db.stamp()
	}
	return db.upsertReview(ctx, turnID, `assignee = excluded.assignee, assigned_at = excluded.assigned_at,
		assigned_by = excluded.assigned_by`, nil, "", assignee, at, by)
}

func (db *DB) upsertReview(ctx context.Context, turnID int64, set string, reviewedAt any, reviewedBy, assignee string, assignedAt any, assignedBy string) error {
	var exists int
	if err := db.creader().QueryRowContext(ctx, `SELECT COUNT(*) FROM turns WHERE id = ?`, turnID).Scan(&exists); err != nil {
		return fmt.Errorf("store: review turn %d: %w", turnID, err)
	}
	if exists == 0 {
		return fmt.Errorf("store: review turn %d: %w", turnID, ErrNotFound)
	}
	_, err := db.cexec(ctx, `INSERT INTO miss_reviews (turn_id, reviewed_at, reviewed_by, assignee, assigned_at, assigned_by)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (turn_id) DO UPDATE SET `+set,
		turnID, reviewedAt, reviewedBy, assignee, assignedAt, assignedBy)
	if err != nil {
		return fmt.Errorf("store: review turn %d: %w", turnID, err)
	}
	return nil
}

// TurnStats aggregates the turns created in [since, until), leaving out
// the platform exclude ("" keeps all).
func (db *DB) TurnStats(ctx context.Context, since, until time.Time, exclude string) (docent.TurnStats, error) {
	st := docent.TurnStats{ByStatus: map[docent.Status]int{}}
	r := db.creader()
	win := `t.created_at >= ? AND t.created_at < ? AND t.platform != ?`
	args := []any{formatTime(since), formatTime(until), exclude}
	fail := func(err error) (docent.TurnStats, error) {
		return docent.TurnStats{}, fmt.Errorf("store: turn stats: %w", err)
	}
	rows, err := queryList(ctx, r, `SELECT t.status, COUNT(*) FROM turns t WHERE `+win+` GROUP BY t.status`, args,
		func(s scanner) (docent.DayCount, error) {
			var d docent.DayCount
			err := s.Scan(&d.Day, &d.N)
			return d, err
		})
	if err != nil {
		return fail(err)
	}
	for _, d := range rows {
		st.ByStatus[docent.Status(d.Day)] = d.N
		st.Total += d.N
	}
	if err := r.QueryRowContext(ctx, `SELECT COUNT(*) FROM turns t WHERE `+win+
		` AND EXISTS (SELECT 1 FROM handoffs h WHERE h.turn_id = t.id)`, args...).Scan(&st.HandedOff); err != nil {
		return fail(err)
	}
	if err := r.QueryRowContext(ctx, `SELECT COALESCE(SUM(f.rating = 'helpful'), 0), COALESCE(SUM(f.rating = 'not_helpful'), 0)
		FROM feedback f JOIN turns t ON t.id = f.turn_id WHERE `+win, args...).Scan(&st.Helpful, &st.NotHelpful); err != nil {
		return fail(err)
	}
	if st.Total > 0 {
		pct := func(p float64) (float64, error) {
			var v float64
			off := int(p * float64(st.Total-1))
			err := r.QueryRowContext(ctx, `SELECT t.latency_ms FROM turns t WHERE `+win+` ORDER BY t.latency_ms LIMIT 1 OFFSET ?`,
				append(append([]any(nil), args...), off)...).Scan(&v)
			return v, err
		}
		if st.MedianMS, err = pct(0.5); err != nil {
			return fail(err)
		}
		if st.P95MS, err = pct(0.95); err != nil {
			return fail(err)
		}
	}
	if st.Daily, err = queryList(ctx, r, `SELECT substr(t.created_at, 1, 10), t.platform, COUNT(*) FROM turns t WHERE `+win+
		` GROUP BY 1, 2 ORDER BY 1, 2`, args, func(s scanner) (docent.DayCount, error) {
		var d docent.DayCount
		err := s.Scan(&d.Day, &d.Platform, &d.N)
		return d, err
	}); err != nil {
		return fail(err)
	}
	if st.TopCited, err = db.citedDocs(ctx, since, until, exclude, "", 10); err != nil {
		return fail(err)
	}
	return st, nil
}

// citedDocs counts the turns that cited each document in the window,
// most cited first; rating, when set, keeps turns rated so.
func (db *DB) citedDocs(ctx context.Context, since, until time.Time, exclude, rating string, limit int) ([]docent.DocCount, error) {
	q := `SELECT json_extract(c.value, '$.doc_id') AS doc, MAX(json_extract(c.value, '$.title')),
			MAX(json_extract(c.value, '$.url')), COUNT(DISTINCT t.id)
		FROM turns t, json_each(t.citations) c
		WHERE t.created_at >= ? AND t.created_at < ? AND t.platform != ? AND json_extract(c.value, '$.doc_id') IS NOT NULL`
	args := []any{formatTime(since), formatTime(until), exclude}
	if rating != "" {
		q += ` AND EXISTS (SELECT 1 FROM feedback f WHERE f.turn_id = t.id AND f.rating = ?)`
		args = append(args, rating)
	}
	q += ` GROUP BY doc ORDER BY 4 DESC, doc LIMIT ?`
	args = append(args, limitOr(limit, 10))
	return queryList(ctx, db.creader(), q, args, func(s scanner) (docent.DocCount, error) {
		var d docent.DocCount
		var title, url sql.NullString
		err := s.Scan(&d.DocID, &title, &url, &d.N)
		d.Title, d.URL = title.String, url.String
		return d, err
	})
}

// DocCitations returns, per document, how many turns in [since, until)
// cited it, and how many of those were rated not helpful.
func (db *DB) DocCitations(ctx context.Context, since, until time.Time, exclude string) (cited, notHelpful map[string]int, err error) {
	cited, notHelpful = map[string]int{}, map[string]int{}
	for _, c := range []struct {
		rating string
		dst    map[string]int
	}{{"", cited}, {"not_helpful", notHelpful}} {
		list, err := db.citedDocs(ctx, since, until, exclude, c.rating, 1<<30)
		if err != nil {
			return nil, nil, fmt.Errorf("store: doc citations: %w", err)
		}
		for _, d := range list {
			c.dst[d.DocID] = d.N
		}
	}
	return cited, notHelpful, nil
}

// SourceCounts are a source's documents in the registry.
type SourceCounts struct {
	// Live and Deleted count documents present at and gone from the source.
	Live, Deleted int
	// Chunks counts the live documents' chunks.
	Chunks int
}

// CountDocuments returns the registry's counts per source.
func (db *DB) CountDocuments(ctx context.Context) (map[string]SourceCounts, error) {
	rows, err := queryList(ctx, db.creader(), `SELECT source, SUM(deleted_at IS NULL), SUM(deleted_at IS NOT NULL),
		SUM(CASE WHEN deleted_at IS NULL THEN chunk_count ELSE 0 END) FROM documents GROUP BY source`, nil,
		func(s scanner) (struct {
			src string
			c   SourceCounts
		}, error) {
			var v struct {
				src string
				c   SourceCounts
			}
			err := s.Scan(&v.src, &v.c.Live, &v.c.Deleted, &v.c.Chunks)
			return v, err
		})
	if err != nil {
		return nil, fmt.Errorf("store: count documents: %w", err)
	}
	out := make(map[string]SourceCounts, len(rows))
	for _, r := range rows {
		out[r.src] = r.c
	}
	return out, nil
}

// SearchDocuments returns live documents whose title, path or ID contains
// text (case-insensitive), by title; at most limit (default 20).
func (db *DB) SearchDocuments(ctx context.Context, text string, limit int) ([]docent.DocRecord, error) {
	like := "%" + likeEscape(text) + "%"
	out, err := queryList(ctx, db.creader(), `SELECT `+docColumns+` FROM documents WHERE deleted_at IS NULL
		AND (title LIKE ? ESCAPE '\' OR path LIKE ? ESCAPE '\' OR id LIKE ? ESCAPE '\') ORDER BY title, id LIMIT ?`,
		[]any{like, like, like, limitOr(limit, 20)}, scanDoc)
	if err != nil {
		return nil, fmt.Errorf("store: search documents: %w", err)
	}
	return out, nil
}

func scanString(s scanner) (string, error) {
	var v string
	err := s.Scan(&v)
	return v, err
}
