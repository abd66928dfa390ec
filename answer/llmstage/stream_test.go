package llmstage_test

import (
	"context"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/answer/llmstage"
	"github.com/docent-hq/docent/llm/llmtest"
	"github.com/docent-hq/docent/search"
)

// fixedHits is a Retriever over fixed hits (the retrieval is not what
// these tests are about).
type fixedHits []docent.Hit

func (f fixedHits) Retrieve(context.Context, search.Request) (search.Result, error) {
	return search.Result{Hits: append([]docent.Hit(nil), f...)}, nil
}

// TestAnswerStreamThroughProviders: a streamed reply from each provider's
// server reaches the consumer in several pieces, while it is written, and
// the final answer's citations are verified: the model's citation of a
// source it was not given is gone, the rest renumbered.
func TestAnswerStreamThroughProviders(t *testing.T) {
	retrieved := fixedHits{
		{Chunk: chHotelOld, KeywordRank: 1, VectorScore: 0.7, Score: 1},
		{Chunk: chHotelNew, KeywordRank: 2, VectorScore: 0.7, Score: 0.9},
	}
	// The model answers from the sources, then cites a source it was not given.
	chat := func(c llmtest.Call) llmtest.Reply {
		r := llmtest.Scripted(c)
		return llmtest.Reply{Text: r.Text + " Managers may approve more [7]."}
	}
	for name, p := range models(t, chat) {
		t.Run(name, func(t *testing.T) {
			pl, err := answer.New(llmstage.NewStages(p.m, retrieved, llmstage.StagesOptions{NoRerank: true}), nil, answer.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var deltas []string
			a, err := pl.AnswerStream(context.Background(), docent.Question{Text: "How much are hotel stays reimbursed per night?"},
				func(d string) { deltas = append(deltas, d) })
			if err != nil {
				t.Fatal(err)
			}
			if len(deltas) < 3 {
				t.Errorf("%d deltas, want several: %q", len(deltas), deltas)
			}
			if a.Status != docent.StatusAnswered || a.Trace.CitationsRemoved != 1 {
				t.Fatalf("answer %s %q, %d citations removed", a.Status, a.Text, a.Trace.CitationsRemoved)
			}
			if strings.Contains(a.Text, "[7]") || strings.Contains(strings.Join(deltas, ""), "[7]") {
				t.Errorf("the citation of a source not given survived: final %q, streamed %q", a.Text, deltas)
			}
			// The gate puts the newer policy first (the conflict), so the model's
			// [1] is the 2026 page.
			if !strings.Contains(a.Text, "$250 per night [1]") || a.Citations[0].ChunkID != "c-hotel-new" {
				t.Errorf("final %q, citations %+v", a.Text, a.Citations)
			}
			if norm(strings.Join(deltas, "")) != norm(a.Text) {
				t.Errorf("streamed %q, final %q", strings.Join(deltas, ""), a.Text)
			}
			if calls := p.s.Calls(); len(calls) != 1 || !calls[0].Stream {
				t.Errorf("calls %+v, want one streamed call", calls)
			}
			if a.Trace.Model == "" || a.Trace.TokensOut == 0 || !strings.Contains(a.Trace.Prompt, "<<<SOURCE 1 ") {
				t.Errorf("trace model %q tokens %d prompt %q", a.Trace.Model, a.Trace.TokensOut, a.Trace.Prompt)
			}
		})
	}
}

// norm drops the spaces a removed marker leaves.
func norm(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, " .", ".")), " ")
}

// TestAnswerStreamHidesNotFound: a NOT_FOUND reply is never streamed, and
// the answer is not found.
func TestAnswerStreamHidesNotFound(t *testing.T) {
	retrieved := fixedHits{{Chunk: chHotelNew, KeywordRank: 1, VectorScore: 0.9, Score: 1}}
	for name, p := range models(t, func(llmtest.Call) llmtest.Reply {
		return llmtest.Reply{Pieces: []string{"NOT", "_FO", "UND The sources cover hotels only."}, Text: "NOT_FOUND The sources cover hotels only."}
	}) {
		t.Run(name, func(t *testing.T) {
			pl, _ := answer.New(llmstage.NewStages(p.m, retrieved, llmstage.StagesOptions{NoRerank: true}), nil, answer.Options{})
			var deltas []string
			a, err := pl.AnswerStream(context.Background(), docent.Question{Text: "What is the hotel limit for a night?"},
				func(d string) { deltas = append(deltas, d) })
			if err != nil || a.Status != docent.StatusNotFound || len(deltas) != 0 {
				t.Errorf("status %s, deltas %q, err %v", a.Status, deltas, err)
			}
		})
	}
}
