package loadgen_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docent-hq/docent/internal/loadgen"
)

// TestRun drives a server that answers 200, 503 with and without
// Retry-After, and 500, and checks every response is counted where it
// belongs and percentiles are ordered.
func TestRun(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.URL.Path != "/api/ask" || !strings.Contains(string(b), `"question"`) {
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		switch i := n.Add(1); {
		case i == 5:
			w.Header().Set("Retry-After", "1")
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case i == 6:
			http.Error(w, "busy", http.StatusServiceUnavailable) // no Retry-After
		case i == 7:
			http.Error(w, "boom", http.StatusInternalServerError)
		default:
			time.Sleep(2 * time.Millisecond)
			w.Write([]byte(`{"status":"answered"}`))
		}
	}))
	defer srv.Close()
	rep, err := loadgen.Run(context.Background(), loadgen.Options{URL: srv.URL, Clients: 4, Duration: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", rep)
	// Requests in flight at the end are waited for and counted.
	if seen := int(n.Load()); rep.Requests != seen ||
		rep.Status[200] != rep.Requests-3 || rep.Status[503] != 2 || rep.Status[500] != 1 {
		t.Errorf("requests %d (server saw %d), statuses %v", rep.Requests, seen, rep.Status)
	}
	if rep.NoRetryAfter != 1 || rep.ServerErrors() != 3 || len(rep.Errors) != 0 {
		t.Errorf("no Retry-After %d, >=500 %d, errors %v; want 1, 3, none", rep.NoRetryAfter, rep.ServerErrors(), rep.Errors)
	}
	if !(rep.P50 > 0 && rep.P50 <= rep.P95 && rep.P95 <= rep.P99 && rep.P99 <= rep.Max) || rep.RPS() <= 0 {
		t.Errorf("latencies p50 %v p95 %v p99 %v max %v, %.1f req/s", rep.P50, rep.P95, rep.P99, rep.Max, rep.RPS())
	}
	if rep.Elapsed < 1500*time.Millisecond || rep.Elapsed > 5*time.Second {
		t.Errorf("run took %v, want about 1.5s", rep.Elapsed)
	}
	if share := rep.Share(200); share <= 0.5 || share >= 1 {
		t.Errorf("200 share %.2f", share)
	}
}

func TestRunRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	rep, err := loadgen.Run(context.Background(), loadgen.Options{URL: url, Clients: 2, Duration: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Errors["connection refused"] == 0 || rep.Errors["connection refused"] != rep.Requests {
		t.Errorf("errors %v of %d requests, want all connection refused", rep.Errors, rep.Requests)
	}
}

func TestReadProc(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	p, err := loadgen.ReadProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	q, err := loadgen.ReadProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if p.RSS < 1<<20 || p.Files < 3 || q.Files != p.Files+1 {
		t.Errorf("RSS %d, files %d then %d with one more open", p.RSS, p.Files, q.Files)
	}
}

func TestCounter(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `# HELP docent_turns_total Questions.
# TYPE docent_turns_total counter
docent_turns_total{platform="api",status="answered"} 7
docent_turns_total{platform="api",status="not_found"} 3
docent_turns_total_other 100
`)
	}))
	defer srv.Close()
	if v, err := loadgen.Counter(srv.URL, "docent_turns_total"); err != nil || v != 10 {
		t.Errorf("Counter = %v, %v; want 10", v, err)
	}
}

// TestRunWaitsForSlowAnswers: a run shorter than one answer still counts
// each client's answer.
func TestRunWaitsForSlowAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	rep, err := loadgen.Run(context.Background(), loadgen.Options{URL: srv.URL, Clients: 3, Duration: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 3 || rep.Status[200] != 3 || rep.P50 < 300*time.Millisecond || rep.Elapsed < 300*time.Millisecond {
		t.Errorf("report %+v: want the 3 slow answers counted", rep)
	}
}
