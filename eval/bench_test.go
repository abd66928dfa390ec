package eval

import (
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	got := Summarize(ds)
	want := Latency{N: 100, P50: 50 * time.Millisecond, P95: 95 * time.Millisecond, P99: 99 * time.Millisecond}
	if got != want {
		t.Fatalf("Summarize = %+v, want %+v", got, want)
	}
}

var sink []byte

func TestPeakRSS(t *testing.T) {
	debug.FreeOSMemory() // return earlier runs' memory, so touching pages below faults them in again
	if err := ResetPeakRSS(); err != nil {
		t.Skipf("cannot reset peak rss here: %v", err)
	}
	before, err := PeakRSS()
	if err != nil {
		t.Skipf("no procfs: %v", err)
	}
	if before <= 0 {
		t.Fatalf("PeakRSS = %d, want > 0", before)
	}
	// Touch 64 MiB: the peak must grow by about that much.
	const grow = 64 << 20
	sink = make([]byte, grow)
	for i := 0; i < len(sink); i += 4096 {
		sink[i] = 1
	}
	after, err := PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	if after < before+grow*9/10 {
		t.Errorf("PeakRSS after touching 64 MiB = %d, want >= %d", after, before+grow*9/10)
	}
	sink = nil
}

func benchFixture(index time.Duration, rss int64, p95 time.Duration) BenchReport {
	return BenchReport{
		Engine: "e", Dataset: "set", Docs: 1000, Index: index, PeakRSS: rss,
		Runs: []BenchRun{
			{Mode: "bm25", Queries: "test", Latency: Latency{N: 3, P50: p95 / 2, P95: p95, P99: p95}, NDCG10: 0.7, Recall100: 0.9},
			{Mode: "default", Queries: "test", Latency: Latency{N: 3, P50: p95, P95: 2 * p95, P99: 2 * p95}, NDCG10: 0.72, Recall100: 0.95},
			{Mode: "answer", Queries: "test", Latency: Latency{N: 3, P50: 3 * p95, P95: 4 * p95, P99: 4 * p95}},
		},
	}
}

func TestMedianReport(t *testing.T) {
	reps := []BenchReport{
		benchFixture(3*time.Second, 300, 3*time.Millisecond),
		benchFixture(1*time.Second, 100, 1*time.Millisecond),
		benchFixture(2*time.Second, 200, 9*time.Millisecond),
	}
	got := MedianReport(reps)
	if got.Index != 2*time.Second || got.PeakRSS != 200 {
		t.Errorf("index %v rss %d, want 2s and 200", got.Index, got.PeakRSS)
	}
	if r, _ := got.Run("bm25", "test"); r.Latency.P95 != 3*time.Millisecond || r.NDCG10 != 0.7 {
		t.Errorf("bm25 run %+v, want p95 3ms and the first report's nDCG", r)
	}
	if reps[0].Runs[0].Latency.P95 != 3*time.Millisecond {
		t.Error("MedianReport changed its input")
	}
	if got.DocsPerSec() != 500 {
		t.Errorf("DocsPerSec = %v, want 500", got.DocsPerSec())
	}
}

func TestWriteBenchComparison(t *testing.T) {
	d := benchFixture(2*time.Second, 300<<20, 2*time.Millisecond)
	b := BenchReport{Engine: "bleve", Dataset: "set", Docs: 1000, Index: time.Second, PeakRSS: 200 << 20,
		Runs: []BenchRun{{Mode: "bm25", Queries: "test", Latency: Latency{P50: time.Millisecond, P95: 4 * time.Millisecond}, NDCG10: 0.35, Recall100: 0.9}}}
	var out strings.Builder
	if err := WriteBenchComparison(&out, d, b, 3); err != nil {
		t.Fatal(err)
	}
	lines := map[string][]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		cols := strings.Fields(l)
		for i := range cols {
			// Rows are named by their leading words; find where the figures start.
			if strings.ContainsAny(cols[i][:1], "0123456789") {
				lines[strings.Join(cols[:i], " ")] = cols[i:]
				break
			}
		}
	}
	for _, tc := range []struct {
		row  string
		want []string
	}{
		{"index docs/s", []string{"500", "1000", "0.50×"}},
		{"peak RSS", []string{"300", "MiB", "200", "MiB", "1.50×"}},
		{"test bm25 query p95", []string{"2ms", "4ms", "0.50×"}},
		{"test default query p95", []string{"4ms", "4ms", "1.00×"}},
		{"test bm25 nDCG@10", []string{"0.7000", "0.3500", "2.00×"}},
		{"test default R@100", []string{"0.9500", "0.9000", "1.06×"}},
	} {
		if got := lines[tc.row]; !slices.Equal(got, tc.want) {
			t.Errorf("row %q = %q, want %q\n%s", tc.row, got, tc.want, out.String())
		}
	}
	if !strings.Contains(out.String(), "3 round(s)") || strings.Contains(out.String(), "answer nDCG") {
		t.Errorf("header or answer rows wrong:\n%s", out.String())
	}
}
