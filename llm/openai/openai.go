// Package openai is the provider for OpenAI-compatible APIs: OpenAI
// itself, Ollama, vLLM, LM Studio and other servers that expose
// /v1/chat/completions (with "stream": true as server-sent events) and
// /v1/embeddings. It uses github.com/sashabaranov/go-openai, a small
// dependency-free client that takes any base URL and an optional key, and
// retries 429 and 5xx with backoff under llm.Retry (the client does not
// retry).
//
// Model implements llm.Model; Embedder implements search.Embedder.
package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/docent-hq/docent/internal/backoff"
	"github.com/docent-hq/docent/internal/redact"
	"github.com/docent-hq/docent/llm"
	"github.com/docent-hq/docent/search"
)

// Defaults.
const (
	// DefaultBaseURL is OpenAI's API; Ollama serves http://localhost:11434/v1.
	DefaultBaseURL = "https://api.openai.com/v1"
	// DefaultBatchSize is how many texts go in one embeddings call.
	DefaultBatchSize = 64
)

// Options configure the provider. Zero values take the defaults.
type Options struct {
	// BaseURL is the API base, ending in /v1; default DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token when set (local servers need none).
	APIKey string
	// Model generates text; EmbeddingModel embeds.
	Model, EmbeddingModel string
	// Dimensions is the embedding length asked for; 0 means the model's own
	// (learned from the first reply).
	Dimensions int
	// Temperature and MaxOutputTokens tune generation (0: the server's own).
	Temperature     float64
	MaxOutputTokens int
	// Timeout bounds one HTTP call; default 30s.
	Timeout time.Duration
	// BatchSize is how many texts go in one embeddings call; default
	// DefaultBatchSize.
	BatchSize int
	// Retry is the retry policy for 429, 5xx and network failures.
	Retry llm.Retry
	// HTTPClient is the client to use; nil means a new one.
	HTTPClient *http.Client
	// Logger receives retry warnings; nil discards them.
	Logger *slog.Logger
}

type client struct {
	opts Options
	log  *slog.Logger
}

func newClient(opts Options) *client {
	if opts.BaseURL == "" {
		opts.BaseURL = DefaultBaseURL
	}
	opts.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &client{opts: opts, log: opts.Logger}
}

// do runs call under the retry policy, each attempt bounded by Timeout,
// and prefixes its error with op.
func (c *client) do(ctx context.Context, op string, call func(context.Context) error) error {
	err := c.opts.Retry.Do(ctx, c.log, "openai: "+op, classify, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
		defer cancel()
		return call(ctx)
	})
	if err == nil {
		return nil
	}
	return &opError{op: op, err: err, secret: c.opts.APIKey}
}

// opError is a failed call: "openai: OP: ERR", with URL credentials and
// the key masked.
type opError struct {
	op, secret string
	err        error
}

func (e *opError) Error() string {
	return "openai: " + e.op + ": " + redact.Secrets(redact.URLs(e.err.Error()), e.secret)
}

func (e *opError) Unwrap() error { return e.err }

// final marks an error that must not be retried.
type final struct{ err error }

func (f *final) Error() string { return f.err.Error() }
func (f *final) Unwrap() error { return f.err }

// classify reads a client failure: HTTP 408, 429 and 5xx are transient
// (429 also rate limited, with any Retry-After), as are network errors.
func classify(err error) llm.Failure {
	var f *final
	if errors.As(err, &f) {
		return llm.Failure{}
	}
	status := 0
	var apiErr *goopenai.APIError
	var reqErr *goopenai.RequestError
	var after *retryAfter
	switch {
	case errors.As(err, &apiErr):
		status = apiErr.HTTPStatusCode
	case errors.As(err, &reqErr):
		status = reqErr.HTTPStatusCode
	}
	fail := llm.Failure{RateLimited: status == http.StatusTooManyRequests}
	if errors.As(err, &after) {
		fail.After = after.d
	}
	if status != 0 {
		fail.Transient = backoff.TransientStatus(status)
	} else {
		fail.Transient = backoff.Transient(err)
	}
	return fail
}

// retryAfter carries a reply's Retry-After header with its error.
type retryAfter struct {
	d   time.Duration
	err error
}

func (r *retryAfter) Error() string { return r.err.Error() }
func (r *retryAfter) Unwrap() error { return r.err }

// headerRecorder is an HTTP client wrapper that remembers the last
// Retry-After header, which the client library does not expose.
type headerRecorder struct {
	next  goopenai.HTTPDoer
	after atomic.Int64
}

func (h *headerRecorder) Do(req *http.Request) (*http.Response, error) {
	resp, err := h.next.Do(req)
	if err == nil {
		d, _ := backoff.RetryAfter(resp.Header.Get("Retry-After"), time.Now())
		h.after.Store(int64(d))
	}
	return resp, err
}

// Model generates text with a chat model. It implements llm.Model.
type Model struct {
	*client
}

var _ llm.Model = (*Model)(nil)

// NewModel returns the generation side of the provider. It fails without
// a model name.
func NewModel(opts Options) (*Model, error) {
	if opts.Model == "" {
		return nil, errors.New("openai: no model")
	}
	return &Model{newClient(opts)}, nil
}

// Name returns the configured model name.
func (m *Model) Name() string { return m.opts.Model }

func (m *Model) request(req llm.Request, stream bool) goopenai.ChatCompletionRequest {
	var msgs []goopenai.ChatCompletionMessage
	if req.System != "" {
		msgs = append(msgs, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleSystem, Content: req.System})
	}
	msgs = append(msgs, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleUser, Content: req.Prompt})
	temp := m.opts.Temperature
	if req.Temperature != nil {
		temp = *req.Temperature
	}
	if temp == 0 {
		// The client drops a zero temperature (omitempty), which would leave
		// the server's default (often 0.7-1); the smallest float asks for 0.
		temp = math.SmallestNonzeroFloat32
	}
	r := goopenai.ChatCompletionRequest{
		Model: m.opts.Model, Messages: msgs, Temperature: float32(temp),
		MaxTokens: cmpOr(req.MaxTokens, m.opts.MaxOutputTokens), Stream: stream,
	}
	if req.JSON {
		r.ResponseFormat = &goopenai.ChatCompletionResponseFormat{Type: goopenai.ChatCompletionResponseFormatTypeJSONObject}
	}
	if stream {
		r.StreamOptions = &goopenai.StreamOptions{IncludeUsage: true}
	}
	return r
}

func cmpOr(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

// withRetryAfter attaches the last Retry-After header to err.
func (c *client) withRetryAfter(h *headerRecorder, err error) error {
	if d := time.Duration(h.after.Load()); d > 0 {
		return &retryAfter{d: d, err: err}
	}
	return err
}

// callClient returns a client for one call, whose HTTP replies record
// their Retry-After header (the library does not expose it).
func (c *client) callClient() (*goopenai.Client, *headerRecorder) {
	cfg := goopenai.DefaultConfig(c.opts.APIKey)
	cfg.BaseURL = c.opts.BaseURL
	var next goopenai.HTTPDoer = http.DefaultClient
	if c.opts.HTTPClient != nil {
		next = c.opts.HTTPClient
	}
	h := &headerRecorder{next: next}
	cfg.HTTPClient = h
	return goopenai.NewClientWithConfig(cfg), h
}

// Complete calls /chat/completions.
func (m *Model) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	var out llm.Response
	cl, h := m.callClient()
	err := m.do(ctx, "chat", func(ctx context.Context) error {
		resp, err := cl.CreateChatCompletion(ctx, m.request(req, false))
		if err != nil {
			return m.withRetryAfter(h, markMalformed(err))
		}
		if len(resp.Choices) == 0 || resp.Choices[0].Message.Content == "" {
			reason := ""
			if len(resp.Choices) > 0 {
				reason = string(resp.Choices[0].FinishReason)
			}
			return &final{fmt.Errorf("%w: no text in the reply (finish reason %q)", llm.ErrMalformed, reason)}
		}
		out = llm.Response{Text: resp.Choices[0].Message.Content, Model: cmpStr(resp.Model, m.opts.Model),
			Usage: llm.Usage{InputTokens: resp.Usage.PromptTokens, OutputTokens: resp.Usage.CompletionTokens}}
		return nil
	})
	return out, err
}

// Stream calls /chat/completions with "stream": true and hands each
// content delta to onText. A failure before the first delta is retried;
// after it, the call fails.
func (m *Model) Stream(ctx context.Context, req llm.Request, onText func(string)) (llm.Response, error) {
	var out llm.Response
	started := false
	cl, h := m.callClient()
	err := m.do(ctx, "stream", func(ctx context.Context) error {
		st, err := cl.CreateChatCompletionStream(ctx, m.request(req, true))
		if err != nil {
			return m.withRetryAfter(h, markMalformed(err))
		}
		defer st.Close()
		out = llm.Response{Model: m.opts.Model}
		for {
			chunk, err := st.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				err = markMalformed(err)
				if started {
					return &final{err}
				}
				return err
			}
			if chunk.Model != "" {
				out.Model = chunk.Model
			}
			if u := chunk.Usage; u != nil {
				out.Usage = llm.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
			}
			for _, ch := range chunk.Choices {
				if ch.Index == 0 && ch.Delta.Content != "" {
					started = true
					out.Text += ch.Delta.Content
					onText(ch.Delta.Content)
				}
			}
		}
		if out.Text == "" {
			return &final{fmt.Errorf("%w: the stream held no text", llm.ErrMalformed)}
		}
		return nil
	})
	return out, err
}

// markMalformed marks a reply that could not be decoded as malformed and
// final; API, HTTP and network errors stay as they are.
func markMalformed(err error) error {
	var apiErr *goopenai.APIError
	var reqErr *goopenai.RequestError
	var netErr net.Error
	var syn interface{ Offset() int64 }
	switch {
	case errors.As(err, &apiErr), errors.As(err, &netErr), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.As(err, &reqErr):
		if reqErr.HTTPStatusCode >= 200 && reqErr.HTTPStatusCode < 300 {
			return &final{fmt.Errorf("%w: %w", llm.ErrMalformed, err)}
		}
		return err
	case errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &syn), strings.Contains(err.Error(), "invalid character"):
		return &final{fmt.Errorf("%w: %w", llm.ErrMalformed, err)}
	}
	return err
}

func cmpStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Embedder embeds with an embeddings model, BatchSize texts per call,
// queries and documents alike (the API has no task types), and
// L2-normalizes the vectors. It implements search.Embedder.
type Embedder struct {
	*client
	dim atomic.Int64
}

var _ search.Embedder = (*Embedder)(nil)

// NewEmbedder returns the embedding side of the provider. It fails
// without an embedding model name.
func NewEmbedder(opts Options) (*Embedder, error) {
	if opts.EmbeddingModel == "" {
		return nil, errors.New("openai: no embedding model")
	}
	e := &Embedder{client: newClient(opts)}
	e.dim.Store(int64(opts.Dimensions))
	return e, nil
}

// Name identifies the model and dimension ("openai/nomic-embed-text/768",
// "openai/nomic-embed-text/native" when the model's own length is used).
func (e *Embedder) Name() string {
	d := "native"
	if e.opts.Dimensions > 0 {
		d = strconv.Itoa(e.opts.Dimensions)
	}
	return "openai/" + e.opts.EmbeddingModel + "/" + d
}

// Dim returns the configured dimension, or the length of the vectors
// returned so far (0 before the first call) when none was configured.
func (e *Embedder) Dim() int { return int(e.dim.Load()) }

// EmbedDocuments embeds chunk texts.
func (e *Embedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += e.opts.BatchSize {
		vecs, err := e.embed(ctx, texts[start:min(start+e.opts.BatchSize, len(texts))])
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// EmbedQuery embeds a search query.
func (e *Embedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	vecs, err := e.embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}

func (e *Embedder) embed(ctx context.Context, texts []string) ([][]float32, error) {
	var out [][]float32
	cl, h := e.callClient()
	err := e.do(ctx, "embed", func(ctx context.Context) error {
		resp, err := cl.CreateEmbeddings(ctx, goopenai.EmbeddingRequest{
			Input: texts, Model: goopenai.EmbeddingModel(e.opts.EmbeddingModel), Dimensions: e.opts.Dimensions,
		})
		if err != nil {
			return e.withRetryAfter(h, markMalformed(err))
		}
		if len(resp.Data) != len(texts) {
			return &final{fmt.Errorf("%w: %d embeddings for %d texts", llm.ErrMalformed, len(resp.Data), len(texts))}
		}
		out = make([][]float32, len(texts))
		for _, d := range resp.Data {
			if d.Index < 0 || d.Index >= len(texts) || out[d.Index] != nil {
				return &final{fmt.Errorf("%w: embedding index %d", llm.ErrMalformed, d.Index)}
			}
			want := int(e.dim.Load())
			if want == 0 {
				e.dim.CompareAndSwap(0, int64(len(d.Embedding)))
				want = int(e.dim.Load())
			}
			if len(d.Embedding) == 0 || len(d.Embedding) != want {
				return &final{fmt.Errorf("%w: embedding %d has %d values, want %d", llm.ErrMalformed, d.Index, len(d.Embedding), want)}
			}
			v := append([]float32(nil), d.Embedding...)
			search.Normalize(v)
			out[d.Index] = v
		}
		return nil
	})
	return out, err
}
