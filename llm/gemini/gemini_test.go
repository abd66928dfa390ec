package gemini_test

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
	"github.com/docent-hq/docent/llm/gemini"
	"github.com/docent-hq/docent/llm/llmtest"
)

const key = "AIza-test-key-0123456789"

// fastRetry keeps the retry tests quick: four attempts, millisecond waits.
var fastRetry = llm.Retry{Attempts: 4, BaseDelay: time.Millisecond, MaxDelay: 50 * time.Millisecond}

func options(s *llmtest.Server, log *slog.Logger) gemini.Options {
	return gemini.Options{APIKey: key, BaseURL: s.URL, Model: "gemini-flash-latest",
		EmbeddingModel: "gemini-embedding-001", Dimensions: 8, Temperature: 0.2, MaxOutputTokens: 256,
		Timeout: 5 * time.Second, Retry: fastRetry, Logger: log}
}

func newModel(t *testing.T, s *llmtest.Server, log *slog.Logger) *gemini.Model {
	t.Helper()
	m, err := gemini.NewModel(context.Background(), options(s, log))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestGenerate(t *testing.T) {
	s := llmtest.NewGemini(t)
	s.Key = key
	s.Chat = func(c llmtest.Call) llmtest.Reply { return llmtest.Reply{Text: "Employees get 25 days [1]."} }
	m := newModel(t, s, nil)
	temp := 0.0
	resp, err := m.Complete(context.Background(), llm.Request{System: "Be brief.", Prompt: "How many days?", JSON: true, Temperature: &temp, MaxTokens: 64})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Employees get 25 days [1]." || resp.Model != "gemini-flash-latest-001" {
		t.Errorf("reply %q from %q", resp.Text, resp.Model)
	}
	if resp.Usage.InputTokens != 4 || resp.Usage.OutputTokens != 5 {
		t.Errorf("usage = %+v, want 4 in, 5 out", resp.Usage)
	}
	calls := s.CallsTo("generateContent")
	if len(calls) != 1 {
		t.Fatalf("generateContent calls = %d", len(calls))
	}
	c := calls[0]
	if c.Model != "gemini-flash-latest" || c.System != "Be brief." || c.Prompt != "How many days?" || !c.JSON ||
		c.Temperature == nil || *c.Temperature != 0 || c.MaxTokens != 64 {
		t.Errorf("request = %+v", c)
	}
	if c.Header.Get("x-goog-api-key") != key {
		t.Errorf("API key header = %q", c.Header.Get("x-goog-api-key"))
	}
	// Without overrides the configured temperature and length are sent.
	if _, err := m.Complete(context.Background(), llm.Request{Prompt: "again"}); err != nil {
		t.Fatal(err)
	}
	c = s.CallsTo("generateContent")[1]
	if c.Temperature == nil || math.Abs(*c.Temperature-0.2) > 1e-6 || c.MaxTokens != 256 || c.JSON || c.System != "" {
		t.Errorf("defaults not sent: %+v", c)
	}
}

func TestGenerateRetries(t *testing.T) {
	tests := []struct {
		name     string
		faults   []llmtest.Fault
		always   *llmtest.Fault
		wantErr  []string // substrings; nil means success
		sentinel error
		calls    int
	}{
		{name: "429 then success", faults: []llmtest.Fault{{Status: 429}}, calls: 2},
		{name: "503 and 500 then success", faults: []llmtest.Fault{{Status: 503}, {Status: 500}}, calls: 3},
		{name: "500 storm gives up", always: &llmtest.Fault{Status: 500}, calls: 4,
			wantErr:  []string{"gemini: generate: provider unavailable: gave up after 4 attempts", "Error 500", "INTERNAL"},
			sentinel: llm.ErrUnavailable},
		{name: "429 storm names RESOURCE_EXHAUSTED", always: &llmtest.Fault{Status: 429}, calls: 4,
			wantErr:  []string{"gemini: generate: RESOURCE_EXHAUSTED (the API key's rate limit or quota is used up", "gave up after 4 attempts"},
			sentinel: llm.ErrRateLimited},
		{name: "retry delay longer than the cap gives up at once", faults: []llmtest.Fault{{Status: 429, RetryAfter: time.Minute}}, calls: 1,
			wantErr: []string{"RESOURCE_EXHAUSTED", "asked to wait 1m0s before retrying"}, sentinel: llm.ErrRateLimited},
		{name: "400 is not retried", faults: []llmtest.Fault{{Status: 400}}, calls: 1,
			wantErr: []string{"gemini: generate: Error 400", "INVALID_ARGUMENT"}},
		{name: "malformed body", faults: []llmtest.Fault{llmtest.Malformed}, calls: 1,
			wantErr: []string{"gemini: generate: llm: malformed provider reply"}, sentinel: llm.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := llmtest.NewGemini(t)
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
					t.Errorf("%d retry warnings logged, want %d:\n%s", n, tt.calls-1, logs.String())
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

func TestStream(t *testing.T) {
	s := llmtest.NewGemini(t)
	s.Chat = func(llmtest.Call) llmtest.Reply {
		return llmtest.Reply{Pieces: []string{"Employees ", "get 25 ", "days [1]."}, Text: "Employees get 25 days [1]."}
	}
	s.Fail(llmtest.Fault{Status: 503}) // before the first piece: retried
	m := newModel(t, s, nil)
	var got []string
	resp, err := m.Stream(context.Background(), llm.Request{Prompt: "q"}, func(p string) { got = append(got, p) })
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != "Employees |get 25 |days [1]." || resp.Text != "Employees get 25 days [1]." {
		t.Errorf("pieces %q, text %q", got, resp.Text)
	}
	if resp.Usage.OutputTokens != 5 || resp.Model != "gemini-flash-latest-001" {
		t.Errorf("usage %+v, model %q", resp.Usage, resp.Model)
	}
	if calls := s.CallsTo("streamGenerateContent"); len(calls) != 2 || !calls[1].Stream {
		t.Errorf("stream calls = %+v", calls)
	}
}

func TestEmbed(t *testing.T) {
	s := llmtest.NewGemini(t)
	s.Key = key
	e, err := gemini.NewEmbedder(context.Background(), gemini.Options{APIKey: key, BaseURL: s.URL, Dimensions: 8,
		BatchSize: 3, Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	if e.Name() != "gemini/gemini-embedding-001/8" || e.Dim() != 8 {
		t.Errorf("name %q dim %d", e.Name(), e.Dim())
	}
	texts := []string{"vacation days", "sick leave", "guest wifi", "vpn token", "hotel limit", "per diem", "laptop"}
	s.Fail(llmtest.Fault{Status: 429}) // the first batch is retried
	vecs, err := e.EmbedDocuments(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vecs), len(texts))
	}
	for i, v := range vecs {
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if len(v) != 8 || math.Abs(n-1) > 1e-5 {
			t.Errorf("vector %d: len %d, norm² %v", i, len(v), n)
		}
		want := llmtest.HashVector(texts[i], 8)
		if math.Abs(float64(v[0]-want[0])) > 1e-5 {
			t.Errorf("vector %d is not text %d's", i, i)
		}
	}
	batches := s.CallsTo("batchEmbedContents")
	var sizes []int
	for _, c := range batches {
		if c.Status != http.StatusOK {
			continue
		}
		sizes = append(sizes, len(c.Texts))
		if c.TaskType != gemini.TaskDocument || c.Dimensions != 8 || c.Model != "gemini-embedding-001" {
			t.Errorf("batch call %+v", c)
		}
	}
	if len(batches) != 4 || len(sizes) != 3 || sizes[0] != 3 || sizes[1] != 3 || sizes[2] != 1 {
		t.Errorf("batches: %d calls, sizes %v; want 4 calls (one 429) of 3, 3, 1", len(batches), sizes)
	}

	q, err := e.EmbedQuery(context.Background(), "how many vacation days")
	if err != nil || len(q) != 8 {
		t.Fatalf("query vector %v, %v", q, err)
	}
	last := s.Calls()[len(s.Calls())-1]
	if last.TaskType != gemini.TaskQuery || len(last.Texts) != 1 {
		t.Errorf("query call %+v", last)
	}

	// A reply of the wrong dimension is an error, not a short vector.
	s.Embed = func(c llmtest.Call) [][]float32 { return [][]float32{{1, 0, 0}} }
	if _, err := e.EmbedQuery(context.Background(), "x"); err == nil || !errors.Is(err, llm.ErrMalformed) ||
		!strings.Contains(err.Error(), "gemini: embed: ") {
		t.Errorf("wrong-dimension reply: err = %v", err)
	}
}

func TestNoKey(t *testing.T) {
	if _, err := gemini.NewModel(context.Background(), gemini.Options{}); err == nil || !strings.HasPrefix(err.Error(), "gemini: ") {
		t.Errorf("NewModel without a key: %v", err)
	}
}
