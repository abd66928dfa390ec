package answer

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
)

func TestCitationsVerify(t *testing.T) {
	srcs := []Source{{N: 1, Hit: docent.Hit{Chunk: chPTO}}, {N: 2, Hit: docent.Hit{Chunk: chSick}}, {N: 3, Hit: docent.Hit{Chunk: chVPN}}}
	tests := []struct {
		name      string
		text      string
		want      string
		cites     []string // chunk IDs in citation order
		removed   int
		uncited   int
		logRemove string // substring of the warning, "" for none
	}{
		{name: "out-of-range marker removed",
			text: "Employees get 25 days [1]. Sick days are separate [7].", want: "Employees get 25 days [1]. Sick days are separate.",
			cites: []string{"c-pto"}, removed: 1, uncited: 1, logRemove: "markers=[7] sources=3"},
		{name: "renumbered in order of first use",
			text:  "Sick days do not carry over [2]. Vacation carries over up to 5 days [1]. Both need Workday [2][1].",
			want:  "Sick days do not carry over [1]. Vacation carries over up to 5 days [2]. Both need Workday [1][2].",
			cites: []string{"c-sick", "c-pto"}},
		{name: "grouped and ranged markers split",
			text:  "Leave is requested in Workday [3, 1]. Resets are limited per device [2-3].",
			want:  "Leave is requested in Workday [1][2]. Resets are limited per device [3][1].",
			cites: []string{"c-vpn", "c-pto", "c-sick"}},
		{name: "zero and repeated bad markers all removed",
			text: "Nothing here [0] [9] [9].", want: "Nothing here.", removed: 3, uncited: 0, logRemove: "markers=\"[0 9 9]\""},
		{name: "uncited claims counted",
			text: "You get 25 vacation days per year [1]. Unused days are paid out when you leave. Ask your manager first.\n" +
				"Steps:\n- Open Workday and request leave [1].\n- Your manager approves within three days.\nAnything else?",
			want: "You get 25 vacation days per year [1]. Unused days are paid out when you leave. Ask your manager first.\n" +
				"Steps:\n- Open Workday and request leave [1].\n- Your manager approves within three days.\nAnything else?",
			cites: []string{"c-pto"}, uncited: 3},
		{name: "marker after the period cites the sentence before it",
			text:  "Employees get 25 vacation days. [1] Sick days are separate from vacation. [2]",
			want:  "Employees get 25 vacation days. [1] Sick days are separate from vacation. [2]",
			cites: []string{"c-pto", "c-sick"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			v, err := Citations{Log: slog.New(slog.NewTextHandler(&logs, nil))}.Verify(context.Background(), VerifyRequest{Text: tt.text, Sources: srcs})
			if err != nil {
				t.Fatal(err)
			}
			if v.Text != tt.want {
				t.Errorf("text\n got %q\nwant %q", v.Text, tt.want)
			}
			var ids []string
			for i, c := range v.Citations {
				ids = append(ids, c.ChunkID)
				if c.N != i+1 {
					t.Errorf("citation %d numbered %d", i, c.N)
				}
			}
			if strings.Join(ids, ",") != strings.Join(tt.cites, ",") {
				t.Errorf("citations %v, want %v", ids, tt.cites)
			}
			if v.Removed != tt.removed || v.Uncited != tt.uncited {
				t.Errorf("removed %d uncited %d, want %d and %d", v.Removed, v.Uncited, tt.removed, tt.uncited)
			}
			if tt.logRemove == "" && logs.Len() > 0 || tt.logRemove != "" && !strings.Contains(logs.String(), tt.logRemove) {
				t.Errorf("log %q, want %q", logs.String(), tt.logRemove)
			}
		})
	}
}

// TestAnswerUncitedPolicy: an answer whose only citation names no given
// source is not found by default, and flagged uncertain (closest page,
// person offered, no fact asserted) when configured so.
func TestAnswerUncitedPolicy(t *testing.T) {
	hits := []docent.Hit{hit(chPTO, 1, 1, 1, 0.8), hit(chSick, 0.8, 2, 2, 0.7)}
	for _, tt := range []struct {
		policy docent.Status
		want   docent.Status
		text   []string
	}{
		{"", docent.StatusNotFound, []string{NotFoundText}},
		{docent.StatusNotFound, docent.StatusNotFound, []string{NotFoundText}},
		{docent.StatusUncertain, docent.StatusUncertain, []string{UncertainLead[:len(UncertainLead)-1], "[1] Time off › Vacation", "[2] Sick leave", HandoffOffer}},
	} {
		t.Run(string(tt.want)+"/"+string(tt.policy), func(t *testing.T) {
			gen := &fakeGenerator{text: "You probably get 30 days [7]. It depends on your contract."}
			p := pipeline(t, &fakeSearcher{hits: hits}, gen, nil, nil, Options{Uncited: tt.policy})
			a, err := p.Answer(context.Background(), docent.Question{Text: "How many vacation days do I get per year?"})
			if err != nil {
				t.Fatal(err)
			}
			if a.Status != tt.want {
				t.Fatalf("status %s, want %s (%q)", a.Status, tt.want, a.Text)
			}
			for _, s := range tt.text {
				if !strings.Contains(a.Text, s) {
					t.Errorf("text %q lacks %q", a.Text, s)
				}
			}
			if strings.Contains(a.Text, "30 days") {
				t.Errorf("the uncited claim reached the asker: %q", a.Text)
			}
			if a.Trace.CitationsRemoved != 1 || a.Trace.Uncited != 2 {
				t.Errorf("trace removed %d uncited %d, want 1 and 2", a.Trace.CitationsRemoved, a.Trace.Uncited)
			}
		})
	}
	if _, err := New(Stages{Retriever: &fakeSearcher{}, Gate: fakeGate{}, Rule: Always{}, Generator: quoteFirst{}}, nil, Options{Uncited: docent.StatusAnswered}); err == nil {
		t.Error("Options.Uncited answered accepted")
	}
}
