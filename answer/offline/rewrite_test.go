package offline

import (
	"context"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
)

// TestRespellAcronymsAndCodes: an acronym or a code written in a way
// no chunk holds is respelled as the docs write it (Corpus.Variant), like
// any other word; a capitalised name the docs lack is not, even when the
// initials of a heading spell it.
func TestRespellAcronymsAndCodes(t *testing.T) {
	corp := FixedCorpus(NewCorpus([]docent.Chunk{
		{ID: "a", DocID: "lounge.md", Title: "Member Lounge Access", Text: "Member Lounge Access\n\nThe lounge opens at 9."},
		{ID: "b", DocID: "laser.md", Title: "Laser codes", Text: "Laser codes\n\nLZ-30 means the coolant is too warm."},
		{ID: "c", DocID: "net.md", Title: "Data and Network Access", Text: "Data and Network Access\n\nAsk the board for a login."},
	}))
	tests := []struct{ question, query string }{
		{"who can use MLA", "who can use member lounge access"},
		{"what does LZ30 mean", "what does lz-30 mean"},
		{"can I ask Dana for a login", "can I ask Dana for a login"},
	}
	for _, tt := range tests {
		t.Run(tt.question, func(t *testing.T) {
			rw, err := Standalone{Corpus: corp}.Rewrite(context.Background(), answer.RewriteRequest{Question: tt.question})
			if err != nil {
				t.Fatal(err)
			}
			if rw.Query != tt.query {
				t.Errorf("Query %q, want %q", rw.Query, tt.query)
			}
		})
	}
}
