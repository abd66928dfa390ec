package main

import (
	"testing"
	"time"

	"github.com/docent-hq/docent/connectors"
)

func TestProgressLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    connectors.Progress
		want string
	}{
		{"while listing the total is unknown",
			connectors.Progress{Source: "wiki", Listing: true, Done: 40, Elapsed: 2 * time.Second},
			"wiki: 40 docs, listing · 20.0 docs/s"},
		{"after the listing",
			connectors.Progress{Source: "wiki", Done: 40, Total: 50, Elapsed: 4 * time.Second},
			"wiki: 40/50 docs · 10.0 docs/s"},
		{"no time elapsed", connectors.Progress{Source: "hb", Total: 3}, "hb: 0/3 docs · 0.0 docs/s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := progressLine(tt.p); got != tt.want {
				t.Errorf("progressLine = %q, want %q", got, tt.want)
			}
		})
	}
}
