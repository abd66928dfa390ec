package typesense

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/docent-hq/docent/internal/backoff"
)

// nodeDoer is the HTTP transport under typesense-go's generated client: it
// sends each request to a healthy node (the nearest node first, then the
// others in turn) and retries on the next node after a connection error,
// a 5xx or a 429, with the one backoff of docent's clients
// (internal/backoff; a 429's Retry-After is waited as it is).
//
// It replaces typesense-go v2.0.0's own APICall for two reasons: APICall
// retries a POST with the body already consumed by the first attempt (so
// an import or multi_search retried on another node arrives empty), and
// it keeps its node state without a lock, which races under concurrent
// queries. Here the body is buffered once and replayed on every attempt,
// and node state is guarded by a mutex.
type nodeDoer struct {
	client  *http.Client
	retries int
	// retry is the wait policy between attempts: from 50ms, doubling
	// to a second.
	retry   backoff.Policy
	recheck time.Duration // how long a failed node is skipped
	// maxRetryAfter is the longest Retry-After honoured.
	maxRetryAfter time.Duration
	clock         backoff.Clock
	log           *slog.Logger

	mu      sync.Mutex
	nearest *node
	nodes   []*node
	next    int
}

type node struct {
	url       *url.URL
	downUntil time.Time
}

func newNodeDoer(nodes []string, nearest string, timeout time.Duration, retries int, clock backoff.Clock, log *slog.Logger) (*nodeDoer, error) {
	if clock == nil {
		clock = backoff.Real
	}
	d := &nodeDoer{
		client:        &http.Client{Timeout: timeout},
		retries:       retries,
		retry:         backoff.Policy{Base: 50 * time.Millisecond, Max: time.Second},
		recheck:       30 * time.Second,
		maxRetryAfter: time.Minute,
		clock:         clock,
		log:           log,
	}
	parse := func(s string) (*node, error) {
		u, err := url.Parse(strings.TrimRight(s, "/"))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("typesense: node %q is not an http(s) URL", s)
		}
		return &node{url: u}, nil
	}
	for _, s := range nodes {
		n, err := parse(s)
		if err != nil {
			return nil, err
		}
		d.nodes = append(d.nodes, n)
	}
	if nearest != "" {
		n, err := parse(nearest)
		if err != nil {
			return nil, err
		}
		d.nearest = n
	}
	if len(d.nodes) == 0 && d.nearest == nil {
		return nil, errors.New("typesense: no nodes configured")
	}
	return d, nil
}

// pick returns the node for an attempt: the nearest node while it is
// healthy, else the next healthy node in turn, else (all down) the next in
// turn anyway.
func (d *nodeDoer) pick(now time.Time) *node {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.nearest != nil && !now.Before(d.nearest.downUntil) {
		return d.nearest
	}
	if len(d.nodes) == 0 {
		return d.nearest
	}
	for range d.nodes {
		n := d.nodes[d.next%len(d.nodes)]
		d.next++
		if !now.Before(n.downUntil) {
			return n
		}
	}
	n := d.nodes[d.next%len(d.nodes)]
	d.next++
	return n
}

func (d *nodeDoer) mark(n *node, healthy bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if healthy {
		n.downUntil = time.Time{}
	} else {
		n.downUntil = d.clock.Now().Add(d.recheck)
	}
}

// Do sends req to up to retries+1 nodes and returns the first response
// that is not worth retrying (below 500, not 408 or 429), or the last
// failure: the last response when the node answered, else the error.
func (d *nodeDoer) Do(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("typesense: read request body: %w", err)
		}
		body = b
	}
	ctx := req.Context()
	var last *http.Response // the last response, its body buffered when it failed
	keep := func(resp *http.Response) {
		if last != nil {
			last.Body.Close()
		}
		last = resp
	}
	r := backoff.Retrier{Policy: d.retry, Attempts: d.retries + 1, MaxWait: d.maxRetryAfter, Clock: d.clock}
	err := r.Do(ctx, func(ctx context.Context) error {
		n := d.pick(d.clock.Now())
		r := req.Clone(ctx)
		r.URL.Scheme, r.URL.Host, r.Host = n.url.Scheme, n.url.Host, n.url.Host
		r.URL.Path = n.url.Path + req.URL.Path
		if req.URL.RawPath != "" {
			r.URL.RawPath = n.url.Path + req.URL.RawPath
		}
		if body != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		}
		resp, err := d.client.Do(r)
		if err != nil {
			d.mark(n, false)
			keep(nil)
			d.log.Debug("typesense: node failed; trying the next", slog.String("node", n.url.Host),
				slog.String("path", req.URL.Path), slog.Any("error", err))
			return &sendError{err}
		}
		if !backoff.TransientStatus(resp.StatusCode) {
			d.mark(n, true)
			keep(resp)
			return nil
		}
		// A node that asks to slow down is not down.
		d.mark(n, resp.StatusCode == http.StatusTooManyRequests)
		// Keep the body readable for the caller's error message.
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(b))
		keep(resp)
		d.log.Debug("typesense: node failed; trying the next", slog.String("node", n.url.Host),
			slog.String("path", req.URL.Path), slog.Int("status", resp.StatusCode))
		return &statusError{resp}
	}, d.classify)
	switch {
	case err == nil:
		return last, nil
	case ctx.Err() != nil:
		keep(nil)
		return nil, ctx.Err()
	case last != nil:
		return last, nil // the last node's answer, for the caller's error
	}
	var se *sendError
	if errors.As(err, &se) {
		return nil, se.err
	}
	return nil, err
}

// sendError is a request no node answered; statusError a node's answer
// worth retrying.
type (
	sendError   struct{ err error }
	statusError struct{ resp *http.Response }
)

func (e *sendError) Error() string   { return e.err.Error() }
func (e *statusError) Error() string { return e.resp.Status }

// classify reads a failed attempt with the one transient predicate of
// docent's clients.
func (d *nodeDoer) classify(err error) backoff.Failure {
	var st *statusError
	if errors.As(err, &st) {
		return backoff.HTTPFailure(st.resp.StatusCode, st.resp.Header, d.clock.Now())
	}
	var se *sendError
	if errors.As(err, &se) {
		return backoff.Failure{Transient: backoff.Transient(se.err)}
	}
	return backoff.Failure{}
}
