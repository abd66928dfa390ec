package memtrim

import (
	"testing"
	"time"
)

// TestTrimmer: memory is given back once after each burst, when its last
// question is idle old, never during a burst and never twice.
func TestTrimmer(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var last time.Time
	frees := 0
	tr := &Trimmer{Last: func() time.Time { return last }, Free: func() { frees++ }}
	steps := []struct {
		name  string
		last  time.Time // when the last question ended
		now   time.Time
		wantN int // frees so far
	}{
		{"no question yet", time.Time{}, t0, 0},
		{"during a burst", t0, t0.Add(time.Second), 0},
		{"just under idle", t0, t0.Add(15*time.Second - 1), 0},
		{"burst over", t0, t0.Add(15 * time.Second), 1},
		{"still idle", t0, t0.Add(time.Minute), 1},
		{"a new burst", t0.Add(2 * time.Minute), t0.Add(2*time.Minute + time.Second), 1},
		{"new burst over", t0.Add(2 * time.Minute), t0.Add(3 * time.Minute), 2},
	}
	for _, s := range steps {
		last = s.last
		did := tr.Check(s.now)
		if frees != s.wantN {
			t.Fatalf("%s: %d frees, want %d", s.name, frees, s.wantN)
		}
		if did != (s.name == "burst over" || s.name == "new burst over") {
			t.Errorf("%s: check reported %v", s.name, did)
		}
	}
}
