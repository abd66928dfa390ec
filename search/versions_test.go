package search

import (
	"testing"
	"time"
)

func TestNewer(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	var zero time.Time
	tests := []struct {
		name    string
		t, than time.Time
		want    bool
	}{
		{"a later day", at("2026-03-02T08:00:00Z"), at("2026-03-01T20:00:00Z"), true},
		{"an earlier day", at("2026-03-01T20:00:00Z"), at("2026-03-02T08:00:00Z"), false},
		{"microseconds later, the same day", at("2026-03-01T10:00:00.000002Z"), at("2026-03-01T10:00:00.000001Z"), false},
		{"hours later, the same day", at("2026-03-01T23:00:00Z"), at("2026-03-01T01:00:00Z"), false},
		{"days compared in UTC", at("2026-03-02T00:30:00+02:00"), at("2026-03-01T20:00:00Z"), false},
		{"a known time against an unknown one", at("2026-03-01T10:00:00Z"), zero, true},
		{"an unknown time", zero, at("2026-03-01T10:00:00Z"), false},
		{"both unknown", zero, zero, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Newer(tt.t, tt.than); got != tt.want {
				t.Errorf("Newer(%v, %v) = %v, want %v", tt.t, tt.than, got, tt.want)
			}
		})
	}
}
