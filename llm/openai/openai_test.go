package openai_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent/llm"
	"github.com/docent-hq/docent/llm/llmtest"
	"github.com/docent-hq/docent/llm/openai"
	"github.com/docent-hq/docent/search"
)

const key = "sk-test-0123456789abcdef"

func options(s *llmtest.Server, log *slog.Logger) openai.Options {
	return openai.Options{BaseURL: s.URL + "/v1", APIKey: key, Model: "llama3.1", EmbeddingModel: "nomic-embed-text",
		Temperature: 0.2, MaxOutputTokens: 256, Timeout: 5 * time.Second, Retry: llmtest.FastRetry, Logger: log}
}

// TestProvider runs the provider suite through the OpenAI-compatible
// client against a local server speaking /v1/chat/completions (with and
// without "stream": true) and /v1/embeddings.
func TestProvider(t *testing.T) {
	llmtest.RunProviderSuite(t, llmtest.Provider{
		Name: "openai", Key: key, NewServer: llmtest.NewOpenAI,
		NewModel: func(t *testing.T, s *llmtest.Server, log *slog.Logger, retry llm.Retry) llm.Model {
			m, err := openai.NewModel(withRetry(options(s, log), retry))
			if err != nil {
				t.Fatal(err)
			}
			return m
		},
		NewEmbedder: func(t *testing.T, s *llmtest.Server, dims, batch int) search.Embedder {
			opts := options(s, nil)
			opts.Dimensions, opts.BatchSize = dims, batch
			e, err := openai.NewEmbedder(opts)
			if err != nil {
				t.Fatal(err)
			}
			return e
		},
		SentKey: func(h http.Header) string { return strings.TrimPrefix(h.Get("Authorization"), "Bearer ") },
		ChatOp:  "chat", EmbedOp: "embed", StreamEndpoint: "chat/completions",
		ChatEndpoint: "chat/completions", EmbedEndpoint: "embeddings",
		MalformedBody: `{"id": "x", "choices": [{"message": {"content": "cut`,
		RateLimitText: "rate limited or out of quota",
	})
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

func TestRetryAfterIsHonoured(t *testing.T) {
	s := llmtest.NewOpenAI(t)
	s.Fail(llmtest.Fault{Status: 429, RetryAfter: 40 * time.Millisecond})
	m, _ := openai.NewModel(options(s, nil))
	start := time.Now()
	if _, err := m.Complete(context.Background(), llm.Request{Prompt: "Question: x"}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Errorf("retried after %s, before the 40ms Retry-After", d)
	}
}

// TestEmbedNativeDimension: without configured dimensions the model's own
// length is learned from the first reply and none is sent.
func TestEmbedNativeDimension(t *testing.T) {
	s := llmtest.NewOpenAI(t)
	e, err := openai.NewEmbedder(options(s, nil))
	if err != nil {
		t.Fatal(err)
	}
	if e.Name() != "openai/nomic-embed-text/native" || e.Dim() != 0 {
		t.Errorf("before the first call: name %q, dim %d", e.Name(), e.Dim())
	}
	if _, err := e.EmbedDocuments(context.Background(), []string{"vacation days"}); err != nil || e.Dim() != 64 {
		t.Fatalf("dim %d, %v", e.Dim(), err)
	}
	if c := s.Calls()[0]; c.Dimensions != 0 || c.Model != "nomic-embed-text" {
		t.Errorf("call %+v", c)
	}
	s.Embed = func(llmtest.Call) [][]float32 { return [][]float32{{1, 2}} }
	if _, err := e.EmbedQuery(context.Background(), "x"); !errors.Is(err, llm.ErrMalformed) {
		t.Errorf("a reply of another length after the first: %v", err)
	}
}

func withRetry(o openai.Options, r llm.Retry) openai.Options { o.Retry = r; return o }
