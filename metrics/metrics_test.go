package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/docent-hq/docent"
)

func TestObserve(t *testing.T) {
	m := New()
	m.ObserveTurn("slack", docent.Answer{Status: docent.StatusAnswered, Trace: docent.Trace{Stages: []docent.Stage{
		{Name: "retrieve", Duration: 3 * time.Millisecond}, {Name: "generate", Duration: time.Millisecond},
	}}})
	m.ObserveTurn("", docent.Answer{Status: docent.StatusNotFound})
	m.ObserveSync("handbook", true, SyncCounts{Added: 3, Unchanged: 2, Failed: 1}, time.Second)
	m.ObserveSync("wiki", false, SyncCounts{}, time.Second)
	m.ObserveShed("api", "overloaded")
	m.ObserveShed("api", "overloaded")
	m.ObserveShed("slack", "overloaded")
	m.ObserveDelivery("slack", true)
	m.ObserveDelivery("discord", false)
	m.ObserveSync("wiki", true, SyncCounts{Updated: 1, Requests: 12, Retries: 2, RateLimited: 1, Waited: 2500 * time.Millisecond}, time.Second)
	m.SetSyncHealth("wiki", SyncHealth{ConsecutiveFailures: 3, LastSuccess: time.Unix(1767000000, 0), Stale: true})
	m.SetSyncHealth("handbook", SyncHealth{})

	tests := []struct {
		name string
		got  float64
		want float64
	}{
		{"answered slack turns", testutil.ToFloat64(m.turns.WithLabelValues("slack", "answered")), 1},
		{"not-found turns without platform", testutil.ToFloat64(m.turns.WithLabelValues("unknown", "not_found")), 1},
		{"ok runs", testutil.ToFloat64(m.syncRuns.WithLabelValues("handbook", "ok")), 1},
		{"failed runs", testutil.ToFloat64(m.syncRuns.WithLabelValues("wiki", "failed")), 1},
		{"added docs", testutil.ToFloat64(m.syncDocs.WithLabelValues("handbook", "added")), 3},
		{"failed docs", testutil.ToFloat64(m.syncDocs.WithLabelValues("handbook", "failed")), 1},
		{"shed asks", testutil.ToFloat64(m.shed.WithLabelValues("api", "overloaded")), 2},
		{"shed chat questions", testutil.ToFloat64(m.shed.WithLabelValues("slack", "overloaded")), 1},
		{"posted answers", testutil.ToFloat64(m.deliveries.WithLabelValues("slack", "posted")), 1},
		{"undelivered answers", testutil.ToFloat64(m.deliveries.WithLabelValues("discord", "failed")), 1},
		{"requests sent", testutil.ToFloat64(m.syncHTTP.WithLabelValues("wiki", "sent")), 12},
		{"retries", testutil.ToFloat64(m.syncHTTP.WithLabelValues("wiki", "retry")), 2},
		{"rate limited", testutil.ToFloat64(m.syncHTTP.WithLabelValues("wiki", "rate_limited")), 1},
		{"waited", testutil.ToFloat64(m.syncWaited.WithLabelValues("wiki")), 2.5},
		{"consecutive failures", testutil.ToFloat64(m.syncFailures.WithLabelValues("wiki")), 3},
		{"last success", testutil.ToFloat64(m.syncLastSuccess.WithLabelValues("wiki")), 1767000000},
		{"stale", testutil.ToFloat64(m.syncStale.WithLabelValues("wiki")), 1},
		{"never succeeded", testutil.ToFloat64(m.syncLastSuccess.WithLabelValues("handbook")), 0},
		{"healthy", testutil.ToFloat64(m.syncStale.WithLabelValues("handbook")), 0},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	n, err := testutil.GatherAndCount(m.Registry, "docent_answer_stage_seconds")
	if err != nil || n != 2 {
		t.Errorf("stage histograms = %d (%v), want 2 (retrieve, generate)", n, err)
	}
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(`
# HELP docent_turns_total Questions answered and stored as turns, by platform and status (answered, uncertain, not_found, error).
# TYPE docent_turns_total counter
docent_turns_total{platform="slack",status="answered"} 1
docent_turns_total{platform="unknown",status="not_found"} 1
`), "docent_turns_total"); err != nil {
		t.Error(err)
	}
}
