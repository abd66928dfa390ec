package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/docent-hq/docent"
)

// RecordForumResolution stores how forum post r.Thread was solved. A post
// is recorded once: a later mark (a second ✅, the handoff resolved after
// the asker said "solved") leaves the first, and reports false. A zero
// TurnID takes the post's latest turn, a zero ResolvedAt the store's
// clock.
func (db *DB) RecordForumResolution(ctx context.Context, r docent.ForumResolution) (bool, error) {
	at := db.stamp()
	if !r.ResolvedAt.IsZero() {
		at = r.ResolvedAt.UTC().Format(timeLayout)
	}
	res, err := db.exec(ctx, `INSERT INTO forum_resolutions (platform, forum, forum_name, thread, turn_id, how, resolved_by, resolved_at)
		VALUES (?1, ?2, ?3, ?4,
			CASE WHEN ?5 != 0 THEN ?5 ELSE COALESCE((SELECT MAX(id) FROM turns WHERE platform = ?1 AND channel = ?2 AND thread = ?4), 0) END,
			?6, ?7, ?8)
		ON CONFLICT (platform, thread) DO NOTHING`,
		r.Platform, r.Forum, r.ForumName, r.Thread, r.TurnID, string(r.How), r.By, at)
	if err != nil {
		return false, fmt.Errorf("store: record forum resolution: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: record forum resolution: %w", err)
	}
	return n == 1, nil
}

// ForumResolution returns the resolution recorded for a forum post.
func (db *DB) ForumResolution(ctx context.Context, platform, thread string) (docent.ForumResolution, bool, error) {
	r := docent.ForumResolution{Platform: platform, Thread: thread}
	var how string
	var at sql.NullString
	err := db.creader().QueryRowContext(ctx, `SELECT forum, forum_name, turn_id, how, resolved_by, resolved_at
		FROM forum_resolutions WHERE platform = ? AND thread = ?`, platform, thread).
		Scan(&r.Forum, &r.ForumName, &r.TurnID, &how, &r.By, &at)
	if err == sql.ErrNoRows {
		return docent.ForumResolution{}, false, nil
	}
	if err != nil {
		return docent.ForumResolution{}, false, fmt.Errorf("store: forum resolution: %w", err)
	}
	r.How = docent.ResolutionHow(how)
	if r.ResolvedAt, err = parseTime(at); err != nil {
		return docent.ForumResolution{}, false, fmt.Errorf("store: forum resolution: %w", err)
	}
	return r, true, nil
}

// ForumRef names a forum on a platform.
type ForumRef struct{ Platform, ID string }

// ForumStats counts each forum's posts in [since, until): posts asked
// (with a turn), posts with an answer, posts handed off (the escalation
// posted), posts solved by each way. The forums are those given (the
// configured ones) and any with a recorded resolution, in that order.
func (db *DB) ForumStats(ctx context.Context, since, until time.Time, forums []ForumRef) ([]docent.ForumStat, error) {
	fail := func(err error) ([]docent.ForumStat, error) { return nil, fmt.Errorf("store: forum stats: %w", err) }
	r := db.creader()
	known, err := queryList(ctx, r, `SELECT platform, forum FROM forum_resolutions GROUP BY platform, forum ORDER BY MIN(id)`, nil,
		func(s scanner) (ForumRef, error) {
			var f ForumRef
			err := s.Scan(&f.Platform, &f.ID)
			return f, err
		})
	if err != nil {
		return fail(err)
	}
	all := slices.Clone(forums)
	for _, f := range known {
		if !slices.Contains(all, f) {
			all = append(all, f)
		}
	}
	lo, hi := formatTime(since), formatTime(until)
	var out []docent.ForumStat
	for _, f := range all {
		st := docent.ForumStat{Platform: f.Platform, Forum: f.ID, Solved: map[docent.ResolutionHow]int{}}
		if err := r.QueryRowContext(ctx, `SELECT COUNT(DISTINCT thread), COUNT(DISTINCT CASE WHEN status = 'answered' THEN thread END)
			FROM turns WHERE platform = ? AND channel = ? AND thread != channel AND created_at >= ? AND created_at < ?`,
			f.Platform, f.ID, lo, hi).Scan(&st.Posts, &st.Answered); err != nil {
			return fail(err)
		}
		if err := r.QueryRowContext(ctx, `SELECT COUNT(DISTINCT thread) FROM handoffs
			WHERE platform = ? AND channel = ? AND state != 'failed' AND requested_at >= ? AND requested_at < ?`,
			f.Platform, f.ID, lo, hi).Scan(&st.HandedOff); err != nil {
			return fail(err)
		}
		if err := r.QueryRowContext(ctx, `SELECT COALESCE((SELECT forum_name FROM forum_resolutions
			WHERE platform = ? AND forum = ? AND forum_name != '' ORDER BY id DESC LIMIT 1), '')`,
			f.Platform, f.ID).Scan(&st.ForumName); err != nil {
			return fail(err)
		}
		hows, err := queryList(ctx, r, `SELECT how, COUNT(*) FROM forum_resolutions
			WHERE platform = ? AND forum = ? AND resolved_at >= ? AND resolved_at < ? GROUP BY how`,
			[]any{f.Platform, f.ID, lo, hi}, func(s scanner) (docent.DayCount, error) {
				var d docent.DayCount
				err := s.Scan(&d.Day, &d.N)
				return d, err
			})
		if err != nil {
			return fail(err)
		}
		for _, h := range hows {
			st.Solved[docent.ResolutionHow(h.Day)] = h.N
		}
		out = append(out, st)
	}
	return out, nil
}
