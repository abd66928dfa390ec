package eval

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// Latency summarizes a set of timings by the nearest-rank percentiles.
type Latency struct {
	N   int           `json:"n"`
	P50 time.Duration `json:"p50_ns"`
	P95 time.Duration `json:"p95_ns"`
	P99 time.Duration `json:"p99_ns"`
}

// Summarize returns the percentiles of ds.
func Summarize(ds []time.Duration) Latency {
	return Latency{N: len(ds), P50: Percentile(ds, 50), P95: Percentile(ds, 95), P99: Percentile(ds, 99)}
}

// String renders the percentiles for a table.
func (l Latency) String() string {
	return fmt.Sprintf("p50 %s  p95 %s  p99 %s", FormatDuration(l.P50), FormatDuration(l.P95), FormatDuration(l.P99))
}

// PeakRSS returns the process's peak resident set size in bytes (VmHWM
// from /proc/self/status). It returns an error where procfs is missing.
func PeakRSS() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("eval: peak rss: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) >= 2 && string(f[0]) == "VmHWM:" {
			kb, err := strconv.ParseInt(string(f[1]), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("eval: peak rss: %w", err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("eval: peak rss: no VmHWM in /proc/self/status")
}

// ResetPeakRSS resets the peak RSS mark, so that the next PeakRSS reports
// the peak of what runs in between (Linux: "5" to /proc/self/clear_refs).
func ResetPeakRSS() error {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return fmt.Errorf("eval: reset peak rss: %w", err)
	}
	return nil
}
