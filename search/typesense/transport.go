package typesense

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// nodeDoer is the HTTP transport under typesense-go's generated client: it
// sends each request to a healthy node (the nearest node first, then the
// others in turn) and retries on the next node after a connection error
// or a 5xx.
//
// It replaces typesense-go v2.0.0's own APICall for two reasons: APICall
// retries a POST with the body already consumed by the first attempt (so
// an import or multi_search retried on another node arrives empty), and
// it keeps its node state without a lock, which races under concurrent
// queries. Here the body is buffered once and replayed on every attempt,
// and node state is guarded by a mutex.
type nodeDoer struct {
	client    *http.Client
	retries   int
	retryWait time.Duration
	recheck   time.Duration // how long a failed node is skipped
	log       *slog.Logger

	mu      sync.Mutex
	nearest *node
	nodes   []*node
	next    int
}

type node struct {
	url       *url.URL
	downUntil time.Time
}

func newNodeDoer(nodes []string, nearest string, timeout time.Duration, retries int, log *slog.Logger) (*nodeDoer, error) {
	d := &nodeDoer{
		client:    &http.Client{Timeout: timeout},
		retries:   retries,
		retryWait: 50 * time.Millisecond,
		recheck:   30 * time.Second,
		log:       log,
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
		n.downUntil = time.Now().Add(d.recheck)
	}
}

// Do sends req to up to retries+1 nodes and returns the first response
// below 500, or the last failure.
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
	var lastResp *http.Response
	var lastErr error
	for attempt := 0; attempt <= d.retries; attempt++ {
		if attempt > 0 {
			select {
			case <-req.Context().Done():
				return nil, req.Context().Err()
			case <-time.After(d.retryWait):
			}
		}
		n := d.pick(time.Now())
		r := req.Clone(req.Context())
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
		if err == nil && resp.StatusCode < 500 {
			d.mark(n, true)
			if lastResp != nil {
				lastResp.Body.Close()
			}
			return resp, nil
		}
		if req.Context().Err() != nil {
			if resp != nil {
				resp.Body.Close()
			}
			return nil, req.Context().Err()
		}
		d.mark(n, false)
		if lastResp != nil {
			lastResp.Body.Close()
		}
		lastResp, lastErr = resp, err
		status := 0
		if resp != nil {
			status = resp.StatusCode
			// Keep the body readable for the caller's error message.
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(b))
		}
		d.log.Debug("typesense: node failed; trying the next", slog.String("node", n.url.Host),
			slog.String("path", req.URL.Path), slog.Int("status", status), slog.Any("error", err))
	}
	if lastErr != nil {
		return nil, lastErr
	}
	return lastResp, nil
}
