package answer

import (
	"context"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
)

func TestLiveCitations(t *testing.T) {
	srcs := []Source{{N: 1}, {N: 2}, {N: 3}}
	tests := []struct {
		name   string
		pieces []string
		want   string
	}{
		{"renumbered by first use across pieces", []string{"Sick [", "2] and vac", "ation [1]. Again [2", "]."},
			"Sick [1] and vacation [2]. Again [1]."},
		{"unknown source dropped", []string{"Fact [7]", ". Other [3]."}, "Fact . Other [1]."},
		{"groups split", []string{"Both [3, ", "1]."}, "Both [1][2]."},
		{"brackets that are not markers pass", []string{"Run [--force] or [", "x] now [1]."}, "Run [--force] or [x] now [1]."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out []string
			l := newLiveCitations(srcs, func(s string) { out = append(out, s) })
			for _, p := range tt.pieces {
				l.write(p)
			}
			if got := strings.Join(out, ""); got != tt.want {
				t.Errorf("streamed %q, want %q", got, tt.want)
			}
		})
	}
}

// streamGen streams fixed pieces.
type streamGen struct {
	fakeGenerator
	pieces []string
}

func (g *streamGen) GenerateStream(_ context.Context, req GenerateRequest, onText func(string)) (GenerateResult, error) {
	g.req = req
	for _, p := range g.pieces {
		onText(p)
	}
	return GenerateResult{Text: strings.Join(g.pieces, "")}, nil
}

func TestAnswerStream(t *testing.T) {
	hits := []docent.Hit{hit(chPTO, 1, 1, 1, 0.8), hit(chSick, 0.8, 2, 2, 0.7)}
	gen := &streamGen{pieces: []string{"Sick days are separate [2]", ". You get 25 ", "vacation days [1][9]."}}
	p, err := New(Stages{Retriever: &fakeSearcher{hits: hits}, Gate: fakeGate{}, Rule: Always{}, Generator: gen}, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var deltas []string
	a, err := p.AnswerStream(context.Background(), docent.Question{Text: "How many vacation and sick days do I get?"},
		func(d string) { deltas = append(deltas, d) })
	if err != nil {
		t.Fatal(err)
	}
	if len(deltas) != 3 {
		t.Errorf("deltas %q, want 3", deltas)
	}
	const want = "Sick days are separate [1]. You get 25 vacation days [2]."
	if a.Text != want || strings.Join(deltas, "") != want || a.Trace.CitationsRemoved != 1 {
		t.Errorf("streamed %q, final %q (removed %d), want %q", strings.Join(deltas, ""), a.Text, a.Trace.CitationsRemoved, want)
	}
	checkCitations(t, a)
	// Answer never streams.
	deltas = nil
	if _, err := p.Answer(context.Background(), docent.Question{Text: "How many vacation and sick days do I get?"}); err != nil || deltas != nil {
		t.Errorf("Answer streamed %q, %v", deltas, err)
	}
}
