package console

import (
	"net/http"
	"strings"
	"time"

	"github.com/docent-hq/docent"
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
	p := templates.StalePage{Meta: h.meta(r, "Stale documents", "stale"), Report: rep,
		ShowAcked: r.URL.Query().Get("acked") == "1", DefaultUntil: h.now().AddDate(0, 3, 0).Format("2006-01-02")}
	for _, it := range rep.Items {
		if it.Ack != nil {
			p.Acked++
			if !p.ShowAcked {
				continue
			}
		}
		p.Items = append(p.Items, it)
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
	h.opts.Stale.Invalidate()
	redirect(w, r, "/stale", "acked")
}

// unackStale withdraws an acknowledgement.
func (h *handler) unackStale(w http.ResponseWriter, r *http.Request) {
	if err := h.store.UnackStale(r.Context(), r.PostFormValue("doc")); err != nil {
		h.serverError(w, r, err)
		return
	}
	h.opts.Stale.Invalidate()
	redirect(w, r, "/stale?acked=1", "unacked")
}
