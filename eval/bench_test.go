package eval

import (
	"runtime/debug"
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
