// Package loadgen drives docent's POST /api/ask with concurrent clients
// for a fixed time and reports throughput, latency percentiles and
// responses by status, plus the memory and open files of a process (the
// server under test) read from /proc.
package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docent-hq/docent/internal/backoff"
)

// Options configure a run.
type Options struct {
	// URL is the server's base URL, for example http://127.0.0.1:8080.
	URL string
	// Clients is how many clients ask at once; each sends its next
	// question when the previous answer has arrived.
	Clients int
	// Duration is how long the clients keep asking.
	Duration time.Duration
	// Questions are asked in turn, each client starting at its own offset.
	Questions []string
	// Timeout bounds one request. Default 60s.
	Timeout time.Duration
}

// Report is what one run measured.
type Report struct {
	// Clients and Elapsed are the concurrency and the run's wall time.
	Clients int
	Elapsed time.Duration
	// Requests counts every request sent, answered or not.
	Requests int
	// Status counts responses by HTTP status.
	Status map[int]int
	// Errors counts requests that got no response, by kind ("timeout",
	// "connection refused", ...).
	Errors map[string]int
	// NoRetryAfter counts 503 responses without a Retry-After header.
	NoRetryAfter int
	// P50, P95, P99 and Max are response latencies (all responses).
	P50, P95, P99, Max time.Duration
}

// RPS is the responses per second over the run.
func (r Report) RPS() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

// Share is the fraction of requests answered with status.
func (r Report) Share(status int) float64 {
	if r.Requests == 0 {
		return 0
	}
	return float64(r.Status[status]) / float64(r.Requests)
}

// ServerErrors counts responses with a status of 500 or more.
func (r Report) ServerErrors() int {
	n := 0
	for code, c := range r.Status {
		if code >= 500 {
			n += c
		}
	}
	return n
}

// DefaultQuestions mix questions the bundled handbook answers with ones
// it does not.
var DefaultQuestions = []string{
	"What does Gatekeeper error GK-409 mean?",
	"How much is the meal per diem?",
	"How do I reset my VPN token?",
	"How many weeks of parental leave do I get?",
	"Who do I page for a SEV1 incident?",
	"What is the rate limit of the public API?",
	"How do I report a phishing email?",
	"What is on the cafeteria menu on Fridays?",
	"Can I expense a taxi to the airport?",
	"How do I connect to the guest wifi?",
}

// Run sends questions from opts.Clients clients until opts.Duration has
// passed or ctx ends. A request in flight at the end is waited for and
// counted: it was load the server carried. A client that gets 503 waits as
// long as its Retry-After header says (within the run) before asking
// again, as a well behaved client would.
func Run(ctx context.Context, opts Options) (Report, error) {
	if opts.Clients <= 0 || opts.Duration <= 0 || opts.URL == "" {
		return Report{}, errors.New("loadgen: set URL, Clients and Duration")
	}
	if len(opts.Questions) == 0 {
		opts.Questions = DefaultQuestions
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 60 * time.Second
	}
	transport := &http.Transport{
		Proxy:               nil,
		MaxIdleConns:        opts.Clients,
		MaxIdleConnsPerHost: opts.Clients,
		IdleConnTimeout:     30 * time.Second,
	}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: opts.Timeout}
	// The run's clock starts with its deadline, so that Elapsed is never
	// shorter than Duration.
	start := time.Now()
	end, cancel := context.WithDeadline(ctx, start.Add(opts.Duration)) // no new request after it
	defer cancel()

	type sample struct {
		took    time.Duration
		status  int
		errKind string
		noRetry bool
	}
	samples := make([][]sample, opts.Clients)
	var wg sync.WaitGroup
	for c := range opts.Clients {
		wg.Go(func() {
			for i := c; end.Err() == nil; i++ {
				q := opts.Questions[i%len(opts.Questions)]
				t0 := time.Now()
				status, retry, err := ask(ctx, client, opts.URL, q)
				if ctx.Err() != nil {
					return // the caller gave up: not a result
				}
				s := sample{took: time.Since(t0), status: status}
				if err != nil {
					s.errKind = errKind(err)
				}
				if status == http.StatusServiceUnavailable && retry < 0 {
					s.noRetry = true
				}
				samples[c] = append(samples[c], s)
				if retry > 0 {
					select {
					case <-end.Done():
					case <-time.After(retry):
					}
				}
			}
		})
	}
	wg.Wait()
	rep := Report{Clients: opts.Clients, Elapsed: time.Since(start), Status: map[int]int{}, Errors: map[string]int{}}
	var took []time.Duration
	for _, ss := range samples {
		for _, s := range ss {
			rep.Requests++
			if s.errKind != "" {
				rep.Errors[s.errKind]++
				continue
			}
			rep.Status[s.status]++
			if s.noRetry {
				rep.NoRetryAfter++
			}
			took = append(took, s.took)
		}
	}
	slices.Sort(took)
	rep.P50, rep.P95, rep.P99 = percentile(took, 50), percentile(took, 95), percentile(took, 99)
	if len(took) > 0 {
		rep.Max = took[len(took)-1]
	}
	return rep, nil
}

// ask posts one question and reads the whole reply. retry is the
// Retry-After of a 503 (-1 when it had none), else 0.
func ask(ctx context.Context, client *http.Client, base, question string) (status int, retry time.Duration, err error) {
	body, err := json.Marshal(map[string]string{"question": question})
	if err != nil {
		return 0, 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/ask", strings.NewReader(string(body)))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, 0, err
	}
	if resp.StatusCode == http.StatusServiceUnavailable {
		d, ok := backoff.RetryAfter(resp.Header.Get("Retry-After"), time.Now())
		if !ok {
			return resp.StatusCode, -1, nil
		}
		return resp.StatusCode, d, nil
	}
	return resp.StatusCode, 0, nil
}

// errKind names a transport error for the report.
func errKind(err error) string {
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed"
	case strings.Contains(err.Error(), "connection refused"):
		return "connection refused"
	case strings.Contains(err.Error(), "connection reset"):
		return "connection reset"
	}
	return "other"
}

// percentile is the p-th percentile of sorted durations (nearest rank).
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[min(max(i-1, 0), len(sorted)-1)]
}

// Counter reads a Prometheus counter from base's /metrics: the sum of
// its samples over every label set.
func Counter(base, name string) (float64, error) {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return 0, fmt.Errorf("loadgen: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("loadgen: %w", err)
	}
	sum := 0.0
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
		if err != nil {
			return 0, fmt.Errorf("loadgen: metric line %q: %w", line, err)
		}
		sum += v
	}
	return sum, nil
}

// Proc is a process's resident memory and open file descriptors.
type Proc struct {
	RSS   int64 // bytes
	Files int
}

// ReadProc reads the resident set size and the number of open file
// descriptors of process pid from /proc (Linux).
func ReadProc(pid int) (Proc, error) {
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return Proc{}, fmt.Errorf("loadgen: %w", err)
	}
	var p Proc
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return Proc{}, fmt.Errorf("loadgen: VmRSS %q: %w", rest, err)
			}
			p.RSS = kb << 10
		}
	}
	fds, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	if err != nil {
		return Proc{}, fmt.Errorf("loadgen: %w", err)
	}
	p.Files = len(fds)
	return p, nil
}
