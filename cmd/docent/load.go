package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/internal/loadgen"
)

// Acceptance bar of the load test, checked on the last (largest) phase.
const (
	loadMinOK      = 0.99 // share of 200s
	loadMaxDrift   = 0.20 // growth of RSS and open files after settling, vs before
	loadReadyAfter = 3 * time.Minute
)

// Load drives POST /api/ask with concurrent clients. Without --url it
// starts `docent serve` (this binary) on a free port over a temporary data
// dir, waits for /readyz, and reads the server's memory and open files
// before the load, after each phase and --settle after the last one. It
// prints requests/s, latency percentiles and responses by status for each
// phase, and fails when the last phase had a 5xx, less than 99% 200s, a
// 503 without Retry-After, or when memory or open files did not come back
// within 20% of their values before the load.
func (m *Main) Load(ctx context.Context, args []string) error {
	fl := m.flagSet("load")
	url := fl.String("url", "", "drive this server instead of starting one (no memory or file figures)")
	clients := fl.String("clients", "32,200", "comma-separated client counts, one phase each")
	duration := fl.Duration("duration", 60*time.Second, "length of each phase")
	settle := fl.Duration("settle", 60*time.Second, "wait after the load before reading memory and open files again")
	questionsFile := fl.String("questions", "", "ask the questions of this golden-set YAML file (default: ten built-in ones)")
	rest, err := m.parse(fl, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("load takes no arguments, got %q: %w", rest, errUsage)
	}
	var questions []string
	if *questionsFile != "" {
		g, err := eval.LoadGolden(*questionsFile)
		if err != nil {
			return fmt.Errorf("load: %w", err)
		}
		for _, q := range g.Questions {
			questions = append(questions, q.Question)
		}
	}
	var phases []int
	for f := range strings.SplitSeq(*clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return fmt.Errorf("load: --clients: %q is not a positive number", f)
		}
		phases = append(phases, n)
	}

	base, pid := *url, 0
	var srv *loadServer
	if base == "" {
		var err error
		srv, err = m.startServer(ctx)
		if err != nil {
			return err
		}
		defer srv.remove()
		base, pid = srv.url, srv.cmd.Process.Pid
		fmt.Fprintf(m.Stdout, "docent serve: pid %d at %s, data dir %s, log %s\n", pid, base, srv.dataDir, srv.logPath)
	}
	stats := func(when string) loadgen.Proc {
		if pid == 0 {
			return loadgen.Proc{}
		}
		p, err := loadgen.ReadProc(pid)
		if err != nil {
			fmt.Fprintf(m.Stdout, "%s: %v\n", when, err)
			return p
		}
		fmt.Fprintf(m.Stdout, "%-26s RSS %7.1f MiB, open files %d\n", when+":", float64(p.RSS)/(1<<20), p.Files)
		return p
	}
	before := stats("before the load")
	fmt.Fprintln(m.Stdout, loadHeader)

	var last loadgen.Report
	for _, n := range phases {
		rep, err := loadgen.Run(ctx, loadgen.Options{URL: base, Clients: n, Duration: *duration, Questions: questions})
		if err != nil {
			return err
		}
		writeLoadRow(m.Stdout, rep)
		stats(fmt.Sprintf("after %d clients", n))
		last = rep
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	var after loadgen.Proc
	if srv != nil {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(*settle):
		}
		after = stats(fmt.Sprintf("%s after the load", *settle))
		turns, err := loadgen.Counter(base, "docent_turns_total")
		if err != nil {
			return err
		}
		srv.stop() // a clean stop checkpoints the WAL into docent.db
		writeStoreSize(m.Stdout, filepath.Join(srv.dataDir, "docent.db"), turns)
	}

	var failed []string
	check := func(ok bool, format string, args ...any) {
		mark := "ok  "
		if !ok {
			mark = "FAIL"
			failed = append(failed, fmt.Sprintf(format, args...))
		}
		fmt.Fprintf(m.Stdout, "  %s %s\n", mark, fmt.Sprintf(format, args...))
	}
	fmt.Fprintf(m.Stdout, "acceptance, %d clients:\n", last.Clients)
	check(last.ServerErrors() == 0, "%d responses >= 500", last.ServerErrors())
	check(last.Share(http.StatusOK) >= loadMinOK, "%.2f%% 200s (want >= %.0f%%)", 100*last.Share(http.StatusOK), 100*loadMinOK)
	other := last.Requests - last.Status[http.StatusOK] - last.Status[http.StatusServiceUnavailable]
	check(other == 0 && last.NoRetryAfter == 0, "the rest are 503 with Retry-After (%d other, %d without Retry-After)", other, last.NoRetryAfter)
	if pid != 0 {
		check(growth(before.RSS, after.RSS) <= loadMaxDrift, "RSS back within %.0f%%: %.1f -> %.1f MiB (%+.1f%%)", 100*loadMaxDrift,
			float64(before.RSS)/(1<<20), float64(after.RSS)/(1<<20), 100*growth(before.RSS, after.RSS))
		check(growth(int64(before.Files), int64(after.Files)) <= loadMaxDrift, "open files back within %.0f%%: %d -> %d",
			100*loadMaxDrift, before.Files, after.Files)
	}
	if len(failed) > 0 {
		return fmt.Errorf("load: %s", strings.Join(failed, "; "))
	}
	fmt.Fprintln(m.Stdout, "PASS")
	return nil
}

// writeStoreSize prints the size of the database file at path per 10,000
// stored turns.
func writeStoreSize(w io.Writer, path string, turns float64) {
	st, err := os.Stat(path)
	if err != nil || turns == 0 {
		fmt.Fprintf(w, "store: no size per turn (%.0f turns, %v)\n", turns, err)
		return
	}
	mib := float64(st.Size()) / (1 << 20)
	fmt.Fprintf(w, "store: %.0f turns, docent.db %.1f MiB: %.1f MiB per 10,000 turns\n", turns, mib, mib/turns*10000)
}

// growth is how much after exceeds before, as a fraction of before (0
// when it does not): the test looks for what a load leaves behind, and
// pools that drain below their size before the load leave nothing.
func growth(before, after int64) float64 {
	if before == 0 || after <= before {
		return 0
	}
	return float64(after-before) / float64(before)
}

// loadHeader heads the rows writeLoadRow prints.
const loadHeader = "clients    time  requests    req/s      p50      p95      p99      max  responses"

// writeLoadRow prints one phase under loadHeader.
func writeLoadRow(w io.Writer, r loadgen.Report) {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0fms", float64(d)/float64(time.Millisecond)) }
	var codes []string
	for _, code := range slices.Sorted(maps.Keys(r.Status)) {
		codes = append(codes, fmt.Sprintf("%d:%d", code, r.Status[code]))
	}
	for _, kind := range slices.Sorted(maps.Keys(r.Errors)) {
		codes = append(codes, fmt.Sprintf("%s:%d", kind, r.Errors[kind]))
	}
	fmt.Fprintf(w, "%7d %6.1fs %9d %8.1f %8s %8s %8s %8s  %s\n", r.Clients, r.Elapsed.Seconds(), r.Requests, r.RPS(),
		ms(r.P50), ms(r.P95), ms(r.P99), ms(r.Max), strings.Join(codes, " "))
}

// loadServer is a `docent serve` child process.
type loadServer struct {
	cmd     *exec.Cmd
	url     string
	dataDir string
	logPath string
	done    chan struct{} // closed when the process has exited
	exit    error         // cmd.Wait's error, set before done is closed
}

// startServer starts this binary's `serve` on a free port over a new
// temporary data dir (the configured sources, the demo handbook by
// default) and waits until it is ready.
func (m *Main) startServer(ctx context.Context) (*loadServer, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	dataDir, err := os.MkdirTemp("", "docent-load-")
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dataDir, "serve.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	args := []string{"serve", "--addr", addr}
	if m.ConfigPath != "" {
		args = append([]string{"--config", m.ConfigPath}, args...)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "DOCENT_DATA="+dataDir)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("load: start serve: %w", err)
	}
	srv := &loadServer{cmd: cmd, url: "http://" + addr, dataDir: dataDir, logPath: logPath, done: make(chan struct{})}
	go func() {
		srv.exit = cmd.Wait()
		logFile.Close()
		close(srv.done)
	}()
	if err := srv.waitReady(ctx); err != nil {
		srv.remove()
		return nil, err
	}
	return srv, nil
}

// freeAddr returns a loopback address with a port nothing listens on.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("load: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func (s *loadServer) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(loadReadyAfter)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("load: serve exited before it was ready (%v); see %s", s.exit, s.logPath)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := http.Get(s.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return fmt.Errorf("load: serve not ready after %s; see %s", loadReadyAfter, s.logPath)
}

// stop ends the server gracefully (SIGTERM, then SIGKILL after 30s). It
// may be called again.
func (s *loadServer) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		_ = s.cmd.Process.Kill()
	}
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// remove stops the server and removes its data dir.
func (s *loadServer) remove() {
	s.stop()
	_ = os.RemoveAll(s.dataDir)
}
