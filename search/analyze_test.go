package search

import (
	"slices"
	"strings"
	"testing"
)

func TestAnalyze(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"empty", "", nil},
		{"stopwords dropped", "the and of a", nil},
		{"stems and lowercases", "Running Runners ran", []string{"run", "runner", "ran"}},
		{"splits punctuation", "COVID-19 vaccines, (mRNA)", []string{"covid", "19", "vaccin", "mrna"}},
		{"drops one letter words keeps digits", "x 7 b12", []string{"7", "b12"}},
		{"unicode letters", "Café naïve", []string{"café", "naïv"}},
		{"long term cut", strings.Repeat("é", 30), []string{strings.Repeat("é", 20)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Analyze(tc.in); !slices.Equal(got, tc.want) {
				t.Fatalf("Analyze(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
