package answer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// outage is what a provider returns after its retries: an error wrapping
// ErrUnavailable.
var outage = fmt.Errorf("gemini: generate: provider unavailable: gave up after 4 attempts: %w", ErrUnavailable)

// modeSearcher fails every mode but keyword search, as a Retriever does
// when its embedder is down.
type modeSearcher struct {
	hits  []docent.Hit
	modes []search.Mode
}

func (m *modeSearcher) Retrieve(_ context.Context, req search.Request) (search.Result, error) {
	m.modes = append(m.modes, req.Mode)
	if req.Mode != search.ModeKeyword {
		return search.Result{}, fmt.Errorf("search: retrieve: embed query: %w", outage)
	}
	return search.Result{Hits: slices.Clone(m.hits)}, nil
}

func TestAnswerDegradesOnProviderOutage(t *testing.T) {
	hits := []docent.Hit{hit(chPTO, 1, 1, 1, 0.8), hit(chSick, 0.8, 2, 2, 0.7)}
	down := stageFuncs{
		rewrite: func(RewriteRequest) (Rewrite, error) { return Rewrite{}, outage },
		rerank:  func(RerankRequest) (Reranked, error) { return Reranked{}, outage },
	}
	const q = "How many vacation days do I get per year?"
	tests := []struct {
		name       string
		stages     Stages
		question   string
		wantStatus docent.Status
		wantText   []string
		wantErr    []string // substrings of Trace.Error
		detail     map[string]string
	}{
		{name: "rewriter down: question used as is",
			stages:     Stages{Retriever: &fakeSearcher{hits: hits}, Rewriter: down},
			wantStatus: docent.StatusAnswered, wantText: []string{"25 vacation days per year [1]"},
			wantErr: []string{"answer: rewrite: gemini: generate: provider unavailable"},
			detail:  map[string]string{StageRewrite: "query unchanged; model unavailable, question used as is"}},
		{name: "embedder down: keyword search only",
			stages:     Stages{Retriever: &modeSearcher{hits: hits}},
			wantStatus: docent.StatusAnswered, wantText: []string{"25 vacation days per year [1]"},
			wantErr: []string{"answer: retrieve: search: retrieve: embed query: gemini"},
			detail:  map[string]string{StageRetrieve: "2 candidates (bm25); embedder unavailable, keyword search only"}},
		{name: "reranker down: fused order",
			stages:     Stages{Retriever: &fakeSearcher{hits: hits}, Reranker: down},
			wantStatus: docent.StatusAnswered, wantText: []string{"[1]"},
			wantErr: []string{"answer: rerank: "},
			detail:  map[string]string{StageRerank: "2 kept; model unavailable, fused order kept"}},
		{name: "generator down: uncertain with the best source",
			stages:     Stages{Retriever: &fakeSearcher{hits: hits}, Generator: &fakeGenerator{err: outage}},
			wantStatus: docent.StatusUncertain,
			wantText:   []string{OutageLead, "I couldn't confirm this in the docs", "The closest pages: [1] Time off › Vacation; [2] Sick leave", HandoffOffer},
			wantErr:    []string{"answer: generate: gemini: generate: provider unavailable"},
			detail:     map[string]string{StageGenerate: "failed: model unavailable", StageVerify: "skipped"}},
		{name: "everything down and the gate cannot tell: uncertain, not not-found",
			stages:   Stages{Retriever: &modeSearcher{hits: []docent.Hit{hit(chWifi, 1, 1, 0, 0)}}, Rewriter: down, Reranker: down, Rule: fixedRule(docent.StatusNotFound), Generator: &fakeGenerator{err: outage}},
			question: "Is there a gym at the office?", wantStatus: docent.StatusUncertain,
			wantText: []string{OutageLead, "[1] Guest Wi-Fi › Offices", HandoffOffer},
			wantErr:  []string{"answer: rewrite: ", "; answer: retrieve: ", "; answer: rerank: "},
			detail:   map[string]string{StageGenerate: "skipped"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.stages.Gate = fakeGate{}
			if tt.stages.Rule == nil {
				tt.stages.Rule = Always{}
			}
			if tt.stages.Generator == nil {
				tt.stages.Generator = quoteFirst{}
			}
			p, err := New(tt.stages, nil, Options{Now: tickClock()})
			if err != nil {
				t.Fatal(err)
			}
			question := q
			if tt.question != "" {
				question = tt.question
			}
			a, err := p.Answer(context.Background(), docent.Question{Text: question})
			if err != nil {
				t.Fatalf("err = %v, want the answer degraded", err)
			}
			if a.Status != tt.wantStatus {
				t.Fatalf("status %s, want %s: %q", a.Status, tt.wantStatus, a.Text)
			}
			for _, s := range tt.wantText {
				if !strings.Contains(a.Text, s) {
					t.Errorf("text %q lacks %q", a.Text, s)
				}
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(a.Trace.Error, s) {
					t.Errorf("trace error %q lacks %q", a.Trace.Error, s)
				}
			}
			if len(a.Citations) == 0 {
				t.Error("no citation: the asker gets no link")
			}
			for _, st := range a.Trace.Stages {
				if want, ok := tt.detail[st.Name]; ok && st.Detail != want {
					t.Errorf("stage %s detail %q, want %q", st.Name, st.Detail, want)
				}
			}
		})
	}
	// A cancelled request is not an outage to answer around.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p, _ := New(Stages{Retriever: &fakeSearcher{hits: hits}, Gate: fakeGate{}, Rule: Always{}, Generator: &fakeGenerator{err: outage}}, nil, Options{})
	if _, err := p.Answer(ctx, docent.Question{Text: q}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("cancelled: err = %v, want the stage error", err)
	}
}

// relevanceGate is fakeGate that also sets each hit's Relevance (to its
// cosine), as a gate that measures every candidate does.
type relevanceGate struct{}

func (relevanceGate) Gate(ctx context.Context, req GateRequest) (Evidence, error) {
	for i := range req.Hits {
		req.Hits[i].Relevance = req.Hits[i].VectorScore
	}
	return fakeGate{}.Gate(ctx, req)
}

// TestAnswerRerankKeepsEveryCandidateInTrace: the trace and the gate see
// the kept hits first, in the reranker's order, then the dropped ones in
// fused order; sources are picked in that order.
func TestAnswerRerankKeepsEveryCandidateInTrace(t *testing.T) {
	hits := []docent.Hit{hit(chWifi, 1, 1, 1, 0.3), hit(chSick, 0.9, 2, 2, 0.5), hit(chPTO, 0.8, 3, 3, 0.8), hit(chVPN, 0.7, 4, 4, 0.1)}
	rr := stageFuncs{rerank: func(r RerankRequest) (Reranked, error) {
		kept := []docent.Hit{r.Hits[2], r.Hits[1]}
		kept[0].RerankScore, kept[1].RerankScore = 0.9, 0.4
		return Reranked{Hits: kept, Detail: "model m scored 4 of 4", Model: "m"}, nil
	}}
	gen := &fakeGenerator{text: "You get 25 vacation days per year [1]."}
	p, err := New(Stages{Retriever: &fakeSearcher{hits: hits}, Reranker: rr, Gate: relevanceGate{}, Rule: Always{}, Generator: gen}, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := p.Answer(context.Background(), docent.Question{Text: "How many vacation days do I get per year?"})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, h := range a.Trace.Candidates {
		order = append(order, h.Chunk.ID)
	}
	if strings.Join(order, ",") != "c-pto,c-sick,c-wifi,c-vpn" {
		t.Errorf("trace candidates %v", order)
	}
	if a.Trace.Candidates[0].RerankScore != 0.9 || a.Trace.Candidates[0].Relevance == 0 {
		t.Errorf("kept candidate lost its scores: %+v", a.Trace.Candidates[0])
	}
	if len(gen.req.Sources) == 0 || gen.req.Sources[0].Hit.Chunk.ID != "c-pto" {
		t.Errorf("sources %+v, want the reranker's best first", gen.req.Sources)
	}
	if a.Trace.Candidates[3].Relevance == 0 {
		t.Error("the gate did not measure the dropped candidates")
	}
	if d := a.Trace.Stages[2].Detail; d != "2 kept; model m scored 4 of 4" {
		t.Errorf("rerank detail %q", d)
	}
}
