package llmstage_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/answer/llmstage"
	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/llm"
	"github.com/docent-hq/docent/llm/gemini"
	"github.com/docent-hq/docent/llm/llmtest"
	"github.com/docent-hq/docent/llm/openai"
)

var fastRetry = llm.Retry{Attempts: 3, BaseDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond}

// models returns a Gemini and an OpenAI-compatible Model, each over its
// own local server answering with chat.
func models(t *testing.T, chat func(llmtest.Call) llmtest.Reply) map[string]struct {
	m llm.Model
	s *llmtest.Server
} {
	t.Helper()
	gs := llmtest.NewGemini(t)
	gs.Chat = chat
	gm, err := gemini.NewModel(context.Background(), gemini.Options{APIKey: "k", BaseURL: gs.URL, Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	os := llmtest.NewOpenAI(t)
	os.Chat = chat
	om, err := openai.NewModel(openai.Options{BaseURL: os.URL + "/v1", Model: "llama3.1", Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]struct {
		m llm.Model
		s *llmtest.Server
	}{"gemini": {gm, gs}, "openai": {om, os}}
}

func hits(chunks ...docent.Chunk) []docent.Hit {
	out := make([]docent.Hit, len(chunks))
	for i, c := range chunks {
		out[i] = docent.Hit{Chunk: c, Score: 1 - float64(i)/10}
	}
	return out
}

func chunk(id, title, text string) docent.Chunk {
	return docent.Chunk{ID: id, DocID: "handbook:" + id + ".md", Title: title, Text: title + "\n\n" + text}
}

func ids(hs []docent.Hit) string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Chunk.ID)
	}
	return strings.Join(out, ",")
}

// The model judge is what `docent eval --judge` takes.
var _ eval.Judge = (*llmstage.Judge)(nil)

func TestRerank(t *testing.T) {
	pool := []docent.Chunk{
		chunk("a", "Guest Wi-Fi", "Visitors use the Kestrel-Guest network."),
		chunk("b", "Paid Time Off", "Employees get 25 vacation days."),
		chunk("c", "Sick leave", "Ten paid sick days per year."),
		chunk("d", "Parental leave", "Sixteen weeks of paid leave."),
		chunk("e", "Expense policy", "Hotels up to $250 per night."),
		chunk("f", "VPN", "Reset your token with the reset command."),
		chunk("g", "Holidays", "US employees get 11 public holidays."),
		chunk("h", "Benefits", "Health insurance from day one."),
	}
	tests := []struct {
		name, reply string
		want        string // kept chunk IDs in order
		scores      []float64
		fallback    bool
	}{
		{name: "scored best first, 3 to 6 kept",
			reply: `{"scores": [{"id": 1, "score": 0}, {"id": 2, "score": 9}, {"id": 3, "score": 7}, {"id": 4, "score": 6}, {"id": 5, "score": 1}, {"id": 6, "score": 0}, {"id": 7, "score": 8}, {"id": 8, "score": 4}]}`,
			want:  "b,g,c,d,h", scores: []float64{0.9, 0.8, 0.7, 0.6, 0.4}},
		{name: "at least three kept when few score",
			reply: `{"scores": [{"id": 3, "score": 10}, {"id": 1, "score": 1}, {"id": 2, "score": 0}]}`,
			want:  "c,a,b", scores: []float64{1, 0.1, 0}},
		{name: "at most six kept",
			reply: `[{"id":1,"score":9},{"id":2,"score":9},{"id":3,"score":9},{"id":4,"score":9},{"id":5,"score":9},{"id":6,"score":9},{"id":7,"score":9},{"id":8,"score":9}]`,
			want:  "a,b,c,d,e,f"},
		{name: "duplicates, unknown ids and junk ignored; unscored after scored in fused order",
			reply: "Here you go:\n```json\n" + `{"scores": [{"id": 5, "score": 8}, {"id": 5, "score": 1}, {"id": 42, "score": 10}, {"id": 0, "score": 10}, {"id": "x", "score": 9}, {"id": 2.5, "score": 9}, {"id": 2, "score": "high"}, {"id": 7, "score": 6}]}` + "\n```",
			want:  "e,g,a", scores: []float64{0.8, 0.6, 0}},
		{name: "malformed JSON falls back to fused order", reply: `{"scores": [{"id": 1, "score": 9}, {"id": 2`, want: "a,b,c,d,e,f,g,h", fallback: true},
		{name: "prose falls back to fused order", reply: "Passage 2 is the best match.", want: "a,b,c,d,e,f,g,h", fallback: true},
		{name: "no usable score falls back", reply: `{"scores": [{"id": 99, "score": 3}]}`, want: "a,b,c,d,e,f,g,h", fallback: true},
	}
	for name, p := range models(t, nil) {
		for _, tt := range tests {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				p.s.Chat = func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Text: tt.reply} }
				r := llmstage.NewReranker(p.m, llmstage.RerankerOptions{}, nil)
				got, err := r.Rerank(context.Background(), answer.RerankRequest{Query: "vacation days", Hits: hits(pool...)})
				if err != nil {
					t.Fatal(err)
				}
				if ids(got.Hits) != tt.want {
					t.Errorf("kept %s, want %s", ids(got.Hits), tt.want)
				}
				for i, s := range tt.scores {
					if got.Hits[i].RerankScore != s {
						t.Errorf("hit %d rerank score %v, want %v", i, got.Hits[i].RerankScore, s)
					}
				}
				if fell := strings.Contains(got.Detail, "fused order kept"); fell != tt.fallback {
					t.Errorf("detail %q, fallback %v", got.Detail, tt.fallback)
				}
				calls := p.s.Calls()
				c := calls[len(calls)-1]
				if !c.JSON || c.Temperature == nil || *c.Temperature > 1e-6 {
					t.Errorf("rerank call asked JSON %v temperature %v", c.JSON, c.Temperature)
				}
				if len(llmtest.Blocks(c.Prompt)) != len(pool) || !strings.Contains(c.Prompt, "Query: vacation days") {
					t.Errorf("rerank prompt:\n%s", c.Prompt)
				}
			})
		}
	}
}

func TestRerankSendsAtMostCandidates(t *testing.T) {
	var pool []docent.Chunk
	for i := range 25 {
		pool = append(pool, chunk(string(rune('a'+i)), "Page", "text"))
	}
	p := models(t, func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Text: `{"scores":[{"id":20,"score":9}]}`} })["gemini"]
	r := llmstage.NewReranker(p.m, llmstage.RerankerOptions{Candidates: 20}, nil)
	got, err := r.Rerank(context.Background(), answer.RerankRequest{Query: "q", Hits: hits(pool...)})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(llmtest.Blocks(p.s.Calls()[0].Prompt)); n != 20 {
		t.Errorf("%d passages sent, want 20", n)
	}
	if got.Hits[0].Chunk.ID != "t" || len(got.Hits) != 3 {
		t.Errorf("kept %s", ids(got.Hits))
	}
}

func TestRewrite(t *testing.T) {
	hist := []docent.Exchange{
		{Question: "What's the hotel limit?", Answer: "Hotels are reimbursed up to $250 per night [1]."},
		{Question: "how many vacation days do employees get?", Answer: "US employees get 20 days [1]."},
	}
	tests := []struct {
		name     string
		question string
		history  []docent.Exchange
		opts     llmstage.RewriterOptions
		reply    string
		calls    int
		want     answer.Rewrite
		prompt   []string // substrings of the prompt sent
	}{
		{name: "plain first question: no model call", question: "How do I reset my VPN token?",
			want: answer.Rewrite{Query: "How do I reset my VPN token?"}},
		{name: "follow-up made standalone from the last turns", question: "and for contractors?", history: hist,
			opts:  llmstage.RewriterOptions{Turns: 1},
			reply: `{"query": "How many vacation days do contractors get?", "sub_queries": []}`, calls: 1,
			want:   answer.Rewrite{Query: "How many vacation days do contractors get?"},
			prompt: []string{"User: how many vacation days do employees get?", "Assistant: US employees get 20 days.", "Latest question: and for contractors?"}},
		{name: "multi-part split, bounded and deduped", question: "What does the Starter plan cost, and how many API requests per minute does it allow?",
			opts:  llmstage.RewriterOptions{MaxParts: 2},
			reply: "```json\n" + `{"query": "Starter plan price and rate limit", "sub_queries": ["Starter plan price per robot", "starter plan price per robot", "Starter plan API requests per minute", "third"]}` + "\n```",
			calls: 1,
			want:  answer.Rewrite{Query: "Starter plan price and rate limit", SubQueries: []string{"Starter plan price per robot", "Starter plan API requests per minute"}}},
		{name: "unreadable reply keeps the question", question: "compare the two fares and tell me which allows changes",
			reply: "Sure! The question is about fares.", calls: 1,
			want: answer.Rewrite{Query: "compare the two fares and tell me which allows changes"}},
		{name: "HyDE passage", question: "How long do I have to file expenses?", opts: llmstage.RewriterOptions{HyDE: true},
			reply: `{"query": "How long do I have to file expenses?", "sub_queries": [], "passage": "Submit expenses within 30 days."}`, calls: 1,
			want:   answer.Rewrite{Query: "How long do I have to file expenses?", Hypothetical: "Submit expenses within 30 days."},
			prompt: []string{`"passage"`}},
	}
	for name, p := range models(t, nil) {
		for _, tt := range tests {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				before := len(p.s.Calls())
				p.s.Chat = func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Text: tt.reply} }
				got, err := llmstage.NewRewriter(p.m, tt.opts, nil).Rewrite(context.Background(),
					answer.RewriteRequest{Question: tt.question, History: tt.history})
				if err != nil {
					t.Fatal(err)
				}
				calls := p.s.Calls()[before:]
				if len(calls) != tt.calls {
					t.Fatalf("%d model calls, want %d", len(calls), tt.calls)
				}
				if got.Query != tt.want.Query || strings.Join(got.SubQueries, "|") != strings.Join(tt.want.SubQueries, "|") ||
					got.Hypothetical != tt.want.Hypothetical {
					t.Errorf("got %+v, want %+v", got, tt.want)
				}
				for _, s := range tt.prompt {
					if !strings.Contains(calls[0].Prompt+calls[0].System, s) {
						t.Errorf("prompt lacks %q:\n%s", s, calls[0].Prompt)
					}
				}
				if tt.calls > 0 && (!calls[0].JSON || strings.Contains(calls[0].Prompt, "hotel limit")) {
					t.Errorf("JSON %v; older turns than asked sent: %q", calls[0].JSON, calls[0].Prompt)
				}
			})
		}
	}
}

func TestDeclines(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"NOT_FOUND The sources cover hotels and per diems.", true},
		{"**NOT_FOUND** — nothing about dogs.", true},
		{"The provided sources don't mention a gym.", true},
		{"The documents do not say whether dogs are allowed.", true},
		{"I couldn't find anything about sabbaticals in the handbook.", true},
		{"The sources don't say for contractors, but employees get 20 days [1].", false},
		{"Employees get 25 days [1].", false},
		{"Dogs are not allowed in the office [2].", false},
		{"You do not need approval for one day off.", false},
	}
	for _, tt := range tests {
		if got := llmstage.Declines(tt.text); got != tt.want {
			t.Errorf("Declines(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

// TestGenerate: the generator sends the grounded prompt, returns the reply
// with the model and usage for the trace, and turns a NOT_FOUND reply
// into NotFound.
func TestGenerate(t *testing.T) {
	req := answer.GenerateRequest{Question: "What is the hotel limit per night?", Sources: sources(chHotelNew, chHotelOld)}
	for name, p := range models(t, nil) {
		t.Run(name, func(t *testing.T) {
			p.s.Chat = llmtest.Scripted
			res, err := llmstage.NewGenerator(p.m).Generate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if res.NotFound || !strings.Contains(res.Text, "$250 per night [1]") || res.Model == "" ||
				res.Usage.InputTokens == 0 || res.Usage.OutputTokens == 0 {
				t.Errorf("result %+v", res)
			}
			if res.Prompt != llmstage.GroundedPrompt(req).String() {
				t.Error("trace prompt is not the prompt sent")
			}
			if c := p.s.Calls()[0]; c.System != llmstage.GroundedPrompt(req).System || c.Prompt != llmstage.GroundedPrompt(req).User {
				t.Errorf("sent %+v", c)
			}
			nf := req
			nf.Question = "Can I bring my dog to the office?"
			res, err = llmstage.NewGenerator(p.m).Generate(context.Background(), nf)
			if err != nil || !res.NotFound {
				t.Errorf("dog question: %+v, %v; want NotFound", res, err)
			}
		})
	}
}

func TestJudge(t *testing.T) {
	req := docent.JudgeRequest{
		Question: "What is the hotel limit per night?",
		Answer:   "Hotel stays are reimbursed up to $250 per night [1]. Managers can approve suites for executives [1].",
		Sources:  []docent.JudgeSource{{N: 1, Title: "Expense Policy › Hotels", Text: chHotelNew.Text}},
	}
	for name, p := range models(t, llmtest.Scripted) {
		t.Run(name, func(t *testing.T) {
			j := llmstage.NewJudge(p.m)
			got, err := j.Judge(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if got.Claims != 2 || got.Supported != 1 || len(got.Unsupported) != 1 || !strings.Contains(got.Unsupported[0], "suites") {
				t.Errorf("judgment %+v", got)
			}
			if !strings.HasPrefix(j.Name(), "model ") {
				t.Errorf("name %q", j.Name())
			}
			c := p.s.Calls()[len(p.s.Calls())-1]
			if !c.JSON || len(llmtest.Blocks(c.Prompt)) != 1 || !strings.Contains(c.Prompt, "Answer:\nHotel stays") {
				t.Errorf("judge prompt:\n%s", c.Prompt)
			}
			p.s.Chat = func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Text: "All good!"} }
			if _, err := j.Judge(context.Background(), req); err == nil || !strings.HasPrefix(err.Error(), "llm: judge: ") {
				t.Errorf("unreadable verdict: %v", err)
			}
			p.s.Chat = func(llmtest.Call) llmtest.Reply {
				return llmtest.Reply{Text: `{"claims": 2, "supported": 7, "relevance": 3}`}
			}
			if got, _ := j.Judge(context.Background(), req); got.Supported != 2 || got.Relevance != 1 {
				t.Errorf("out-of-range verdict not clamped: %+v", got)
			}
		})
	}
}

// TestStagesFallBackOnUnusableReplies: a provider reply with no usable
// text (a malformed body; a thinking model out of tokens) makes the
// rewriter keep the question and the reranker keep the fused order; an
// outage is returned for the pipeline to degrade around.
func TestStagesFallBackOnUnusableReplies(t *testing.T) {
	for name, p := range models(t, llmtest.Scripted) {
		t.Run(name, func(t *testing.T) {
			body := `{"candidates": [{"content": {"parts": [{"text": "cut`
			if name == "openai" {
				body = `{"id": "x", "choices": [{"message": {"content": "cut`
			}
			malformed := llmtest.Fault{Status: 200, Body: body}
			q := "What does the Starter plan cost, and how many API requests per minute does it allow?"
			p.s.Fail(malformed)
			rw, err := llmstage.NewRewriter(p.m, llmstage.RewriterOptions{}, nil).Rewrite(context.Background(), answer.RewriteRequest{Question: q})
			if err != nil || rw.Query != q || len(rw.SubQueries) != 0 || !strings.Contains(rw.Detail, "unusable") {
				t.Errorf("rewrite after a malformed reply: %+v, %v", rw, err)
			}
			pool := hits(chunk("a", "A", "alpha"), chunk("b", "B", "beta"))
			p.s.Fail(malformed)
			rr, err := llmstage.NewReranker(p.m, llmstage.RerankerOptions{}, nil).Rerank(context.Background(), answer.RerankRequest{Query: "q", Hits: pool})
			if err != nil || ids(rr.Hits) != "a,b" || !strings.Contains(rr.Detail, "fused order kept") {
				t.Errorf("rerank after a malformed reply: %s %q, %v", ids(rr.Hits), rr.Detail, err)
			}
			p.s.FailAlways(llmtest.Fault{Status: 503})
			defer p.s.Heal()
			if _, err := llmstage.NewRewriter(p.m, llmstage.RewriterOptions{}, nil).Rewrite(context.Background(), answer.RewriteRequest{Question: q}); !errors.Is(err, llm.ErrUnavailable) {
				t.Errorf("rewrite in an outage: %v, want the outage", err)
			}
		})
	}
}
