package console

import (
	"net/http"
	"time"

	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/templates"
)

// windows are the overview's time windows.
var windows = map[string]time.Duration{"24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "30d": 30 * 24 * time.Hour}

// showOverview renders volume, outcomes, feedback, latency, top cited
// documents, sync health and forum resolutions over the chosen window.
func (h *handler) showOverview(w http.ResponseWriter, r *http.Request) {
	win := r.URL.Query().Get("window")
	if _, ok := windows[win]; !ok {
		win = "7d"
	}
	now := h.now().UTC()
	since := now.Add(-windows[win])
	st, err := h.store.TurnStats(r.Context(), since, now.Add(time.Second), eval.GoldenPlatform)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	var days []string
	for d := since.Truncate(24 * time.Hour); !d.After(now); d = d.Add(24 * time.Hour) {
		days = append(days, d.Format("2006-01-02"))
	}
	sources, err := h.sourceRows(r)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	forums, err := h.store.ForumStats(r.Context(), since, now.Add(time.Second), h.opts.Forums)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	h.render(w, r, templates.OverviewPage(templates.Overview{
		Meta:    h.meta(r, "Overview", "overview"),
		Window:  win,
		Windows: []string{"24h", "7d", "30d"},
		Stats:   st,
		Chart:   templates.DailyChart(days, st.Daily),
		Sources: sources,
		Forums:  forums,
	}))
}
