package eval

import (
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

func TestPeakRSS(t *testing.T) {
	before, err := PeakRSS()
	if err != nil {
		t.Skipf("no procfs: %v", err)
	}
	if before <= 0 {
		t.Fatalf("PeakRSS = %d, want > 0", before)
	}
	if err := ResetPeakRSS(); err != nil {
		t.Skipf("cannot reset peak rss here: %v", err)
	}
	after, err := PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	if after <= 0 || after > before {
		t.Fatalf("after reset PeakRSS = %d, want in (0, %d]", after, before)
	}
}
