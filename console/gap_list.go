package console

import (
	"context"
	"encoding/csv"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/console/gaps"
	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/store"
	"github.com/docent-hq/docent/templates"
)

// maxGapMisses caps the misses one gaps report groups (the newest).
const maxGapMisses = 1000

// gapPeriods are the periods the gaps report covers, by name.
var gapPeriods = map[string]time.Duration{"week": 7 * 24 * time.Hour, "month": 30 * 24 * time.Hour}

// periodOf reads ?period= (week, the default, or month).
func periodOf(r *http.Request) (string, time.Duration) {
	p := r.URL.Query().Get("period")
	if _, ok := gapPeriods[p]; !ok {
		p = "week"
	}
	return p, gapPeriods[p]
}

// buildGaps groups the period's misses (reviewed or not) into gaps.
func (h *handler) buildGaps(ctx context.Context, period time.Duration) ([]gaps.Gap, int, error) {
	now := h.now()
	items, total, err := h.store.SearchTurns(ctx, store.TurnQuery{Misses: true, Review: "all", Since: now.Add(-period),
		ExcludePlatform: eval.GoldenPlatform, Limit: maxGapMisses})
	if err != nil {
		return nil, 0, err
	}
	misses := make([]gaps.Miss, len(items))
	for i, t := range items {
		misses[i] = gaps.Miss{TurnID: t.ID, Question: t.Question, Status: t.Status, NotHelpful: t.NotHelpful > 0, Handoff: t.Handoff != ""}
	}
	gs, err := gaps.Group(ctx, misses, h.opts.Embedder, h.opts.Index, gaps.Options{Flags: h.opts.Stale.Flagged})
	return gs, total, err
}

// showGaps renders the coverage gaps of the week or the month.
func (h *handler) showGaps(w http.ResponseWriter, r *http.Request) {
	name, period := periodOf(r)
	gs, total, err := h.buildGaps(r.Context(), period)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	p := templates.Gaps{Meta: h.meta(r, "Coverage gaps", "misses"), Period: name, Misses: total, Capped: total > maxGapMisses}
	for _, g := range gs {
		p.Gaps = append(p.Gaps, gapView(g))
	}
	h.render(w, r, templates.GapsPage(p))
}

// gapView is the view of a gap: every miss, so that the page can count
// them, and the closest pages.
func gapView(g gaps.Gap) templates.Gap {
	v := templates.Gap{Terms: g.Terms, Action: string(g.Action), Advice: g.Advice}
	for _, m := range g.Misses {
		v.Misses = append(v.Misses, templates.GapMiss{TurnID: m.TurnID, Question: m.Question, Status: m.Status})
	}
	for _, p := range g.Pages {
		v.Pages = append(v.Pages, templates.GapPage{DocID: p.DocID, Title: p.Title, Section: p.Section,
			Similarity: p.Similarity, Missing: p.Missing, Flagged: p.Flagged})
	}
	return v
}

// exportGaps writes the coverage gaps as CSV: one row per gap.
func (h *handler) exportGaps(w http.ResponseWriter, r *http.Request) {
	name, period := periodOf(r)
	gs, _, err := h.buildGaps(r.Context(), period)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	rows := [][]string{{"gap", "size", "terms", "action", "advice", "closest_page", "closest_title", "similarity", "example_questions", "turn_ids"}}
	for i, g := range gs {
		var page, title, sim string
		if len(g.Pages) > 0 {
			page, title, sim = g.Pages[0].DocID, g.Pages[0].Title, strconv.FormatFloat(g.Pages[0].Similarity, 'f', 3, 64)
		}
		var qs, ids []string
		for j, m := range g.Misses {
			if j < 5 {
				qs = append(qs, m.Question)
			}
			ids = append(ids, strconv.FormatInt(m.TurnID, 10))
		}
		rows = append(rows, []string{strconv.Itoa(i + 1), strconv.Itoa(g.Size()), strings.Join(g.Terms, " "), string(g.Action),
			g.Advice, page, title, sim, strings.Join(qs, " | "), strings.Join(ids, " ")})
	}
	writeCSV(w, "docent-gaps-"+name+".csv", rows)
}

// exportMisses writes the misses inbox, as filtered, as CSV: one row per turn.
func (h *handler) exportMisses(w http.ResponseWriter, r *http.Request) {
	review := r.URL.Query().Get("review")
	if !slices.Contains([]string{"open", "reviewed", "all"}, review) {
		review = "open"
	}
	rows := [][]string{{"turn_id", "asked_at", "question", "status", "platform", "channel", "user", "why", "helpful", "not_helpful",
		"handoff", "cited", "reviewed_by", "assignee", "golden", "url"}}
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	base := scheme + "://" + r.Host
	const batch = 500
	for off := 0; ; off += batch {
		items, _, err := h.store.SearchTurns(r.Context(), store.TurnQuery{Misses: true, Review: review, Assignee: r.URL.Query().Get("assignee"),
			ExcludePlatform: eval.GoldenPlatform, Limit: batch, Offset: off})
		if err != nil {
			h.serverError(w, r, err)
			return
		}
		for _, t := range items {
			rows = append(rows, []string{templates.I64(t.ID), t.CreatedAt.UTC().Format(time.RFC3339), t.Question, string(t.Status), t.Platform, t.Channel,
				t.User, strings.Join(templates.MissReasons(t), "; "), strconv.Itoa(t.Helpful), strconv.Itoa(t.NotHelpful), string(t.Handoff),
				citedIDs(t.Citations), t.ReviewedBy, t.Assignee, t.Golden, base + "/turns/" + templates.I64(t.ID)})
		}
		if len(items) < batch {
			break
		}
	}
	writeCSV(w, "docent-misses-"+review+".csv", rows)
}

func citedIDs(cs []docent.Citation) string {
	var ids []string
	for _, c := range cs {
		if !slices.Contains(ids, c.DocID) {
			ids = append(ids, c.DocID)
		}
	}
	return strings.Join(ids, " ")
}

// writeCSV sends rows as a CSV download. A cell that a spreadsheet would
// read as a formula (=, +, -, @ first) is prefixed with a quote.
func writeCSV(w http.ResponseWriter, name string, rows [][]string) {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	cw := csv.NewWriter(w)
	for i, row := range rows {
		if i > 0 {
			for j, c := range row {
				if c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) {
					row[j] = "'" + c
				}
			}
		}
		_ = cw.Write(row) // a write error is the client gone
	}
	cw.Flush()
}
