package eval

import (
	"regexp"
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
	// Each row of the speed part: its name, then cells separated by at
	// least two spaces.
	speed, _, _ := strings.Cut(out.String(), "quality")
	rows := map[string][]string{}
	for _, l := range strings.Split(speed, "\n") {
		var cells []string
		for _, c := range regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(l), -1) {
			cells = append(cells, c)
		}
		if len(cells) > 1 {
			rows[cells[0]] = cells[1:]
		}
	}
	for _, tc := range []struct {
		row  string
		want []string
	}{
		{"index docs/s", []string{"500", "1000", "0.50×"}},
		{"peak RSS", []string{"300 MiB", "200 MiB", "1.50×"}},
		{"test bm25", []string{"1ms / 2ms", "1ms / 4ms", "1.00× / 0.50×"}},
		{"test default", []string{"2ms / 4ms", "1ms / 4ms", "2.00× / 1.00×"}},
		{"test answer", []string{"6ms / 8ms", "-", "-"}},
	} {
		if got := rows[tc.row]; !slices.Equal(got[:3], tc.want) {
			t.Errorf("row %q = %q, want %q\n%s", tc.row, got, tc.want, out.String())
		}
	}
	// Quality rows follow the latency rows under the same names.
	q := out.String()[strings.Index(out.String(), "quality"):]
	for _, want := range []string{"test bm25  0.7000 / 0.9000  0.3500 / 0.9000  2.00× / 1.00×", "test default  0.7200 / 0.9500  0.3500 / 0.9000  2.06× / 1.06×"} {
		if !strings.Contains(regexp.MustCompile(`\s{2,}`).ReplaceAllString(q, "  "), want) {
			t.Errorf("quality lacks %q:\n%s", want, q)
		}
	}
	if !strings.Contains(out.String(), "3 round(s)") || strings.Contains(q, "answer") {
		t.Errorf("header or answer quality row wrong:\n%s", out.String())
	}
}
