package llmtest

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

	"github.com/docent-hq/docent/internal/backoff/backofftest"
	"github.com/docent-hq/docent/llm"
	"github.com/docent-hq/docent/search"
)

// FastRetry is a retry policy for tests: four attempts, millisecond waits.
var FastRetry = llm.Retry{Attempts: 4, BaseDelay: time.Millisecond, MaxDelay: 50 * time.Millisecond}

// Provider describes a provider package to RunProviderSuite.
type Provider struct {
	// Name prefixes the provider's errors ("gemini").
	Name string
	// Key is the API key the provider is configured with; the server
	// requires it and it must never show in errors or logs.
	Key string
	// NewServer starts the provider's local server.
	NewServer func(testing.TB) *Server
	// NewModel returns the provider's Model over s, configured with Key,
	// retry, log, temperature 0.2 and 256 output tokens.
	NewModel func(t *testing.T, s *Server, log *slog.Logger, retry llm.Retry) llm.Model
	// NewEmbedder returns the provider's Embedder over s at dims, batch
	// texts per call, with FastRetry.
	NewEmbedder func(t *testing.T, s *Server, dims, batch int) search.Embedder
	// SentKey returns the key a request carried.
	SentKey func(http.Header) string
	// ChatOp and EmbedOp name the operations in errors ("generate", "embed").
	ChatOp, EmbedOp string
	// ChatEndpoint, StreamEndpoint and EmbedEndpoint are Call.Endpoint of
	// a chat, a streamed chat and an embedding call.
	ChatEndpoint, StreamEndpoint, EmbedEndpoint string
	// MalformedBody is a 200 body the provider's client cannot decode.
	MalformedBody string
	// RateLimitText is in the error of a rate limit that outlasts the
	// retries.
	RateLimitText string
}

// RunProviderSuite runs the cases every provider must pass, through its
// real client against its local server: request shape and usage, retries
// on 429 and 5xx (429 then success, a 500 storm that gives up with a clear
// error wrapping llm.ErrUnavailable, a rate limit wrapping
// llm.ErrRateLimited, a wait longer than the retry cap, a 4xx and a
// malformed body that are not retried), streaming in pieces with a retry
// before the first, and batched, normalized embeddings whose length is
// checked. No case lets the key reach an error or a log line.
func RunProviderSuite(t *testing.T, p Provider) {
	t.Run("Complete", func(t *testing.T) { testComplete(t, p) })
	t.Run("Retries", func(t *testing.T) { testRetries(t, p) })
	t.Run("RetryAfter", func(t *testing.T) { testRetryAfter(t, p) })
	t.Run("Stream", func(t *testing.T) { testStream(t, p) })
	t.Run("Embed", func(t *testing.T) { testEmbed(t, p) })
}

func testComplete(t *testing.T, p Provider) {
	s := p.NewServer(t)
	s.Key = p.Key
	s.Chat = func(Call) Reply { return Reply{Text: "Employees get 25 days [1]."} }
	m := p.NewModel(t, s, nil, FastRetry)
	temp := 0.0
	resp, err := m.Complete(context.Background(), llm.Request{System: "Be brief.", Prompt: "How many days?", JSON: true, Temperature: &temp, MaxTokens: 64})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Employees get 25 days [1]." || resp.Model == "" || resp.Usage.InputTokens != 4 || resp.Usage.OutputTokens != 5 {
		t.Errorf("reply %+v", resp)
	}
	calls := s.CallsTo(p.ChatEndpoint)
	if len(calls) != 1 {
		t.Fatalf("%d chat calls", len(calls))
	}
	c := calls[0]
	if c.Model != m.Name() || c.System != "Be brief." || c.Prompt != "How many days?" || !c.JSON ||
		c.Temperature == nil || *c.Temperature > 1e-6 || c.MaxTokens != 64 || c.Stream {
		t.Errorf("request %+v", c)
	}
	if got := p.SentKey(c.Header); got != p.Key {
		t.Errorf("key sent = %q", got)
	}
	// Without overrides the configured temperature and length are sent.
	if _, err := m.Complete(context.Background(), llm.Request{Prompt: "again"}); err != nil {
		t.Fatal(err)
	}
	c = s.CallsTo(p.ChatEndpoint)[1]
	if c.Temperature == nil || math.Abs(*c.Temperature-0.2) > 1e-6 || c.MaxTokens != 256 || c.JSON || c.System != "" {
		t.Errorf("defaults not sent: %+v", c)
	}
}

func testRetries(t *testing.T, p Provider) {
	prefix := p.Name + ": " + p.ChatOp + ": "
	tests := []struct {
		name     string
		faults   []Fault
		always   *Fault
		wantErr  []string // substrings; nil means success
		sentinel error
		calls    int
	}{
		{name: "429 then success", faults: []Fault{{Status: 429, RetryAfter: 5 * time.Millisecond}}, calls: 2},
		{name: "503 and 500 then success", faults: []Fault{{Status: 503}, {Status: 500}}, calls: 3},
		{name: "500 storm gives up", always: &Fault{Status: 500}, calls: 4,
			wantErr: []string{prefix + "provider unavailable: gave up after 4 attempts", "500"}, sentinel: llm.ErrUnavailable},
		{name: "429 storm gives up rate limited", always: &Fault{Status: 429}, calls: 4,
			wantErr: []string{prefix, p.RateLimitText, "gave up after 4 attempts"}, sentinel: llm.ErrRateLimited},
		{name: "a wait longer than the cap gives up at once", faults: []Fault{{Status: 429, RetryAfter: time.Minute}}, calls: 1,
			wantErr: []string{"asked to wait 1m0s before retrying"}, sentinel: llm.ErrRateLimited},
		{name: "4xx is not retried", faults: []Fault{{Status: 400}}, calls: 1, wantErr: []string{prefix, "400"}},
		{name: "malformed body is not retried", faults: []Fault{{Status: 200, Body: p.MalformedBody}}, calls: 1,
			wantErr: []string{prefix + "llm: malformed provider reply"}, sentinel: llm.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := p.NewServer(t)
			s.Key = p.Key
			s.Chat = func(Call) Reply { return Reply{Text: "fine [1]."} }
			s.Fail(tt.faults...)
			if tt.always != nil {
				s.FailAlways(*tt.always)
			}
			var logs bytes.Buffer
			m := p.NewModel(t, s, slog.New(slog.NewTextHandler(&logs, nil)), FastRetry)
			resp, err := m.Complete(context.Background(), llm.Request{Prompt: "q"})
			if got := len(s.Calls()); got != tt.calls {
				t.Errorf("calls = %d, want %d", got, tt.calls)
			}
			if n := strings.Count(logs.String(), "retrying model call"); tt.wantErr == nil && n != tt.calls-1 {
				t.Errorf("%d retry warnings logged, want %d", n, tt.calls-1)
			}
			if strings.Contains(logs.String(), p.Key) || err != nil && strings.Contains(err.Error(), p.Key) {
				t.Error("the API key leaked into the error or the logs")
			}
			if tt.wantErr == nil {
				if err != nil || resp.Text != "fine [1]." {
					t.Errorf("got %q, %v; want success", resp.Text, err)
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
			outage := tt.sentinel == llm.ErrUnavailable || tt.sentinel == llm.ErrRateLimited
			if errors.Is(err, llm.ErrUnavailable) != outage {
				t.Errorf("errors.Is(err, llm.ErrUnavailable) = %v, want %v", !outage, outage)
			}
		})
	}
}

// testRetryAfter: a 429 that asks to wait (Retry-After, Gemini's
// RetryInfo) is retried after exactly that wait, on the retry's clock.
func testRetryAfter(t *testing.T, p Provider) {
	s := p.NewServer(t)
	s.Key = p.Key
	s.Chat = func(Call) Reply { return Reply{Text: "fine [1]."} }
	s.Fail(Fault{Status: 429, RetryAfter: 3 * time.Second})
	clk := backofftest.NewClock(time.Now())
	retry := llm.Retry{Attempts: 4, BaseDelay: time.Millisecond, MaxDelay: 8 * time.Second, Clock: clk}
	m := p.NewModel(t, s, nil, retry)
	if _, err := m.Complete(context.Background(), llm.Request{Prompt: "q"}); err != nil {
		t.Fatal(err)
	}
	if got := clk.Sleeps(); len(s.Calls()) != 2 || len(got) != 1 || got[0] != 3*time.Second {
		t.Errorf("%d calls, waits %v; want 2 calls and one wait of 3s", len(s.Calls()), got)
	}
}

func testStream(t *testing.T, p Provider) {
	s := p.NewServer(t)
	s.Key = p.Key
	s.Chat = func(Call) Reply {
		return Reply{Pieces: []string{"Employees ", "get 25 ", "days [1]."}, Text: "Employees get 25 days [1]."}
	}
	s.Fail(Fault{Status: 503}) // before the first piece: retried
	m := p.NewModel(t, s, nil, FastRetry)
	var got []string
	resp, err := m.Stream(context.Background(), llm.Request{Prompt: "q"}, func(piece string) { got = append(got, piece) })
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != "Employees |get 25 |days [1]." || resp.Text != "Employees get 25 days [1]." {
		t.Errorf("pieces %q, text %q", got, resp.Text)
	}
	if resp.Usage.OutputTokens != 5 || resp.Model == "" {
		t.Errorf("usage %+v, model %q", resp.Usage, resp.Model)
	}
	if calls := s.CallsTo(p.StreamEndpoint); len(calls) != 2 || !calls[1].Stream {
		t.Errorf("calls %+v, want a 503 then a stream", calls)
	}
}

func testEmbed(t *testing.T, p Provider) {
	s := p.NewServer(t)
	s.Key = p.Key
	e := p.NewEmbedder(t, s, 8, 3)
	texts := []string{"vacation days", "sick leave", "guest wifi", "vpn token", "hotel limit", "per diem", "laptop"}
	s.Fail(Fault{Status: 429}) // the first batch is retried
	vecs, err := e.EmbedDocuments(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != len(texts) || e.Dim() != 8 {
		t.Fatalf("%d vectors for %d texts, dim %d", len(vecs), len(texts), e.Dim())
	}
	for i, v := range vecs {
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		want := HashVector(texts[i], 8)
		if len(v) != 8 || math.Abs(n-1) > 1e-5 || math.Abs(float64(v[0]-want[0])) > 1e-5 {
			t.Errorf("vector %d: len %d, norm² %v, not its text's", i, len(v), n)
		}
	}
	var sizes []int
	for _, c := range s.CallsTo(p.EmbedEndpoint) {
		if c.Status == http.StatusOK {
			sizes = append(sizes, len(c.Texts))
			if c.Dimensions != 8 || p.SentKey(c.Header) != p.Key {
				t.Errorf("embed call %+v", c)
			}
		}
	}
	if len(s.CallsTo(p.EmbedEndpoint)) != 4 || len(sizes) != 3 || sizes[0] != 3 || sizes[1] != 3 || sizes[2] != 1 {
		t.Errorf("batches %v, want a 429 then 3, 3, 1", sizes)
	}
	if q, err := e.EmbedQuery(context.Background(), "how many vacation days"); err != nil || len(q) != 8 {
		t.Fatalf("query vector %v, %v", q, err)
	}
	// A reply of the wrong length is an error, not a short vector.
	s.Embed = func(Call) [][]float32 { return [][]float32{{1, 0, 0}} }
	if _, err := e.EmbedQuery(context.Background(), "x"); !errors.Is(err, llm.ErrMalformed) ||
		!strings.Contains(err.Error(), p.Name+": "+p.EmbedOp+": ") {
		t.Errorf("wrong-length reply: %v", err)
	}
}
