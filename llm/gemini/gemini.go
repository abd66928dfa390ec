// Package gemini is the Gemini provider: generation (whole and streamed)
// and embeddings with task types, on Google's google.golang.org/genai
// client, with retries and backoff on 429 and 5xx (the client does not
// retry by default).
//
// Model implements llm.Model; Embedder implements search.Embedder. Both
// talk to the Gemini API, or to whatever Options.BaseURL names (a proxy,
// a test server speaking the same REST shapes).
package gemini

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/docent-hq/docent/internal/backoff"
	"github.com/docent-hq/docent/internal/redact"
	"github.com/docent-hq/docent/llm"
	"github.com/docent-hq/docent/search"
)

// Defaults.
const (
	// DefaultModel is an alias that tracks the current Flash model.
	DefaultModel = "gemini-flash-latest"
	// DefaultEmbeddingModel is Gemini's text embedding model.
	DefaultEmbeddingModel = "gemini-embedding-001"
	// DefaultDimensions is the embedding length asked for (the model
	// supports 128 to 3072; 768 keeps the index small at little cost).
	DefaultDimensions = 768
	// MaxBatch is the most texts one batchEmbedContents call may carry.
	MaxBatch = 100
)

// Task types of Gemini embeddings: documents and queries are embedded
// differently, so that a short question lands near the passage that
// answers it.
const (
	TaskDocument = "RETRIEVAL_DOCUMENT"
	TaskQuery    = "RETRIEVAL_QUERY"
)

// Options configure the provider. Zero values take the defaults.
type Options struct {
	// APIKey authenticates with the Gemini API (sent as a header, never
	// in a URL).
	APIKey string
	// BaseURL overrides the API endpoint ("" means Google's).
	BaseURL string
	// Model generates text; EmbeddingModel embeds.
	Model, EmbeddingModel string
	// Dimensions is the embedding length asked for; default DefaultDimensions.
	Dimensions int
	// Temperature and MaxOutputTokens tune generation (0: the model's own).
	Temperature     float64
	MaxOutputTokens int
	// Timeout bounds one HTTP call; default 30s.
	Timeout time.Duration
	// BatchSize is how many texts go in one batchEmbedContents call, at
	// most MaxBatch (the default).
	BatchSize int
	// Retry is the retry policy for 429, 5xx and network failures.
	Retry llm.Retry
	// HTTPClient is the client to use; nil means a new default one.
	HTTPClient *http.Client
	// Logger receives retry warnings; nil discards them.
	Logger *slog.Logger
}

// client is what Model and Embedder share.
type client struct {
	c    *genai.Client
	opts Options
	log  *slog.Logger
}

func newClient(ctx context.Context, opts Options) (*client, error) {
	if opts.APIKey == "" {
		return nil, errors.New("gemini: no API key")
	}
	if opts.Model == "" {
		opts.Model = DefaultModel
	}
	if opts.EmbeddingModel == "" {
		opts.EmbeddingModel = DefaultEmbeddingModel
	}
	if opts.Dimensions <= 0 {
		opts.Dimensions = DefaultDimensions
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.BatchSize <= 0 || opts.BatchSize > MaxBatch {
		opts.BatchSize = MaxBatch
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	timeout := opts.Timeout
	c, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:      opts.APIKey,
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  opts.HTTPClient,
		HTTPOptions: genai.HTTPOptions{BaseURL: opts.BaseURL, Timeout: &timeout},
	})
	if err != nil {
		return nil, fmt.Errorf("gemini: new client: %s", redact.URLs(err.Error()))
	}
	return &client{c: c, opts: opts, log: opts.Logger}, nil
}

// do runs call under the retry policy and prefixes its error with op.
func (c *client) do(ctx context.Context, op string, call func(context.Context) error) error {
	err := c.opts.Retry.Do(ctx, c.log, "gemini: "+op, classify, call)
	if err == nil {
		return nil
	}
	return &opError{op: op, err: err}
}

// opError is a failed call: "gemini: OP: ERR", with a note that names
// RESOURCE_EXHAUSTED plainly, and URL credentials masked.
type opError struct {
	op  string
	err error
}

func (e *opError) Error() string {
	msg := redact.URLs(e.err.Error())
	if errors.Is(e.err, llm.ErrRateLimited) {
		msg = "RESOURCE_EXHAUSTED (the API key's rate limit or quota is used up; wait, or raise the quota): " + msg
	}
	return "gemini: " + e.op + ": " + msg
}

func (e *opError) Unwrap() error { return e.err }

// classify reads a genai failure with the one transient predicate of
// docent's clients (backoff.TransientStatus: 408, 429 and 5xx;
// backoff.Transient: network errors); everything else is final.
func classify(err error) llm.Failure {
	var f *final
	if errors.As(err, &f) {
		return llm.Failure{}
	}
	var apiErr genai.APIError
	if errors.As(err, &apiErr) {
		f := llm.Failure{
			RateLimited: apiErr.Code == http.StatusTooManyRequests || apiErr.Status == "RESOURCE_EXHAUSTED",
			After:       retryDelay(apiErr.Details),
		}
		f.Transient = f.RateLimited || backoff.TransientStatus(apiErr.Code)
		return f
	}
	return llm.Failure{Transient: backoff.Transient(err) || errors.Is(err, errTransport)}
}

// errTransport marks a failure to read a reply that the server cut off.
var errTransport = errors.New("connection closed mid-reply")

// retryDelay reads google.rpc.RetryInfo's retryDelay ("20s") from an
// error's details, 0 when there is none.
func retryDelay(details []map[string]any) time.Duration {
	for _, d := range details {
		if t, _ := d["@type"].(string); !strings.HasSuffix(t, "google.rpc.RetryInfo") {
			continue
		}
		s, _ := d["retryDelay"].(string)
		if secs, err := strconv.ParseFloat(strings.TrimSuffix(s, "s"), 64); err == nil && secs > 0 {
			return time.Duration(secs * float64(time.Second))
		}
	}
	return 0
}

// Model generates text with a Gemini model. It implements llm.Model.
type Model struct {
	*client
}

var _ llm.Model = (*Model)(nil)

// NewModel returns the generation side of the provider. It fails without
// an API key.
func NewModel(ctx context.Context, opts Options) (*Model, error) {
	c, err := newClient(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &Model{c}, nil
}

// Name returns the configured model name.
func (m *Model) Name() string { return m.opts.Model }

func (m *Model) config(req llm.Request) *genai.GenerateContentConfig {
	cfg := &genai.GenerateContentConfig{}
	if req.System != "" {
		cfg.SystemInstruction = genai.NewContentFromText(req.System, genai.RoleUser)
	}
	temp := m.opts.Temperature
	if req.Temperature != nil {
		temp = *req.Temperature
	}
	t32 := float32(temp)
	cfg.Temperature = &t32
	if n := cmpOr(req.MaxTokens, m.opts.MaxOutputTokens); n > 0 {
		cfg.MaxOutputTokens = int32(n)
	}
	if req.JSON {
		cfg.ResponseMIMEType = "application/json"
	}
	return cfg
}

func cmpOr(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

// Complete calls generateContent.
func (m *Model) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	var out llm.Response
	err := m.do(ctx, "generate", func(ctx context.Context) error {
		resp, err := m.c.Models.GenerateContent(ctx, m.opts.Model, genai.Text(req.Prompt), m.config(req))
		if err != nil {
			return wrapCallErr(err)
		}
		out = llm.Response{Model: m.opts.Model}
		return collect(&out, resp, true)
	})
	return out, err
}

// Stream calls streamGenerateContent (server-sent events) and hands each
// piece of text to onText as it arrives. A failure before the first
// piece is retried; after it, the call fails.
func (m *Model) Stream(ctx context.Context, req llm.Request, onText func(string)) (llm.Response, error) {
	var out llm.Response
	started := false
	err := m.do(ctx, "stream", func(ctx context.Context) error {
		out = llm.Response{Model: m.opts.Model}
		for resp, err := range m.c.Models.GenerateContentStream(ctx, m.opts.Model, genai.Text(req.Prompt), m.config(req)) {
			if err != nil {
				err = wrapCallErr(err)
				if started {
					return &final{err}
				}
				return err
			}
			before := len(out.Text)
			if err := collect(&out, resp, false); err != nil {
				return &final{err}
			}
			if piece := out.Text[before:]; piece != "" {
				started = true
				onText(piece)
			}
		}
		if out.Text == "" {
			return &final{fmt.Errorf("%w: the stream held no text", llm.ErrMalformed)}
		}
		return nil
	})
	return out, err
}

// final marks an error that must not be retried (text was already handed
// out, or the reply was malformed).
type final struct{ err error }

func (f *final) Error() string { return f.err.Error() }
func (f *final) Unwrap() error { return f.err }

// wrapCallErr marks reply-decoding failures as malformed replies and
// leaves API and network errors as they are.
func wrapCallErr(err error) error {
	var apiErr genai.APIError
	var netErr net.Error
	switch {
	case errors.As(err, &apiErr), errors.As(err, &netErr), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case strings.Contains(err.Error(), "unexpected EOF"):
		return fmt.Errorf("%w: %w", errTransport, err)
	}
	return &final{fmt.Errorf("%w: %w", llm.ErrMalformed, err)}
}

// collect appends the text of resp's first candidate to out and takes its
// usage and model version. whole says resp is a complete reply, which
// must hold text.
func collect(out *llm.Response, resp *genai.GenerateContentResponse, whole bool) error {
	if resp == nil {
		return &final{fmt.Errorf("%w: empty reply", llm.ErrMalformed)}
	}
	if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" {
		return &final{fmt.Errorf("prompt blocked (%s)", pf.BlockReason)}
	}
	if resp.ModelVersion != "" {
		out.Model = resp.ModelVersion
	}
	if u := resp.UsageMetadata; u != nil {
		out.Usage = llm.Usage{InputTokens: int(u.PromptTokenCount), OutputTokens: int(u.CandidatesTokenCount)}
	}
	var reason genai.FinishReason
	if len(resp.Candidates) > 0 && resp.Candidates[0] != nil {
		cand := resp.Candidates[0]
		reason = cand.FinishReason
		if cand.Content != nil {
			for _, p := range cand.Content.Parts {
				if p != nil && !p.Thought {
					out.Text += p.Text
				}
			}
		}
	}
	if whole && out.Text == "" {
		if reason != "" && reason != genai.FinishReasonStop {
			// MAX_TOKENS here usually means a thinking model spent
			// max_output_tokens before writing anything.
			return &final{fmt.Errorf("%w: no text in the reply (finish reason %s)", llm.ErrMalformed, reason)}
		}
		return &final{fmt.Errorf("%w: no candidate text", llm.ErrMalformed)}
	}
	return nil
}

// Embedder embeds with a Gemini embedding model: documents with task type
// RETRIEVAL_DOCUMENT, queries with RETRIEVAL_QUERY, at the configured
// output dimensionality, up to BatchSize texts per batchEmbedContents
// call. Vectors are L2-normalized (Gemini normalizes only full-length
// ones). It implements search.Embedder.
type Embedder struct {
	*client
}

var _ search.Embedder = (*Embedder)(nil)

// NewEmbedder returns the embedding side of the provider. It fails
// without an API key.
func NewEmbedder(ctx context.Context, opts Options) (*Embedder, error) {
	c, err := newClient(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &Embedder{c}, nil
}

// Name identifies the model and dimension ("gemini/gemini-embedding-001/768"):
// changing either changes the name, and the index is rebuilt.
func (e *Embedder) Name() string {
	return "gemini/" + e.opts.EmbeddingModel + "/" + strconv.Itoa(e.opts.Dimensions)
}

// Dim returns the configured dimension.
func (e *Embedder) Dim() int { return e.opts.Dimensions }

// EmbedDocuments embeds chunk texts as RETRIEVAL_DOCUMENT.
func (e *Embedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += e.opts.BatchSize {
		vecs, err := e.embed(ctx, texts[start:min(start+e.opts.BatchSize, len(texts))], TaskDocument)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// EmbedQuery embeds a search query as RETRIEVAL_QUERY.
func (e *Embedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	vecs, err := e.embed(ctx, []string{text}, TaskQuery)
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}

func (e *Embedder) embed(ctx context.Context, texts []string, task string) ([][]float32, error) {
	contents := make([]*genai.Content, len(texts))
	for i, t := range texts {
		contents[i] = genai.NewContentFromText(t, genai.RoleUser)
	}
	dims := int32(e.opts.Dimensions)
	var out [][]float32
	err := e.do(ctx, "embed", func(ctx context.Context) error {
		resp, err := e.c.Models.EmbedContent(ctx, e.opts.EmbeddingModel, contents,
			&genai.EmbedContentConfig{TaskType: task, OutputDimensionality: &dims})
		if err != nil {
			return wrapCallErr(err)
		}
		if resp == nil || len(resp.Embeddings) != len(texts) {
			n := 0
			if resp != nil {
				n = len(resp.Embeddings)
			}
			return &final{fmt.Errorf("%w: %d embeddings for %d texts", llm.ErrMalformed, n, len(texts))}
		}
		out = make([][]float32, len(texts))
		for i, emb := range resp.Embeddings {
			if emb == nil || len(emb.Values) != e.opts.Dimensions {
				got := 0
				if emb != nil {
					got = len(emb.Values)
				}
				return &final{fmt.Errorf("%w: embedding %d has %d values, want %d", llm.ErrMalformed, i, got, e.opts.Dimensions)}
			}
			v := append([]float32(nil), emb.Values...)
			search.Normalize(v)
			out[i] = v
		}
		return nil
	})
	return out, err
}
