package console

import (
	"net/http"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/store"
	"github.com/docent-hq/docent/templates"
)

// showTurnList renders the retrieval logs: every turn, newest first,
// filtered by status, feedback, platform, channel, cited source or
// document, date range and words of the question.
func (h *handler) showTurnList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := templates.TurnFilter{Status: q.Get("status"), Feedback: q.Get("feedback"), Platform: q.Get("platform"),
		Channel: q.Get("channel"), Source: q.Get("source"), Doc: q.Get("doc"), Since: q.Get("since"),
		Until: q.Get("until"), Q: q.Get("q")}
	tq := store.TurnQuery{Status: docent.Status(f.Status), Feedback: f.Feedback, Platform: f.Platform,
		Channel: f.Channel, CitedSource: f.Source, CitedDoc: f.Doc, Text: f.Q, Limit: perPage}
	if f.Platform != eval.GoldenPlatform {
		tq.ExcludePlatform = eval.GoldenPlatform
	}
	var err error
	if tq.Since, err = parseDay(f.Since); err != nil {
		h.badRequest(w, r, "From: want a date like 2026-03-01.")
		return
	}
	if tq.Until, err = parseDay(f.Until); err != nil {
		h.badRequest(w, r, "To: want a date like 2026-03-01.")
		return
	}
	if !tq.Until.IsZero() {
		tq.Until = tq.Until.Add(24 * time.Hour) // the whole last day
	}
	p := page(r)
	tq.Offset = (p - 1) * perPage
	turns, total, err := h.store.SearchTurns(r.Context(), tq)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	platforms, channels, err := h.store.TurnChannels(r.Context())
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	var sources []string
	for _, s := range h.opts.Sources {
		sources = append(sources, s.Name)
	}
	h.render(w, r, templates.TurnListPage(templates.TurnList{
		Meta: h.meta(r, "Retrieval logs", "turns"), Filter: f, Platforms: platforms, Channels: channels,
		Sources: sources, Turns: turns, Total: total, Pager: pager(r, p, total, perPage),
		Filtered: f != templates.TurnFilter{}, Flagged: h.flagged(r.Context(), citationsOf(turns)...),
	}))
}

// parseDay parses a YYYY-MM-DD form date ("" is the zero time).
func parseDay(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse("2006-01-02", s)
}
