package lograte_test

import (
	"testing"
	"time"

	"github.com/docent-hq/docent/internal/lograte"
)

// TestQuiet: of a burst, the first line is written; the others are held
// back and counted in the next line the interval lets through.
func TestQuiet(t *testing.T) {
	q := lograte.New(50 * time.Millisecond)
	var written []int
	for range 100 {
		q.Log(func(held int) { written = append(written, held) })
	}
	if len(written) != 1 || written[0] != 0 {
		t.Fatalf("a burst of 100 wrote %v, want one line", written)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(written) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		q.Log(func(held int) { written = append(written, held) })
	}
	if len(written) != 2 || written[1] < 99 {
		t.Errorf("after the interval wrote %v, want a second line counting the 99 held back", written)
	}
}
