package console

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/stale"
	"github.com/docent-hq/docent/templates"
)

// showStale renders the flagged documents by impact; acknowledged ones
// only with ?acked=1.
func (h *handler) showStale(w http.ResponseWriter, r *http.Request) {
	rep, err := h.opts.Stale.Report(r.Context())
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	p := templates.StalePage{Meta: h.meta(r, "Stale documents", "stale"), WindowDays: int(rep.Window.Hours() / 24), Generated: rep.Generated,
		ShowAcked: r.URL.Query().Get("acked") == "1", DefaultUntil: h.now().AddDate(0, 3, 0).Format("2006-01-02")}
	for _, it := range rep.Items {
		if it.Ack != nil {
			p.Acked++
			if !p.ShowAcked {
				continue
			}
		}
		p.Items = append(p.Items, staleRow(it))
	}
	h.render(w, r, templates.StaleListPage(p))
}

// ackStale acknowledges a flagged document until a date.
func (h *handler) ackStale(w http.ResponseWriter, r *http.Request) {
	doc := r.PostFormValue("doc")
	until, err := time.Parse("2006-01-02", r.PostFormValue("until"))
	if doc == "" || err != nil || !until.After(h.now()) {
		h.badRequest(w, r, "Pick a document and a date in the future.")
		return
	}
	if err := h.store.AckStale(r.Context(), docent.StaleAck{DocID: doc, Until: until, By: sessionOf(r.Context()).user,
		Note: strings.TrimSpace(r.PostFormValue("note"))}); err != nil {
		h.serverError(w, r, err)
		return
	}
	redirect(w, r, "/stale", "acked")
}

// unackStale withdraws an acknowledgement.
func (h *handler) unackStale(w http.ResponseWriter, r *http.Request) {
	if err := h.store.UnackStale(r.Context(), r.PostFormValue("doc")); err != nil {
		h.serverError(w, r, err)
		return
	}
	redirect(w, r, "/stale?acked=1", "unacked")
}

// refreshStale derives the documents' stored state again after the
// golden set changed (which gone documents are still expected). The
// change itself is saved: a failure is logged, and the next sync derives
// it.
func (h *handler) refreshStale(r *http.Request) {
	if err := h.opts.Stale.Refresh(r.Context()); err != nil {
		h.log.ErrorContext(r.Context(), "refresh stale state", slog.Any("error", err))
	}
}

// staleRow is the view of one flagged document.
func staleRow(it stale.Item) templates.StaleRow {
	row := templates.StaleRow{Doc: it.Doc, AgeDays: it.AgeDays, MaxAgeDays: it.MaxAgeDays,
		Cited: it.Cited, NotHelpful: it.NotHelpful, Impact: it.Impact, Ack: it.Ack}
	for _, f := range it.Findings {
		row.Findings = append(row.Findings, templates.StaleFinding{Kind: f.Kind, Label: stale.Label(f.Kind), Detail: f.Detail})
	}
	return row
}
