package gemini_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent/llm"
	"github.com/docent-hq/docent/llm/gemini"
	"github.com/docent-hq/docent/llm/llmtest"
	"github.com/docent-hq/docent/search"
)

const key = "AIza-test-key-0123456789"

func options(s *llmtest.Server, log *slog.Logger) gemini.Options {
	return gemini.Options{APIKey: key, BaseURL: s.URL, Model: "gemini-flash-latest",
		EmbeddingModel: "gemini-embedding-001", Dimensions: 8, Temperature: 0.2, MaxOutputTokens: 256,
		Timeout: 5 * time.Second, Retry: llmtest.FastRetry, Logger: log}
}

// TestProvider runs the provider suite through google.golang.org/genai
// against a local server speaking the Gemini REST API
// (generateContent, streamGenerateContent?alt=sse, batchEmbedContents).
func TestProvider(t *testing.T) {
	llmtest.RunProviderSuite(t, llmtest.Provider{
		Name: "gemini", Key: key, NewServer: llmtest.NewGemini,
		NewModel: func(t *testing.T, s *llmtest.Server, log *slog.Logger, retry llm.Retry) llm.Model {
			m, err := gemini.NewModel(context.Background(), withRetry(options(s, log), retry))
			if err != nil {
				t.Fatal(err)
			}
			return m
		},
		NewEmbedder: func(t *testing.T, s *llmtest.Server, dims, batch int) search.Embedder {
			opts := options(s, nil)
			opts.Dimensions, opts.BatchSize = dims, batch
			e, err := gemini.NewEmbedder(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			return e
		},
		SentKey: func(h http.Header) string { return h.Get("x-goog-api-key") },
		ChatOp:  "generate", EmbedOp: "embed", StreamEndpoint: "streamGenerateContent",
		ChatEndpoint: "generateContent", EmbedEndpoint: "batchEmbedContents",
		MalformedBody: llmtest.Malformed.Body,
		RateLimitText: "RESOURCE_EXHAUSTED (the API key's rate limit or quota is used up",
	})
}

// TestEmbedTaskTypes: documents and queries are embedded with their
// Gemini task types, at the configured output dimensionality, and the
// embedder's name holds the model and dimension.
func TestEmbedTaskTypes(t *testing.T) {
	s := llmtest.NewGemini(t)
	e, err := gemini.NewEmbedder(context.Background(), options(s, nil))
	if err != nil {
		t.Fatal(err)
	}
	if e.Name() != "gemini/gemini-embedding-001/8" || e.Dim() != 8 {
		t.Errorf("name %q dim %d", e.Name(), e.Dim())
	}
	if _, err := e.EmbedDocuments(context.Background(), []string{"a b", "c d"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.EmbedQuery(context.Background(), "a?"); err != nil {
		t.Fatal(err)
	}
	calls := s.CallsTo("batchEmbedContents")
	if len(calls) != 2 || calls[0].TaskType != gemini.TaskDocument || len(calls[0].Texts) != 2 ||
		calls[1].TaskType != gemini.TaskQuery || calls[1].Dimensions != 8 || calls[1].Model != "gemini-embedding-001" {
		t.Errorf("calls %+v", calls)
	}
	// More than the API's 100 requests per batch are split.
	opts := options(s, nil)
	opts.BatchSize = 500
	big, _ := gemini.NewEmbedder(context.Background(), opts)
	if _, err := big.EmbedDocuments(context.Background(), make([]string, 150)); err != nil {
		t.Fatalf("150 texts: %v", err)
	}
	if calls := s.CallsTo("batchEmbedContents")[2:]; len(calls) != 2 || len(calls[0].Texts) != 100 || len(calls[1].Texts) != 50 {
		t.Errorf("batches of %d calls", len(calls))
	}
}

func TestNoKey(t *testing.T) {
	if _, err := gemini.NewModel(context.Background(), gemini.Options{}); err == nil || !strings.HasPrefix(err.Error(), "gemini: ") {
		t.Errorf("NewModel without a key: %v", err)
	}
}

func withRetry(o gemini.Options, r llm.Retry) gemini.Options { o.Retry = r; return o }
