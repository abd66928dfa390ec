package openai_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent/llm"
	"github.com/docent-hq/docent/llm/llmtest"
	"github.com/docent-hq/docent/llm/openai"
)

const key = "sk-test-0123456789abcdef"

var fastRetry = llm.Retry{Attempts: 4, BaseDelay: time.Millisecond, MaxDelay: 50 * time.Millisecond}

func options(s *llmtest.Server, log *slog.Logger) openai.Options {
	return openai.Options{BaseURL: s.URL + "/v1", APIKey: key, Model: "llama3.1", EmbeddingModel: "nomic-embed-text",
		Temperature: 0.2, MaxOutputTokens: 256, Timeout: 5 * time.Second, Retry: fastRetry, Logger: log}
}

func newModel(t *testing.T, s *llmtest.Server, log *slog.Logger) *openai.Model {
	t.Helper()
	m, err := openai.NewModel(options(s, log))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestChat(t *testing.T) {
	s := llmtest.NewOpenAI(t)
	s.Key = key
	s.Chat = func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Text: "Employees get 25 days [1]."} }
	m := newModel(t, s, nil)
	temp := 0.0
	resp, err := m.Complete(context.Background(), llm.Request{System: "Be brief.", Prompt: "How many days?", JSON: true, Temperature: &temp, MaxTokens: 64})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Employees get 25 days [1]." || resp.Model != "llama3.1" || resp.Usage.InputTokens != 4 || resp.Usage.OutputTokens != 5 {
		t.Errorf("reply %+v", resp)
	}
	c := s.CallsTo("chat/completions")[0]
	if c.Model != "llama3.1" || c.System != "Be brief." || c.Prompt != "How many days?" || !c.JSON ||
		c.Temperature == nil || *c.Temperature > 1e-6 || c.MaxTokens != 64 || c.Stream {
		t.Errorf("request %+v", c)
	}
	if c.Header.Get("Authorization") != "Bearer "+key {
		t.Errorf("Authorization = %q", c.Header.Get("Authorization"))
	}
	if _, err := m.Complete(context.Background(), llm.Request{Prompt: "again"}); err != nil {
		t.Fatal(err)
	}
	c = s.CallsTo("chat/completions")[1]
	if c.Temperature == nil || math.Abs(*c.Temperature-0.2) > 1e-6 || c.MaxTokens != 256 || c.JSON || c.System != "" {
		t.Errorf("defaults not sent: %+v", c)
	}
}

// TestChatWithoutKey is Ollama's case: no key, no Authorization header.
func TestChatWithoutKey(t *testing.T) {
	s := llmtest.NewOpenAI(t)
	opts := options(s, nil)
	opts.APIKey = ""
	m, err := openai.NewModel(opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Complete(context.Background(), llm.Request{Prompt: "Question: hi"}); err != nil {
		t.Fatal(err)
	}
	if h := s.Calls()[0].Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization = %q, want none", h)
	}
}

func TestChatRetries(t *testing.T) {
	tests := []struct {
		name     string
		faults   []llmtest.Fault
		always   *llmtest.Fault
		wantErr  []string
		sentinel error
		calls    int
	}{
		{name: "429 then success", faults: []llmtest.Fault{{Status: 429, RetryAfter: 10 * time.Millisecond}}, calls: 2},
		{name: "503 and 500 then success", faults: []llmtest.Fault{{Status: 503}, {Status: 500}}, calls: 3},
		{name: "500 storm gives up", always: &llmtest.Fault{Status: 500}, calls: 4,
			wantErr:  []string{"openai: chat: provider unavailable: gave up after 4 attempts", "status code: 500"},
			sentinel: llm.ErrUnavailable},
		{name: "429 storm", always: &llmtest.Fault{Status: 429}, calls: 4,
			wantErr: []string{"openai: chat: rate limited or out of quota: gave up after 4 attempts", "429"}, sentinel: llm.ErrRateLimited},
		{name: "Retry-After longer than the cap gives up at once", faults: []llmtest.Fault{{Status: 429, RetryAfter: time.Minute}}, calls: 1,
			wantErr: []string{"asked to wait 1m0s before retrying"}, sentinel: llm.ErrRateLimited},
		{name: "401 is not retried", faults: []llmtest.Fault{{Status: 401}}, calls: 1, wantErr: []string{"openai: chat: ", "401"}},
		{name: "malformed body", faults: []llmtest.Fault{{Status: 200, Body: `{"id": "x", "choices": [{"message": {"content": "cut`}}, calls: 1,
			wantErr: []string{"openai: chat: llm: malformed provider reply"}, sentinel: llm.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := llmtest.NewOpenAI(t)
			s.Chat = func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Text: "fine [1]."} }
			s.Fail(tt.faults...)
			if tt.always != nil {
				s.FailAlways(*tt.always)
			}
			var logs bytes.Buffer
			m := newModel(t, s, slog.New(slog.NewTextHandler(&logs, nil)))
			resp, err := m.Complete(context.Background(), llm.Request{Prompt: "q"})
			if got := len(s.Calls()); got != tt.calls {
				t.Errorf("calls = %d, want %d", got, tt.calls)
			}
			if tt.wantErr == nil {
				if err != nil || resp.Text != "fine [1]." {
					t.Fatalf("got %q, %v; want success", resp.Text, err)
				}
				if n := strings.Count(logs.String(), "retrying model call"); n != tt.calls-1 {
					t.Errorf("%d retry warnings, want %d", n, tt.calls-1)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, reply %q", resp.Text)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if tt.sentinel != nil && !errors.Is(err, tt.sentinel) {
				t.Errorf("error %v is not %v", err, tt.sentinel)
			}
			if outage := errors.Is(err, llm.ErrUnavailable); outage != (tt.sentinel == llm.ErrUnavailable || tt.sentinel == llm.ErrRateLimited) {
				t.Errorf("errors.Is(err, llm.ErrUnavailable) = %v", outage)
			}
			if strings.Contains(err.Error()+logs.String(), key) {
				t.Error("the API key leaked into the error or the logs")
			}
		})
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	s := llmtest.NewOpenAI(t)
	s.Fail(llmtest.Fault{Status: 429, RetryAfter: 40 * time.Millisecond})
	m := newModel(t, s, nil)
	start := time.Now()
	if _, err := m.Complete(context.Background(), llm.Request{Prompt: "Question: x"}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Errorf("retried after %s, before the 40ms Retry-After", d)
	}
}

func TestStream(t *testing.T) {
	s := llmtest.NewOpenAI(t)
	s.Chat = func(llmtest.Call) llmtest.Reply {
		return llmtest.Reply{Pieces: []string{"Employees ", "get 25 ", "days [1]."}, Text: "Employees get 25 days [1]."}
	}
	s.Fail(llmtest.Fault{Status: 503})
	m := newModel(t, s, nil)
	var got []string
	resp, err := m.Stream(context.Background(), llm.Request{Prompt: "q"}, func(p string) { got = append(got, p) })
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != "Employees |get 25 |days [1]." || resp.Text != "Employees get 25 days [1]." {
		t.Errorf("pieces %q, text %q", got, resp.Text)
	}
	if resp.Usage.OutputTokens != 5 || resp.Usage.InputTokens != 1 {
		t.Errorf("usage %+v (from the include_usage chunk)", resp.Usage)
	}
	if calls := s.CallsTo("chat/completions"); len(calls) != 2 || !calls[1].Stream {
		t.Errorf("calls %+v", calls)
	}
}

func TestEmbed(t *testing.T) {
	s := llmtest.NewOpenAI(t)
	s.Key = key
	opts := options(s, nil)
	opts.BatchSize = 2
	e, err := openai.NewEmbedder(opts)
	if err != nil {
		t.Fatal(err)
	}
	if e.Name() != "openai/nomic-embed-text/native" || e.Dim() != 0 {
		t.Errorf("before the first call: name %q, dim %d", e.Name(), e.Dim())
	}
	texts := []string{"vacation days", "sick leave", "guest wifi"}
	s.Fail(llmtest.Fault{Status: 500})
	vecs, err := e.EmbedDocuments(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 3 || e.Dim() != 64 {
		t.Fatalf("%d vectors, dim %d", len(vecs), e.Dim())
	}
	for i, v := range vecs {
		want := llmtest.HashVector(texts[i], 64)
		if math.Abs(float64(v[3]-want[3])) > 1e-5 {
			t.Errorf("vector %d is not its text's", i)
		}
	}
	var sizes []int
	for _, c := range s.CallsTo("embeddings") {
		if c.Status == http.StatusOK {
			sizes = append(sizes, len(c.Texts))
			if c.Model != "nomic-embed-text" || c.Dimensions != 0 {
				t.Errorf("call %+v", c)
			}
		}
	}
	if len(sizes) != 2 || sizes[0] != 2 || sizes[1] != 1 {
		t.Errorf("batch sizes %v, want [2 1]", sizes)
	}

	opts.Dimensions = 16
	e16, _ := openai.NewEmbedder(opts)
	q, err := e16.EmbedQuery(context.Background(), "vpn")
	if err != nil || len(q) != 16 || e16.Name() != "openai/nomic-embed-text/16" {
		t.Fatalf("16-d query: %d values, %v, name %q", len(q), err, e16.Name())
	}
	if last := s.Calls()[len(s.Calls())-1]; last.Dimensions != 16 {
		t.Errorf("dimensions sent = %d", last.Dimensions)
	}
	s.Embed = func(c llmtest.Call) [][]float32 { return [][]float32{{1, 2}} }
	if _, err := e16.EmbedQuery(context.Background(), "x"); !errors.Is(err, llm.ErrMalformed) {
		t.Errorf("wrong-length reply: %v", err)
	}
}
