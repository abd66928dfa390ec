package console

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/admission"
	"github.com/docent-hq/docent/templates"
)

// Platform is the Question.Platform of playground questions.
const Platform = "console"

// channels are the playground's scopes: every source, each configured
// chat channel, then each source alone.
func (h *handler) channels() []templates.PlaygroundChannel {
	out := []templates.PlaygroundChannel{{Key: "all", Label: "Every source (no channel scope)"}}
	out = append(out, h.opts.Channels...)
	for _, s := range h.opts.Sources {
		out = append(out, templates.PlaygroundChannel{Key: "source:" + s.Name, Label: "Only " + s.Name, Sources: []string{s.Name}})
	}
	return out
}

// showPlayground renders the ask form.
func (h *handler) showPlayground(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, templates.PlaygroundPage(templates.Playground{Meta: h.meta(r, "Playground", "playground"),
		Channels: h.channels(), Channel: "all"}))
}

// askPlayground asks a question with the chosen channel's source scope,
// stores the turn like any other, and shows the answer and its trace.
func (h *handler) askPlayground(w http.ResponseWriter, r *http.Request) {
	chans := h.channels()
	key := r.PostFormValue("channel")
	var ch *templates.PlaygroundChannel
	for i := range chans {
		if chans[i].Key == key {
			ch = &chans[i]
		}
	}
	if ch == nil {
		h.badRequest(w, r, "Pick a channel to ask from.")
		return
	}
	text := strings.TrimSpace(r.PostFormValue("question"))
	p := templates.Playground{Meta: h.meta(r, "Playground", "playground"), Channels: chans, Channel: key, Question: text}
	if h.opts.Ready != nil && !h.opts.Ready() {
		p.Error = "The first sync of the docs has not finished yet: ask again in a few minutes."
		w.Header().Set("Retry-After", "30")
		h.renderStatus(w, r, http.StatusServiceUnavailable, templates.PlaygroundPage(p))
		return
	}
	q := docent.Question{Text: text, Platform: Platform, Channel: key, User: sessionOf(r.Context()).user,
		Filter: docent.Filter{Sources: ch.Sources, Labels: ch.Labels}}
	if h.opts.Admission != nil {
		release, err := h.opts.Admission.Acquire(r.Context(), Platform, q.User)
		if err != nil {
			if r.Context().Err() != nil {
				return
			}
			p.Error = "docent is answering too many questions at once right now: ask again in a moment."
			retry := time.Second
			if be, ok := errors.AsType[*admission.BusyError](err); ok {
				retry = be.RetryAfter
			}
			w.Header().Set("Retry-After", strconv.Itoa(int(retry/time.Second)))
			h.renderStatus(w, r, http.StatusServiceUnavailable, templates.PlaygroundPage(p))
			return
		}
		defer release()
	}
	turn, err := h.opts.Asker.Ask(r.Context(), q)
	switch {
	case errors.Is(err, docent.ErrEmptyQuestion):
		p.Error = "Write a question."
		h.renderStatus(w, r, http.StatusUnprocessableEntity, templates.PlaygroundPage(p))
		return
	case err != nil && turn.ID == 0:
		h.serverError(w, r, err)
		return
	case err != nil:
		p.Error = "The answer failed; its error is in the trace below."
	}
	p.Turn, p.Flagged = &turn, h.flagged(r.Context(), turn.Answer.Citations)
	h.render(w, r, templates.PlaygroundPage(p))
}
