package webapi_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/connectors/webapi"
)

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// script answers requests in turn with the given statuses (the last one
// repeats), counting them; 200 answers carry {"ok":true}.
type script struct {
	statuses []int
	header   http.Header // added to every non-2xx answer
	body     string      // of every non-2xx answer
	calls    atomic.Int32
	auth     atomic.Value // the Authorization header of the last request
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := int(s.calls.Add(1)) - 1
	s.auth.Store(r.Header.Get("Authorization"))
	code := s.statuses[min(n, len(s.statuses)-1)]
	if code == 200 {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
		return
	}
	for k, v := range s.header {
		w.Header()[k] = v
	}
	w.WriteHeader(code)
	w.Write([]byte(s.body))
}

func newClient(t *testing.T, h http.Handler, opts webapi.Options) (*webapi.Client, *connectorstest.Clock, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	clk := connectorstest.NewClock(t0)
	opts.Name = "wiki"
	opts.Clock = clk
	opts.Jitter = func() float64 { return 0.5 }
	return webapi.New(opts), clk, srv.URL
}

func get(t *testing.T, c *webapi.Client, url string) (connectors.RequestStats, error) {
	t.Helper()
	var stats webapi.Stats
	var out struct{ OK bool }
	_, err := c.GetJSON(webapi.WithStats(context.Background(), &stats), url+"/api/pages?cursor=abc", &out)
	if err == nil && !out.OK {
		t.Errorf("decoded %+v, want ok", out)
	}
	return stats.Get(), err
}

func TestRetries(t *testing.T) {
	const secret = "s3cret-token"
	for _, c := range []struct {
		name     string
		statuses []int
		header   http.Header
		body     string
		opts     webapi.Options
		// wantErr is a substring of the error ("" for success); calls is
		// how many requests the server saw; sleeps the waits asked for.
		wantErr string
		calls   int
		sleeps  []time.Duration
		stats   connectors.RequestStats
	}{
		{
			name: "429 with Retry-After seconds", statuses: []int{429, 200},
			header: http.Header{"Retry-After": {"2"}},
			calls:  2, sleeps: []time.Duration{2 * time.Second},
			stats: connectors.RequestStats{Requests: 2, Retries: 1, RateLimited: 1, Waited: 2 * time.Second},
		},
		{
			name: "503 with Retry-After as an HTTP date", statuses: []int{503, 200},
			header: http.Header{"Retry-After": {t0.Add(7 * time.Second).Format(http.TimeFormat)}},
			calls:  2, sleeps: []time.Duration{7 * time.Second},
			stats: connectors.RequestStats{Requests: 2, Retries: 1, RateLimited: 1, Waited: 7 * time.Second},
		},
		{
			name: "429 without Retry-After backs off", statuses: []int{429, 429, 200},
			calls: 3, sleeps: []time.Duration{375 * time.Millisecond, 750 * time.Millisecond},
			stats: connectors.RequestStats{Requests: 3, Retries: 2, RateLimited: 2, Waited: 1125 * time.Millisecond},
		},
		{
			// Jitter 0.5 puts each wait at 3/4 of BaseDelay×2^n.
			name: "five 500s then success", statuses: []int{500, 502, 500, 504, 500, 200},
			calls: 6, sleeps: []time.Duration{375 * time.Millisecond, 750 * time.Millisecond, 1500 * time.Millisecond,
				3 * time.Second, 6 * time.Second},
			stats: connectors.RequestStats{Requests: 6, Retries: 5, Waited: 11625 * time.Millisecond},
		},
		{
			name: "backoff is capped", statuses: []int{500, 500, 500, 200},
			opts:  webapi.Options{MaxDelay: time.Second},
			calls: 4, sleeps: []time.Duration{375 * time.Millisecond, 750 * time.Millisecond, 750 * time.Millisecond},
			stats: connectors.RequestStats{Requests: 4, Retries: 3, Waited: 1875 * time.Millisecond},
		},
		{
			name: "500s until the retries run out", statuses: []int{500},
			opts:    webapi.Options{MaxRetries: 2},
			wantErr: "wiki: GET /api/pages: 500 Internal Server Error (after 3 attempts)",
			calls:   3, sleeps: []time.Duration{375 * time.Millisecond, 750 * time.Millisecond},
			stats: connectors.RequestStats{Requests: 3, Retries: 2, Waited: 1125 * time.Millisecond},
		},
		{
			name: "401 is not retried and quotes no secret", statuses: []int{401},
			body:    `{"message":"token s3cret-token is invalid"}`,
			wantErr: "wiki: GET /api/pages: 401 Unauthorized: {\"message\":\"token REDACTED is invalid\"}",
			calls:   1, stats: connectors.RequestStats{Requests: 1},
		},
		{
			name: "404 is not retried", statuses: []int{404},
			wantErr: "404 Not Found", calls: 1, stats: connectors.RequestStats{Requests: 1},
		},
		{
			name: "a Retry-After beyond the limit fails at once", statuses: []int{429},
			header:  http.Header{"Retry-After": {"3600"}},
			wantErr: "the server asked to wait 1h0m0s, more than 5m0s",
			calls:   1, stats: connectors.RequestStats{Requests: 1},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &script{statuses: c.statuses, header: c.header, body: c.body}
			opts := c.opts
			opts.Secrets = []string{secret}
			opts.Authorize = func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+secret) }
			client, clk, url := newClient(t, s, opts)
			stats, err := get(t, client, url)
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("error %v, want success", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("error %v, want one containing %q", err, c.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), secret) {
				t.Errorf("error %q carries the token", err)
			}
			if got := int(s.calls.Load()); got != c.calls {
				t.Errorf("server saw %d requests, want %d", got, c.calls)
			}
			if got := clk.Sleeps(); !slices.Equal(got, c.sleeps) {
				t.Errorf("slept %v, want %v", got, c.sleeps)
			}
			if stats != c.stats {
				t.Errorf("stats %+v, want %+v", stats, c.stats)
			}
			if got := s.auth.Load(); got != "Bearer "+secret {
				t.Errorf("Authorization = %v", got)
			}
		})
	}
}

func TestUnauthorizedIsErrUnauthorized(t *testing.T) {
	client, _, url := newClient(t, &script{statuses: []int{401}}, webapi.Options{})
	_, err := get(t, client, url)
	if !errors.Is(err, webapi.ErrUnauthorized) || webapi.StatusCode(err) != 401 {
		t.Errorf("error %v (status %d), want ErrUnauthorized", err, webapi.StatusCode(err))
	}
	client, _, url = newClient(t, &script{statuses: []int{403}}, webapi.Options{})
	if _, err := get(t, client, url); errors.Is(err, webapi.ErrUnauthorized) || webapi.StatusCode(err) != 403 {
		t.Errorf("403: error %v, want a StatusError that is not ErrUnauthorized", err)
	}
}

// TestNetworkErrorsAreRetried drops the connection twice, then answers.
func TestNetworkErrorsAreRetried(t *testing.T) {
	var calls atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		w.Write([]byte(`{"ok":true}`))
	})
	client, clk, url := newClient(t, h, webapi.Options{})
	stats, err := get(t, client, url)
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 3 || stats.Retries != 2 || stats.RateLimited != 0 || len(clk.Sleeps()) != 2 {
		t.Errorf("calls %d, stats %+v, sleeps %v", calls.Load(), stats, clk.Sleeps())
	}
}

// TestRateLimiter sends ten requests at 3 per second on a fake clock: the
// limiter spaces them a third of a second apart.
func TestRateLimiter(t *testing.T) {
	s := &script{statuses: []int{200}}
	client, clk, url := newClient(t, s, webapi.Options{RequestsPerSecond: 3})
	var stats webapi.Stats
	ctx := webapi.WithStats(context.Background(), &stats)
	for range 10 {
		if _, err := client.Do(ctx, http.MethodGet, url, nil); err != nil {
			t.Fatal(err)
		}
	}
	elapsed := clk.Now().Sub(t0)
	if elapsed < 2900*time.Millisecond || elapsed > 3100*time.Millisecond {
		t.Errorf("ten requests at 3/s took %s of fake time, want about 3s", elapsed)
	}
	if got := stats.Get(); got.Requests != 10 || got.Retries != 0 || got.Waited != elapsed {
		t.Errorf("stats %+v, want 10 requests and %s waited", got, elapsed)
	}
}

func TestCancelledWhileWaiting(t *testing.T) {
	s := &script{statuses: []int{503}, header: http.Header{"Retry-After": {"30"}}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	client := webapi.New(webapi.Options{Name: "wiki", Clock: cancelClock{cancel}})
	_, err := client.Do(ctx, http.MethodGet, srv.URL, nil)
	if !errors.Is(err, context.Canceled) || s.calls.Load() != 1 {
		t.Errorf("error %v after %d calls, want context.Canceled after 1", err, s.calls.Load())
	}
}

// cancelClock cancels the context when asked to sleep.
type cancelClock struct{ cancel context.CancelFunc }

func (cancelClock) Now() time.Time { return t0 }

func (c cancelClock) Sleep(ctx context.Context, d time.Duration) error {
	c.cancel()
	return ctx.Err()
}

func TestPostJSON(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" ||
			r.Header.Get("Notion-Version") != "2022-06-28" {
			http.Error(w, "bad request", 400)
			return
		}
		buf := new(strings.Builder)
		if _, err := io.Copy(buf, r.Body); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Write([]byte(`{"echo":` + buf.String() + `}`))
	})
	client, _, url := newClient(t, h, webapi.Options{Header: http.Header{"Notion-Version": {"2022-06-28"}}})
	var out struct {
		Echo struct {
			PageSize int `json:"page_size"`
		}
	}
	if err := client.PostJSON(context.Background(), url+"/v1/search", map[string]int{"page_size": 100}, &out); err != nil {
		t.Fatal(err)
	}
	if out.Echo.PageSize != 100 {
		t.Errorf("echo %+v", out)
	}
}

func TestNextLink(t *testing.T) {
	for _, c := range []struct{ header, want string }{
		{`</wiki/api/v2/spaces/1/pages?cursor=xyz>; rel="next"`, "https://acme.atlassian.net/wiki/api/v2/spaces/1/pages?cursor=xyz"},
		{`<https://other.example/p?c=1>; rel="prev", </wiki/n?cursor=2>; rel="next"`, "https://acme.atlassian.net/wiki/n?cursor=2"},
		{`</wiki/n?cursor=2>; rel="prev"`, ""},
		{`garbage`, ""},
	} {
		h := http.Header{"Link": {c.header}}
		if got := webapi.NextLink(h, "https://acme.atlassian.net/wiki"); got != c.want {
			t.Errorf("NextLink(%q) = %q, want %q", c.header, got, c.want)
		}
	}
}
