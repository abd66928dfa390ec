// Package webapi is the HTTP client the wiki sources (Confluence, Notion)
// share: plain net/http with the retry, rate-limit and error rules every
// remote source needs, so that each source only speaks its API.
//
//   - 429 and 503 honour Retry-After (seconds or an HTTP date); without
//     one they back off like other failures.
//   - Other 5xx responses and network errors are retried with exponential
//     backoff and jitter, a bounded number of times.
//   - A client-side limiter keeps the request rate under what the API
//     allows (Notion: about 3 requests a second).
//   - Every wait goes through an injectable Clock, so tests never sleep.
//   - Errors name the method, path and status and never carry a secret:
//     the configured secrets are masked in anything quoted from a response.
//   - Requests, retries, rate-limit waits and time waited are counted per
//     listing (WithStats).
package webapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/internal/backoff"
	"github.com/docent-hq/docent/internal/redact"
)

// Defaults of Options.
const (
	DefaultMaxRetries    = 6
	DefaultBaseDelay     = 500 * time.Millisecond
	DefaultMaxDelay      = 30 * time.Second
	DefaultMaxRetryAfter = 5 * time.Minute
	DefaultMaxBodyBytes  = 64 << 20
	DefaultTimeout       = 60 * time.Second
)

// Clock is the time source of a Client (backoff.Clock): the wall clock
// in production, a fake one in tests.
type Clock = backoff.Clock

// Options configure a Client. Zero fields take the defaults.
type Options struct {
	// Name prefixes every error ("confluence", "notion").
	Name string
	// HTTPClient sends the requests; a client with DefaultTimeout when nil.
	HTTPClient *http.Client
	// Authorize sets the credentials of a request (Authorization header).
	Authorize func(*http.Request)
	// Header is added to every request (Notion-Version, Accept).
	Header http.Header
	// MaxRetries is how many times a failed request is sent again.
	// Default DefaultMaxRetries; negative means none.
	MaxRetries int
	// BaseDelay and MaxDelay bound the exponential backoff: the n-th
	// retry waits between half and all of min(MaxDelay, BaseDelay×2^n).
	BaseDelay, MaxDelay time.Duration
	// MaxRetryAfter is the longest Retry-After honoured; a server asking
	// for a longer wait fails the request instead. Default 5 minutes.
	MaxRetryAfter time.Duration
	// RequestsPerSecond limits the request rate (0: no limit); Burst is
	// how many may go at once (default 1).
	RequestsPerSecond float64
	Burst             int
	// MaxBodyBytes bounds a response body. Default 64 MiB.
	MaxBodyBytes int64
	// Clock measures and waits; backoff.Real when nil.
	Clock Clock
	// Jitter returns a number in [0, 1); math/rand when nil.
	Jitter func() float64
	// Secrets are masked in error messages that quote a response.
	Secrets []string
}

// Client sends requests to one API with the retry and rate-limit rules.
// It is safe for concurrent use.
type Client struct {
	opts Options
	hc   *http.Client
	lim  *rate.Limiter
	mu   sync.Mutex // guards lim's reservations against the fake clock
}

// New returns a Client with opts.
func New(opts Options) *Client {
	if opts.Name == "" {
		opts.Name = "webapi"
	}
	if opts.MaxRetries == 0 {
		opts.MaxRetries = DefaultMaxRetries
	}
	if opts.BaseDelay <= 0 {
		opts.BaseDelay = DefaultBaseDelay
	}
	if opts.MaxDelay <= 0 {
		opts.MaxDelay = DefaultMaxDelay
	}
	if opts.MaxRetryAfter <= 0 {
		opts.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Clock == nil {
		opts.Clock = backoff.Real
	}
	c := &Client{opts: opts, hc: opts.HTTPClient}
	if c.hc == nil {
		c.hc = &http.Client{Timeout: DefaultTimeout}
	}
	if opts.RequestsPerSecond > 0 {
		c.lim = rate.NewLimiter(rate.Limit(opts.RequestsPerSecond), max(1, opts.Burst))
	}
	return c
}

// ErrUnauthorized is wrapped by the error of a request the API refused
// for its credentials (401): the token is wrong, expired or revoked.
var ErrUnauthorized = errors.New("the API refused the credentials (401)")

// StatusError is a response with a status other than 2xx, after any
// retries.
type StatusError struct {
	// Name is the client's name; Method and Path say which request.
	Name, Method, Path string
	// Code is the HTTP status code.
	Code int
	// Message is the start of the response body, secrets masked.
	Message string
	// Attempts is how many times the request was sent.
	Attempts int
}

// Error names the request, its status, the attempts and what the API
// said.
func (e *StatusError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s %s: %d %s", e.Name, e.Method, e.Path, e.Code, http.StatusText(e.Code))
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// Unwrap gives ErrUnauthorized for a 401.
func (e *StatusError) Unwrap() error {
	if e.Code == http.StatusUnauthorized {
		return ErrUnauthorized
	}
	return nil
}

// StatusCode returns the HTTP status of err's StatusError, or 0.
func StatusCode(err error) int {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

// Response is a successful (2xx) response, read whole.
type Response struct {
	// Code is the HTTP status code.
	Code int
	// Header holds the response headers (Link, for pagination).
	Header http.Header
	// Body is the response body.
	Body []byte
}

// Do sends a request (body may be nil) with the retry rules and returns
// the response once it succeeds. It returns a *StatusError for a non-2xx
// response it will not retry, or the last one when retries run out; the
// last network error when those ran out; or ctx's error.
func (c *Client) Do(ctx context.Context, method, rawURL string, body []byte) (*Response, error) {
	stats := statsFrom(ctx)
	path := pathOf(rawURL)
	attempts := 1 + c.opts.MaxRetries
	if c.opts.MaxRetries < 0 {
		attempts = 1
	}
	r := backoff.Retrier{
		Policy:   backoff.Policy{Base: c.opts.BaseDelay, Max: c.opts.MaxDelay, Jitter: c.opts.Jitter},
		Attempts: attempts,
		MaxWait:  c.opts.MaxRetryAfter,
		Clock:    c.opts.Clock,
		OnRetry: func(_ int, wait time.Duration, f backoff.Failure, _ error) {
			s := connectors.RequestStats{Retries: 1, Waited: wait}
			if f.RateLimited {
				s.RateLimited = 1
			}
			stats.add(s)
		},
	}
	var resp *Response
	sent := 0
	err := r.Do(ctx, func(ctx context.Context) error {
		if err := c.throttle(ctx, stats); err != nil {
			return err
		}
		got, err := c.send(ctx, method, rawURL, body)
		sent++
		stats.add(connectors.RequestStats{Requests: 1})
		switch {
		case err != nil:
			return &sendError{fmt.Errorf("%s: %s %s: %s", c.opts.Name, method, path, c.mask(err.Error())), err}
		case got.Code >= 200 && got.Code < 300:
			resp = got
			return nil
		}
		return &statusFailure{c.statusError(method, path, got, sent), got.Header}
	}, c.classify)
	var be *backoff.Error
	switch {
	case err == nil:
		return resp, nil
	case !errors.As(err, &be):
		return nil, unwrapFailure(err)
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(be.Reason, backoff.ErrWaitTooLong):
		return nil, fmt.Errorf("%w (the server asked to wait %s, more than %s)", unwrapFailure(be.Err), be.Wait, c.opts.MaxRetryAfter)
	case errors.Is(be.Reason, backoff.ErrNoTime):
		return nil, fmt.Errorf("%w (no time left to retry)", unwrapFailure(be.Err))
	}
	return nil, unwrapFailure(be.Err)
}

// statusFailure is a non-2xx response inside Do, with its headers for
// classify.
type statusFailure struct {
	err    *StatusError
	header http.Header
}

func (f *statusFailure) Error() string { return f.err.Error() }
func (f *statusFailure) Unwrap() error { return f.err }

// sendError is a request that got no response inside Do: msg names the
// request (secrets masked), err is the transport's error for classify.
type sendError struct {
	msg error
	err error
}

func (e *sendError) Error() string { return e.msg.Error() }
func (e *sendError) Unwrap() error { return e.msg }

// unwrapFailure returns the error Do reports for a failure inside it.
func unwrapFailure(err error) error {
	if f, ok := err.(*statusFailure); ok {
		return f.err
	}
	if e, ok := err.(*sendError); ok {
		return e.msg
	}
	return err
}

// classify reads a failed attempt with the one transient predicate of
// docent's clients: 408, 429 and 5xx responses and network errors are
// retried; 429 and 503 count as rate limited, and their Retry-After
// (seconds or an HTTP date) is waited as it is.
func (c *Client) classify(err error) backoff.Failure {
	var sf *statusFailure
	if errors.As(err, &sf) {
		f := backoff.HTTPFailure(sf.err.Code, sf.header, c.opts.Clock.Now())
		f.RateLimited = sf.err.Code == http.StatusTooManyRequests || sf.err.Code == http.StatusServiceUnavailable
		return f
	}
	var se *sendError
	if errors.As(err, &se) {
		return backoff.Failure{Transient: backoff.Transient(se.err)}
	}
	return backoff.Failure{}
}

// GetJSON sends a GET and decodes the JSON response into out. It returns
// the response headers (for Link pagination) and Do's errors, or a
// decoding error.
func (c *Client) GetJSON(ctx context.Context, rawURL string, out any) (http.Header, error) {
	resp, err := c.Do(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return nil, fmt.Errorf("%s: GET %s: decode response: %w", c.opts.Name, pathOf(rawURL), err)
	}
	return resp.Header, nil
}

// PostJSON sends in as a JSON POST and decodes the JSON response into out.
func (c *Client) PostJSON(ctx context.Context, rawURL string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("%s: POST %s: %w", c.opts.Name, pathOf(rawURL), err)
	}
	resp, err := c.Do(ctx, http.MethodPost, rawURL, body)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return fmt.Errorf("%s: POST %s: decode response: %w", c.opts.Name, pathOf(rawURL), err)
	}
	return nil
}

// send makes one attempt and reads the whole body.
func (c *Client) send(ctx context.Context, method, rawURL string, body []byte) (*Response, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, rawURL, r)
	if err != nil {
		return nil, err
	}
	for k, vs := range c.opts.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("User-Agent", "docent")
	if c.opts.Authorize != nil {
		c.opts.Authorize(req)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.opts.MaxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	if int64(len(data)) > c.opts.MaxBodyBytes {
		return nil, fmt.Errorf("response larger than %d bytes", c.opts.MaxBodyBytes)
	}
	return &Response{Code: resp.StatusCode, Header: resp.Header, Body: data}, nil
}

// throttle waits for the client-side rate limiter.
func (c *Client) throttle(ctx context.Context, stats *Stats) error {
	if c.lim == nil {
		return ctx.Err()
	}
	c.mu.Lock()
	now := c.opts.Clock.Now()
	d := c.lim.ReserveN(now, 1).DelayFrom(now)
	c.mu.Unlock()
	if d <= 0 {
		return ctx.Err()
	}
	stats.add(connectors.RequestStats{Waited: d})
	return c.opts.Clock.Sleep(ctx, d)
}

func (c *Client) statusError(method, path string, resp *Response, attempts int) *StatusError {
	return &StatusError{Name: c.opts.Name, Method: method, Path: path, Code: resp.Code,
		Message: c.mask(snippet(resp.Body)), Attempts: attempts}
}

func (c *Client) mask(s string) string { return redact.Secrets(redact.URLs(s), c.opts.Secrets...) }

// snippet is the start of a response body as one line: enough to show
// what the API said.
func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return strings.ToValidUTF8(s, "")
}

// pathOf is the path of a URL, for error messages (queries carry long
// cursors).
func pathOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Path == "" {
		return "/"
	}
	return u.Path
}

// Stats accumulates connectors.RequestStats across the requests of one
// listing; safe for concurrent use. The zero value is ready.
type Stats struct {
	mu sync.Mutex
	s  connectors.RequestStats
}

// Get returns the totals so far.
func (s *Stats) Get() connectors.RequestStats {
	if s == nil {
		return connectors.RequestStats{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.s
}

func (s *Stats) add(o connectors.RequestStats) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.s = s.s.Add(o)
	s.mu.Unlock()
}

type statsKey struct{}

// WithStats returns a context whose requests are counted in s.
func WithStats(ctx context.Context, s *Stats) context.Context {
	return context.WithValue(ctx, statsKey{}, s)
}

func statsFrom(ctx context.Context) *Stats {
	s, _ := ctx.Value(statsKey{}).(*Stats)
	return s
}

// NextLink returns the URL of the rel="next" link of a Link header
// (RFC 8288), resolved against base, or "".
func NextLink(h http.Header, base string) string {
	for _, v := range h.Values("Link") {
		for _, part := range strings.Split(v, ",") {
			target, params, ok := strings.Cut(part, ";")
			if !ok {
				continue
			}
			target = strings.TrimSpace(target)
			if !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") {
				continue
			}
			for _, p := range strings.Split(params, ";") {
				k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
				if strings.EqualFold(k, "rel") && slicesContainsFold(strings.Fields(strings.Trim(val, `"`)), "next") {
					return Resolve(base, target[1:len(target)-1])
				}
			}
		}
	}
	return ""
}

func slicesContainsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// Resolve returns ref resolved against base: an absolute ref as it is, a
// path-absolute one ("/wiki/api/v2/...") on base's scheme and host. A
// relative ref that starts with base's path is taken as already under it.
func Resolve(base, ref string) string {
	r, err := url.Parse(ref)
	if err != nil {
		return ref
	}
	if r.IsAbs() {
		return ref
	}
	b, err := url.Parse(base)
	if err != nil {
		return ref
	}
	return b.ResolveReference(r).String()
}
