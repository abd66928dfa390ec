package console

import (
	"errors"
	"net/http"
	"slices"

	"github.com/docent-hq/docent/connectors"
)

// syncSource queues a sync of one source now.
func (h *handler) syncSource(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if !slices.ContainsFunc(h.opts.Sources, func(s Source) bool { return s.Name == name }) {
		h.renderError(w, r, http.StatusNotFound, "No source named "+name+".")
		return
	}
	if h.opts.Scheduler == nil {
		h.renderError(w, r, http.StatusConflict, "Syncs are not scheduled in this process.")
		return
	}
	err := h.opts.Scheduler.RunNow(name)
	switch {
	case err == nil:
		redirect(w, r, "/sources", "sync")
	case errors.Is(err, connectors.ErrSyncBusy):
		h.renderError(w, r, http.StatusConflict, "A sync of "+name+" is already queued or running.")
	case errors.Is(err, connectors.ErrUnknownSource):
		h.renderError(w, r, http.StatusConflict, name+" has no schedule (schedule: off), so it syncs only with `docent sync`.")
	case errors.Is(err, connectors.ErrNotRunning):
		h.renderError(w, r, http.StatusServiceUnavailable, "The scheduler is not running (the server is starting or stopping).")
	default:
		h.serverError(w, r, err)
	}
}
