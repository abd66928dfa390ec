package console

import (
	"net/http"
	"slices"

	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/store"
	"github.com/docent-hq/docent/templates"
)

// showMisses renders the inbox: not-found, uncertain and failed turns,
// not-helpful votes and handoffs, open (not reviewed) by default; and
// the newest knowledge candidates (people's replies to handoffs).
func (h *handler) showMisses(w http.ResponseWriter, r *http.Request) {
	review := r.URL.Query().Get("review")
	if !slices.Contains([]string{"open", "reviewed", "all"}, review) {
		review = "open"
	}
	assignee := r.URL.Query().Get("assignee")
	p := page(r)
	items, total, err := h.store.SearchTurns(r.Context(), store.TurnQuery{Misses: true, Review: review, Assignee: assignee,
		ExcludePlatform: eval.GoldenPlatform, Limit: perPage, Offset: (p - 1) * perPage})
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	knowledge, err := h.store.ListKnowledgeCandidates(r.Context(), 20)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	h.render(w, r, templates.MissesPage(templates.Misses{Meta: h.meta(r, "Misses", "misses"), Review: review,
		Assignee: assignee, Items: items, Total: total, Pager: pager(r, p, total, perPage), Knowledge: knowledge,
		CanTune: h.opts.Tuner != nil, Flagged: h.flagged(r.Context(), citationsOf(items)...)}))
}

// reviewMiss marks a miss reviewed (reviewed=1) or open again (reviewed=0).
func (h *handler) reviewMiss(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(r)
	if !ok {
		h.renderError(w, r, http.StatusNotFound, "No such turn.")
		return
	}
	reviewed := r.PostFormValue("reviewed") != "0"
	if err := h.store.SetReviewed(r.Context(), id, sessionOf(r.Context()).user, reviewed); err != nil {
		h.serverError(w, r, err)
		return
	}
	done := "reviewed"
	if !reviewed {
		done = "reopened"
	}
	redirect(w, r, "/misses", done)
}

// assignMiss assigns a miss to a person ("" unassigns).
func (h *handler) assignMiss(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(r)
	if !ok {
		h.renderError(w, r, http.StatusNotFound, "No such turn.")
		return
	}
	if err := h.store.AssignMiss(r.Context(), id, r.PostFormValue("assignee"), sessionOf(r.Context()).user); err != nil {
		h.serverError(w, r, err)
		return
	}
	redirect(w, r, "/misses", "assigned")
}
