package offline

import "testing"

// TestWhereNeedsAName: "in", "on" or "at" say where when a name
// follows ("in Skedda"), not before any word ("at most 2 hours"); the
// pattern is case-insensitive, so the capital is asked for explicitly.
func TestWhereNeedsAName(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"Book it in Skedda.", true},
		{"Pick it up at the Hub.", true},
		{"A session lasts at most 2 hours.", false},
		{"Sessions end on time.", false},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			if got := whereType.holds(unit{Text: tt.text}); got != tt.want {
				t.Errorf("where holds = %v, want %v", got, tt.want)
			}
		})
	}
}
