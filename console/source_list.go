package console

import (
	"errors"
	"net/http"

	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/store"
	"github.com/docent-hq/docent/templates"
)

// sourceRows joins the configured sources with their registry counts,
// last recorded run and scheduler state.
func (h *handler) sourceRows(r *http.Request) ([]templates.SourceRow, error) {
	counts, err := h.store.CountDocuments(r.Context())
	if err != nil {
		return nil, err
	}
	jobs := map[string]connectors.JobStatus{}
	if h.opts.Scheduler != nil {
		for _, j := range h.opts.Scheduler.Status() {
			jobs[j.Source] = j
		}
	}
	var rows []templates.SourceRow
	for _, s := range h.opts.Sources {
		c := counts[s.Name]
		row := templates.SourceRow{Name: s.Name, Type: s.Type, Schedule: s.Schedule,
			Counts: templates.SourceCounts{Live: c.Live, Deleted: c.Deleted, Chunks: c.Chunks}, StaleAfterDays: s.StaleAfterDays}
		if j, ok := jobs[s.Name]; ok {
			row.Scheduled, row.Running, row.Queued, row.Next, row.Schedule = true, j.Running, j.Queued, j.Next, j.Spec
			row.Health = healthView(j.Health)
		}
		last, err := h.store.LastRun(r.Context(), s.Name)
		switch {
		case err == nil:
			row.Last = &last
		case !errors.Is(err, store.ErrNotFound):
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// healthView is the view of a source's sync health.
func healthView(h connectors.Health) templates.SourceHealth {
	return templates.SourceHealth{LastSuccess: h.LastSuccess, ConsecutiveFailures: h.ConsecutiveFailures,
		LastError: h.LastError, MissedRuns: h.MissedRuns, Stale: h.Stale}
}

// showSources renders each source's state and the recent runs.
func (h *handler) showSources(w http.ResponseWriter, r *http.Request) {
	rows, err := h.sourceRows(r)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	runs, err := h.store.ListRuns(r.Context(), "", 30)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	h.render(w, r, templates.SourcesListPage(templates.SourcesPage{Meta: h.meta(r, "Sources", "sources"), Sources: rows, Runs: runs}))
}
