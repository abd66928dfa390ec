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
	deliveries *prometheus.CounterVec
	stages     *prometheus.HistogramVec
	syncRuns   *prometheus.CounterVec
	syncDocs   *prometheus.CounterVec
	syncLength *prometheus.HistogramVec
	syncHTTP   *prometheus.CounterVec
	syncWaited *prometheus.CounterVec

	syncFailures    *prometheus.GaugeVec
	syncLastSuccess *prometheus.GaugeVec
	syncStale       *prometheus.GaugeVec
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
			Help: "Questions refused before any work (503 on HTTP, the busy reply in chat), by platform and reason (not_ready, overloaded).",
		}, []string{"platform", "reason"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "docent_chat_deliveries_total",
			Help: "Chat answers posted to their thread or not, by platform and result (posted, failed).",
		}, []string{"platform", "result"}),
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
		syncHTTP: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "docent_sync_requests_total",
			Help: "HTTP requests remote sources made while syncing, by source and kind (sent: every request; retry: sent again after a failure; rate_limited: answers that asked to wait).",
		}, []string{"source", "kind"}),
		syncWaited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "docent_sync_wait_seconds_total",
			Help: "Time remote sources spent waiting on backoff, Retry-After and their rate limiter, by source.",
		}, []string{"source"}),
		syncFailures: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "docent_sync_consecutive_failures",
			Help: "Failed sync runs of a source since its last successful one.",
		}, []string{"source"}),
		syncLastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "docent_sync_last_success_timestamp_seconds",
			Help: "When a source's last successful sync finished (Unix time; 0 if none has).",
		}, []string{"source"}),
		syncStale: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "docent_sync_stale",
			Help: "1 when a source has had no successful sync in its last scheduled runs (3 by default), else 0.",
		}, []string{"source"}),
	}
	reg.MustRegister(m.turns, m.shed, m.deliveries, m.stages, m.syncRuns, m.syncDocs, m.syncLength, m.syncHTTP, m.syncWaited,
		m.syncFailures, m.syncLastSuccess, m.syncStale,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// ObserveShed counts a question from platform refused before any work.
func (m *Metrics) ObserveShed(platform, reason string) {
	m.shed.WithLabelValues(platform, reason).Inc()
}

// ObserveDelivery counts a chat answer posted to its thread, or not.
func (m *Metrics) ObserveDelivery(platform string, posted bool) {
	result := "posted"
	if !posted {
		result = "failed"
	}
	m.deliveries.WithLabelValues(platform, result).Inc()
}

// WatchAdmission serves the admission control's state as gauges:
// docent_admission_running (answers running) and docent_admission_waiting
// (questions queued), read from stats at each scrape.
func (m *Metrics) WatchAdmission(stats func() (running, waiting int)) {
	m.Registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "docent_admission_running",
			Help: "Questions being answered now, across every entrance."},
			func() float64 { r, _ := stats(); return float64(r) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "docent_admission_waiting",
			Help: "Questions waiting for the answer pipeline, across every entrance."},
			func() float64 { _, w := stats(); return float64(w) }))
}

// SeedTurns adds n turns of platform and status to docent_turns_total
// without stage latencies: at start, the turns the store already holds,
// so that the counter goes on from them instead of from 0.
func (m *Metrics) SeedTurns(platform string, status docent.Status, n int) {
	if platform == "" {
		platform = "unknown"
	}
	m.turns.WithLabelValues(platform, string(status)).Add(float64(n))
}

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

// SyncCounts are the per-run counts a sync reports: documents by
// outcome, and what a remote source's requests cost.
type SyncCounts struct {
	Added, Updated, Unchanged, Deleted, Failed int
	// Requests, Retries and RateLimited count HTTP requests (0 for local
	// sources); Waited is the time spent waiting between them.
	Requests, Retries, RateLimited int
	Waited                         time.Duration
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
	if c.Requests > 0 {
		m.syncHTTP.WithLabelValues(source, "sent").Add(float64(c.Requests))
		m.syncHTTP.WithLabelValues(source, "retry").Add(float64(c.Retries))
		m.syncHTTP.WithLabelValues(source, "rate_limited").Add(float64(c.RateLimited))
		m.syncWaited.WithLabelValues(source).Add(c.Waited.Seconds())
	}
}

// SyncHealth is how a source's syncs have been going, as the scheduler
// reports it.
type SyncHealth struct {
	// ConsecutiveFailures counts failed runs since the last success.
	ConsecutiveFailures int
	// LastSuccess is when the last successful run finished (zero if none).
	LastSuccess time.Time
	// Stale is true when no run succeeded in the source's last scheduled
	// runs.
	Stale bool
}

// SetSyncHealth exports a source's health as gauges.
func (m *Metrics) SetSyncHealth(source string, h SyncHealth) {
	m.syncFailures.WithLabelValues(source).Set(float64(h.ConsecutiveFailures))
	last := 0.0
	if !h.LastSuccess.IsZero() {
		last = float64(h.LastSuccess.UnixNano()) / 1e9
	}
	m.syncLastSuccess.WithLabelValues(source).Set(last)
	stale := 0.0
	if h.Stale {
		stale = 1
	}
	m.syncStale.WithLabelValues(source).Set(stale)
}
