package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/templates"
)

// showGolden renders the set, the run history and its trend.
func (h *handler) showGolden(w http.ResponseWriter, r *http.Request) {
	qs, err := h.store.ListGolden(r.Context())
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	runs, err := h.store.ListGoldenRuns(r.Context(), 50)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	p := templates.GoldenPage{Meta: h.meta(r, "Golden set", "golden"), Questions: qs, CanTune: h.opts.Tuner != nil}
	var labels []string
	series := make([][]float64, 4)
	for _, run := range runs {
		v, err := runView(run)
		if err != nil {
			h.serverError(w, r, err)
			return
		}
		p.Runs = append(p.Runs, v)
		if run.Status == "running" && p.Running == nil {
			p.Running = &run
		}
	}
	for _, v := range slices.Backward(p.Runs) { // oldest first
		if v.Run.Status != "ok" {
			continue
		}
		labels = append(labels, fmt.Sprintf("#%d", v.Run.ID))
		series[0] = append(series[0], v.Report.HitAt1)
		series[1] = append(series[1], v.Report.HitAt5)
		series[2] = append(series[2], v.Report.MRR10)
		series[3] = append(series[3], v.Report.DeclinedRate)
	}
	p.Trend = templates.TrendChart(labels, []string{"hit@1", "hit@5", "MRR@10", "unanswerable declined"}, series)
	h.render(w, r, templates.GoldenListPage(p))
}

// runView decodes a stored run's report.
func runView(run docent.GoldenRun) (templates.GoldenRunView, error) {
	v := templates.GoldenRunView{Run: run}
	if len(run.Report) > 0 {
		var rep eval.GoldenReport
		if err := json.Unmarshal(run.Report, &rep); err != nil {
			return v, fmt.Errorf("console: report of golden run %d: %w", run.ID, err)
		}
		v.Report = reportView(rep)
	}
	return v, nil
}

// reportView is the view of a run's report: the figures the pages show.
func reportView(r eval.GoldenReport) templates.RunReport {
	return templates.RunReport{Questions: r.Questions, Passed: r.Passed, HitAt1: r.HitAt1, HitAt5: r.HitAt5, MRR10: r.MRR10,
		NotFoundAccuracy: r.NotFoundAccuracy, DeclinedRate: r.DeclinedRate, FalseNotFoundRate: r.FalseNotFoundRate,
		CitationPrecision: r.CitationPrecision}
}
