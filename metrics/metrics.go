// Package metrics holds docent's Prometheus instruments: answered turns by
// status, per-stage latency histograms and sync counters. Callers pass the
// values they already have (an Answer, a sync result); nothing here reaches
// into other packages.
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/docent-hq/docent"
)

// Metrics is the set of docent instruments registered on one registry.
type Metrics struct {
	// Registry is what /metrics serves.
	Registry *prometheus.Registry

	turns      *prometheus.CounterVec
	shed       *prometheus.CounterVec
	stages     *prometheus.HistogramVec
	syncRuns   *prometheus.CounterVec
	syncDocs   *prometheus.CounterVec
	syncLength *prometheus.HistogramVec
}

// New creates the instruments on a fresh registry, with Go runtime and
// process collectors.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		Registry: reg,
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "docent_turns_total",
			Help: "Questions answered and stored as turns, by platform and status (answered, uncertain, not_found, error).",
		}, []string{"platform", "status"}),
		shed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "docent_asks_shed_total",
			Help: "Questions refused with 503 before any work, by reason (not_ready, overloaded).",
		}, []string{"reason"}),
		stages: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "docent_answer_stage_seconds",
			Help:    "Latency of each answer pipeline stage.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"stage"}),
		syncRuns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "docent_sync_runs_total",
			Help: "Sync runs by source and outcome (ok, failed).",
		}, []string{"source", "status"}),
		syncDocs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "docent_sync_documents_total",
			Help: "Documents seen by sync runs, by source and result (added, updated, unchanged, deleted, failed).",
		}, []string{"source", "result"}),
		syncLength: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "docent_sync_duration_seconds",
			Help:    "Duration of sync runs by source.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 14),
		}, []string{"source"}),
	}
	reg.MustRegister(m.turns, m.shed, m.stages, m.syncRuns, m.syncDocs, m.syncLength,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// ObserveShed counts a question refused with 503 before any work.
func (m *Metrics) ObserveShed(reason string) { m.shed.WithLabelValues(reason).Inc() }

// ObserveTurn counts a stored turn by its status and records its stage
// latencies.
func (m *Metrics) ObserveTurn(platform string, a docent.Answer) {
	if platform == "" {
		platform = "unknown"
	}
	m.turns.WithLabelValues(platform, string(a.Status)).Inc()
	for _, s := range a.Trace.Stages {
		m.stages.WithLabelValues(s.Name).Observe(s.Duration.Seconds())
	}
}

// SyncCounts are the per-run document counts a sync reports.
type SyncCounts struct {
	Added, Updated, Unchanged, Deleted, Failed int
}

// ObserveSync records one finished sync run of source.
func (m *Metrics) ObserveSync(source string, ok bool, c SyncCounts, d time.Duration) {
	status := "ok"
	if !ok {
		status = "failed"
	}
	m.syncRuns.WithLabelValues(source, status).Inc()
	for result, n := range map[string]int{
		"added": c.Added, "updated": c.Updated, "unchanged": c.Unchanged,
		"deleted": c.Deleted, "failed": c.Failed,
	} {
		m.syncDocs.WithLabelValues(source, result).Add(float64(n))
	}
	m.syncLength.WithLabelValues(source).Observe(d.Seconds())
}
