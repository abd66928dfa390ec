package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/admission"
)

// answered is an asker that answers every question.
func answered(calls *atomic.Int64) Asker {
	return askerFunc(func(_ context.Context, q docent.Question) (docent.Turn, error) {
		calls.Add(1)
		return docent.Turn{ID: 1, Question: q, Answer: docent.Answer{Status: docent.StatusAnswered, Text: "Nine [1].",
			Citations: []docent.Citation{{N: 1, Title: "Office"}}}}, nil
	})
}

// mustDo sends a request (with Content-Type contentType unless empty) and
// returns the response with its whole body.
func mustDo(t *testing.T, method, url, contentType, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// mustErrorBody checks that resp carries a JSON error with code.
func mustErrorBody(t *testing.T, resp *http.Response, body []byte, code string) {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var e ErrorResponse
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body is not JSON: %v\n%s", err, body)
	}
	if e.Code != code || e.Message == "" {
		t.Errorf("error body = %+v, want code %q and a message", e, code)
	}
}

func TestAskStrictBody(t *testing.T) {
	var calls atomic.Int64
	ts := newTestServer(t, answered(&calls), nil)
	const q = `{"question":"When does the office open?"}`
	tests := []struct {
		name        string
		contentType string
		body        string
		wantStatus  int
		wantCode    string // "" for a 200
	}{
		{"one object", "application/json", q, 200, ""},
		{"trailing whitespace", "application/json", q + " \n\t", 200, ""},
		{"json with charset", "application/json; charset=utf-8", q, 200, ""},
		{"a +json type", "application/vnd.docent+json", q, 200, ""},
		{"json sent as a form (curl -d)", "application/x-www-form-urlencoded", q, 200, ""},
		{"json without content type", "", q, 200, ""},
		{"trailing text", "application/json", q + " and more", 400, CodeTrailingData},
		{"two objects", "application/json", q + q, 400, CodeTrailingData},
		{"trailing text, form type", "application/x-www-form-urlencoded", q + "x", 400, CodeTrailingData},
		{"not json", "application/json", `question=hi`, 400, CodeInvalidJSON},
		{"not json, form type", "application/x-www-form-urlencoded", `question=hi`, 415, CodeUnsupportedMediaType},
		{"not json, no type", "", `hi`, 415, CodeUnsupportedMediaType},
		{"not json, text type", "text/plain", `What is GK-409?`, 415, CodeUnsupportedMediaType},
		{"empty body", "application/json", ``, 400, CodeInvalidJSON},
		{"truncated object", "application/json", `{"question":"x"`, 400, CodeInvalidJSON},
		{"an array", "application/json", `["x"]`, 400, CodeInvalidJSON},
		{"wrong field type", "application/json", `{"question":7}`, 400, CodeInvalidJSON},
		{"unknown field", "application/json", `{"question":"x","top_k":3}`, 400, CodeUnknownField},
		{"null", "application/json", `null`, 400, CodeEmptyQuestion},
		{"blank question", "application/json", `{"question":"  \n"}`, 400, CodeEmptyQuestion},
		{"oversized", "application/json", `{"question":"` + strings.Repeat("a", maxAskBody) + `"}`, 413, CodeBodyTooLarge},
		{"oversized, not json", "text/plain", strings.Repeat("a", 2*maxAskBody), 413, CodeBodyTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := calls.Load()
			resp, b := mustDo(t, http.MethodPost, ts.URL+"/api/ask", tt.contentType, tt.body)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.wantStatus, b)
			}
			asked := calls.Load() - before
			if tt.wantCode == "" {
				if asked != 1 {
					t.Errorf("asker called %d times, want 1", asked)
				}
				return
			}
			if asked != 0 {
				t.Errorf("a refused request reached the asker")
			}
			mustErrorBody(t, resp, b, tt.wantCode)
		})
	}
}

// TestAskBeforeReady: until the first sync has filled the index, asks get
// 503 not_ready with Retry-After, never a "not in the docs" answer.
func TestAskBeforeReady(t *testing.T) {
	var calls atomic.Int64
	var shed []string
	r := &readiness{}
	s := New(answered(&calls), format, prometheus.NewRegistry(), nil, slog.New(slog.DiscardHandler),
		Options{OnShed: func(code string) { shed = append(shed, code) }, Ready: r})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	post := func() (*http.Response, []byte) {
		return mustDo(t, http.MethodPost, ts.URL+"/api/ask", "application/json", `{"question":"hi"}`)
	}
	resp, b := post()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("before ready: %d, Retry-After %q: %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	mustErrorBody(t, resp, b, CodeNotReady)
	if calls.Load() != 0 || len(shed) != 1 || shed[0] != CodeNotReady {
		t.Errorf("asker calls %d, shed %v; want 0 and [not_ready]", calls.Load(), shed)
	}
	r.loaded.Store(true)
	if resp, b := post(); resp.StatusCode != http.StatusOK || calls.Load() != 1 {
		t.Errorf("after ready: %d %s", resp.StatusCode, b)
	}
}

// TestAskShedsEarly: with every slot busy and the queue full, an ask is
// refused at once with 503 overloaded and Retry-After; one that waits
// longer than MaxWait is refused too. Neither reaches the asker, and every
// admitted ask is answered.
func TestAskShedsEarly(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int64
	entered := make(chan struct{}, 10)
	asker := askerFunc(func(_ context.Context, q docent.Question) (docent.Turn, error) {
		calls.Add(1)
		entered <- struct{}{}
		<-release
		return docent.Turn{ID: 1, Answer: docent.Answer{Status: docent.StatusAnswered, Citations: []docent.Citation{{N: 1}}}}, nil
	})
	var mu sync.Mutex
	shed := map[string]int{}
	adm := admission.New(admission.Options{Slots: 1, MaxQueue: 1, MaxWait: 300 * time.Millisecond})
	s := New(asker, format, prometheus.NewRegistry(), nil, slog.New(slog.DiscardHandler), Options{
		Admission: adm,
		OnShed:    func(code string) { mu.Lock(); shed[code]++; mu.Unlock() },
	})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	type result struct {
		resp *http.Response
		body []byte
		took time.Duration
	}
	ask := func() chan result {
		ch := make(chan result, 1)
		go func() {
			start := time.Now()
			resp, err := http.Post(ts.URL+"/api/ask", "application/json", strings.NewReader(`{"question":"q"}`))
			if err != nil {
				t.Error(err)
				close(ch)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			ch <- result{resp, b, time.Since(start)}
		}()
		return ch
	}

	first := ask()
	<-entered // the one slot is taken
	waiting := ask()
	// Wait until the second ask is queued, then a third finds the queue full.
	deadline := time.Now().Add(5 * time.Second)
	for adm.Stats().Waiting["api"] != 1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	full := <-ask()
	if full.resp.StatusCode != http.StatusServiceUnavailable || full.resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("queue full: %d, Retry-After %q: %s", full.resp.StatusCode, full.resp.Header.Get("Retry-After"), full.body)
	}
	mustErrorBody(t, full.resp, full.body, CodeOverloaded)
	if full.took > 200*time.Millisecond {
		t.Errorf("a full queue refused after %v, want at once", full.took)
	}
	// The queued ask gives up after MaxWait.
	timedOut := <-waiting
	if timedOut.resp.StatusCode != http.StatusServiceUnavailable || timedOut.took < 300*time.Millisecond {
		t.Errorf("queued ask: %d after %v, want 503 after MaxWait", timedOut.resp.StatusCode, timedOut.took)
	}
	close(release)
	if r := <-first; r.resp.StatusCode != http.StatusOK {
		t.Errorf("admitted ask: %d %s", r.resp.StatusCode, r.body)
	}
	mu.Lock()
	overloaded := shed[CodeOverloaded]
	mu.Unlock()
	if calls.Load() != 1 || overloaded != 2 {
		t.Errorf("asker called %d times, shed %d overloaded; want 1 and 2", calls.Load(), overloaded)
	}
	// With the slot free again, asks go through.
	if r := <-ask(); r.resp.StatusCode != http.StatusOK {
		t.Errorf("after the load: %d %s", r.resp.StatusCode, r.body)
	}
}

// TestRouteErrorsAreJSON: no route and a wrong method answer JSON errors.
func TestRouteErrorsAreJSON(t *testing.T) {
	ts := newTestServer(t, answered(new(atomic.Int64)), nil)
	for _, tt := range []struct {
		method, path string
		wantStatus   int
		wantCode     string
		wantAllow    string
	}{
		{http.MethodGet, "/api/ask", 405, CodeMethodNotAllowed, "POST"},
		{http.MethodPost, "/healthz", 405, CodeMethodNotAllowed, "GET, HEAD"},
		{http.MethodGet, "/api/nope", 404, CodeNotFound, ""},
		{http.MethodGet, "/nope", 404, CodeNotFound, ""},
	} {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			resp, b := mustDo(t, tt.method, ts.URL+tt.path, "", "")
			if resp.StatusCode != tt.wantStatus || resp.Header.Get("Allow") != tt.wantAllow {
				t.Fatalf("%d Allow %q, want %d Allow %q", resp.StatusCode, resp.Header.Get("Allow"), tt.wantStatus, tt.wantAllow)
			}
			mustErrorBody(t, resp, b, tt.wantCode)
		})
	}
}
