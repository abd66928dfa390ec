package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/api"
	"github.com/docent-hq/docent/store"
)

// syncBuffer is a bytes.Buffer safe for the logger and the test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// envOf returns a getenv over a fixed map, so tests never see the real
// environment (DOCENT_CONFIG, DOCENT_DATA).
func envOf(kv map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
}

// MustServe boots docent serve on a free port over dataDir and returns its
// base URL and a stop function that waits for a graceful shutdown.
func MustServe(tb testing.TB, dataDir string, stderr io.Writer) (string, func() error) {
	tb.Helper()
	return MustServeMain(tb, &Main{Stdout: io.Discard, Stderr: stderr, Getenv: envOf(map[string]string{"DOCENT_DATA": dataDir})})
}

// MustServeMain runs m.Serve with args on a free port and returns its base
// URL and a stop function (which may be called again) that waits for a
// graceful shutdown.
func MustServeMain(tb testing.TB, m *Main, args ...string) (string, func() error) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	m.OnListen = func(a string) { addr <- a }
	done := make(chan error, 1)
	go func() {
		err := m.Serve(ctx, append([]string{"--addr", "127.0.0.1:0"}, args...))
		m.Close()
		done <- err
	}()
	select {
	case a := <-addr:
		stop := sync.OnceValue(func() error { cancel(); return <-done })
		return "http://" + a, stop
	case err := <-done:
		cancel()
		tb.Fatalf("serve exited before listening: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		tb.Fatal("serve did not listen within 30s")
	}
	return "", nil
}

func waitReady(tb testing.TB, base string) {
	tb.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	tb.Fatal("not ready within 60s")
}

func postAsk(tb testing.TB, base, body string) (int, []byte) {
	tb.Helper()
	resp, err := http.Post(base+"/api/ask", "application/json", strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp.StatusCode, b
}

var citeMarker = regexp.MustCompile(`\[(\d+)\]`)

// TestServeAskEndToEnd is the new user's path: a fresh data dir, serve
// indexes the bundled handbook, and a question comes back with [n]
// citations that link to pages the server itself serves.
func TestServeAskEndToEnd(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	var logs syncBuffer
	base, stop := MustServe(t, dataDir, &logs)
	waitReady(t, base)

	status, body := postAsk(t, base, `{"question": "What does Gatekeeper error GK-409 mean?"}`)
	if status != http.StatusOK {
		t.Fatalf("POST /api/ask = %d %s", status, body)
	}
	var resp api.AskResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Status != docent.StatusAnswered {
		t.Fatalf("status = %q, want answered; answer %q", resp.Status, resp.Answer)
	}
	if resp.TurnID == 0 {
		t.Error("turn_id = 0, want the stored turn's id")
	}
	markers := citeMarker.FindAllStringSubmatch(resp.Answer, -1)
	if len(markers) == 0 {
		t.Fatalf("answer has no [n] citation: %q", resp.Answer)
	}
	for _, mk := range markers {
		n := mk[1]
		found := false
		for _, c := range resp.Citations {
			if n == strconv.Itoa(c.N) {
				found = true
			}
		}
		if !found {
			t.Errorf("answer cites [%s] but citations are %+v", n, resp.Citations)
		}
	}
	first := resp.Citations[0]
	if first.DocID != "handbook:it/gatekeeper-error-codes.md" {
		t.Errorf("first citation = %s, want the Gatekeeper error codes page", first.DocID)
	}
	if !strings.Contains(resp.Answer, "GK-409") || !strings.Contains(resp.Answer, "Duplicate request") {
		t.Errorf("answer does not quote the GK-409 row: %q", resp.Answer)
	}
	if !strings.Contains(resp.Text, "Sources:") || !strings.Contains(resp.Text, "[1] Gatekeeper Error Codes") {
		t.Errorf("rendered text lacks the source list: %q", resp.Text)
	}

	// The citation link is clickable: the server renders the cited page.
	u, err := url.Parse(first.URL)
	if err != nil || !strings.HasPrefix(first.URL, "http://localhost:8080/docs/handbook/") {
		t.Fatalf("citation URL = %q, want under the public URL's /docs/handbook/", first.URL)
	}
	page, err := http.Get(base + u.Path)
	if err != nil {
		t.Fatal(err)
	}
	html, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if page.StatusCode != http.StatusOK || !strings.Contains(string(html), "GK-409") {
		t.Errorf("GET %s = %d, want the rendered page with GK-409", u.Path, page.StatusCode)
	}

	// Not covered by the handbook: declined (not found, or uncertain with
	// the closest pages and nothing asserted), a person offered.
	status, body = postAsk(t, base, `{"question": "What is on the cafeteria menu on Fridays?"}`)
	if status != http.StatusOK {
		t.Fatalf("POST /api/ask = %d %s", status, body)
	}
	var nf api.AskResponse
	if err := json.Unmarshal(body, &nf); err != nil {
		t.Fatal(err)
	}
	declined := (nf.Status == docent.StatusNotFound && len(nf.Citations) == 0) ||
		(nf.Status == docent.StatusUncertain && strings.HasPrefix(nf.Answer, strings.TrimSuffix(answer.UncertainLead, ".")) && len(nf.Citations) <= answer.MaxPages)
	if !declined || !strings.Contains(strings.ToLower(nf.Answer), "person") {
		t.Errorf("unanswerable question: status %q, %d citations, answer %q", nf.Status, len(nf.Citations), nf.Answer)
	}

	// Bad input: an empty question and a malformed body get clear 400s.
	for _, tc := range []struct{ name, body, want string }{
		{"empty question", `{"question": "   "}`, "question is empty"},
		{"unknown field", `{"q": "hi"}`, "unknown field"},
		{"not json", `hello`, "invalid request body"},
	} {
		status, body := postAsk(t, base, tc.body)
		if status != http.StatusBadRequest || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: got %d %s, want 400 mentioning %q", tc.name, status, body, tc.want)
		}
	}

	// Health and metrics.
	for path, want := range map[string]string{
		"/healthz": `"ok"`,
		"/metrics": `docent_turns_total{platform="api",status="answered"} 1`,
	} {
		r, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != http.StatusOK || !strings.Contains(string(b), want) {
			t.Errorf("GET %s = %d, want it to contain %q", path, r.StatusCode, want)
		}
	}
	r, _ := http.Get(base + "/metrics")
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	for _, want := range []string{`docent_sync_runs_total{source="handbook",status="ok"} 1`, `docent_answer_stage_seconds_bucket{stage="retrieve"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// The scheduler (started after the first sync) exports each source's
	// health, seeded from the recorded runs: the first sync succeeded.
	lastOK := regexp.MustCompile(`(?m)^docent_sync_last_success_timestamp_seconds\{source="handbook"\} [1-9]`)
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, _ := http.Get(base + "/metrics")
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if lastOK.Match(b) && strings.Contains(string(b), `docent_sync_stale{source="handbook"} 0`) &&
			strings.Contains(string(b), `docent_sync_consecutive_failures{source="handbook"} 0`) {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("/metrics lacks the handbook's sync health:\n%s", grepLines(string(b), "docent_sync_"))
			break
		}
		time.Sleep(50 * time.Millisecond)
	}

	// While serve runs, a second process may not sync into its data dir:
	// the server keeps vectors in memory.
	other := &Main{Stdout: io.Discard, Stderr: io.Discard, Getenv: envOf(map[string]string{"DOCENT_DATA": dataDir})}
	err = other.Sync(context.Background(), nil)
	other.Close()
	if !errors.Is(err, errDataDirBusy) {
		t.Errorf("sync beside a running server: err = %v, want errDataDirBusy", err)
	}

	if err := stop(); err != nil {
		t.Fatalf("graceful shutdown: %v", err)
	}

	// Every answer was stored as a turn with its trace.
	db, err := store.Open(context.Background(), filepath.Join(dataDir, "docent.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	turn, err := db.Turn(context.Background(), resp.TurnID)
	if err != nil {
		t.Fatal(err)
	}
	if turn.Question.Text != "What does Gatekeeper error GK-409 mean?" || turn.Answer.Status != docent.StatusAnswered ||
		len(turn.Answer.Trace.Candidates) == 0 || len(turn.Answer.Trace.Stages) == 0 {
		t.Errorf("stored turn lacks question, status or trace: %+v", turn)
	}
	c := turn.Answer.Trace.Candidates[0]
	if c.KeywordRank == 0 && c.VectorRank == 0 {
		t.Errorf("top candidate has neither keyword nor vector rank: %+v", c)
	}

	// A restart finds the index loaded and does not sync again.
	logs2 := &syncBuffer{}
	base, stop = MustServe(t, dataDir, logs2)
	waitReady(t, base)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs2.String(), "syncing all sources") || !strings.Contains(logs2.String(), "index loaded") {
		t.Errorf("restart should load the index without syncing; logs:\n%s", logs2)
	}
}

// TestAskCLI runs `docent ask` on an empty data dir: it syncs first, says
// so, and prints the answer with citations and sources.
func TestAskCLI(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	var stdout, stderr bytes.Buffer
	m := &Main{Stdout: &stdout, Stderr: &stderr, Getenv: envOf(map[string]string{"DOCENT_DATA": dataDir})}
	err := m.Ask(context.Background(), []string{"What does Gatekeeper error GK-409 mean?"})
	m.Close()
	if err != nil {
		t.Fatalf("ask: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "syncing the configured sources first") {
		t.Errorf("ask on an empty data dir should say it syncs first; stderr:\n%s", stderr.String())
	}
	out := stdout.String()
	if !citeMarker.MatchString(out) || !strings.Contains(out, "Sources:") ||
		!strings.Contains(out, "[1] Gatekeeper Error Codes") || !strings.Contains(out, "GK-409") {
		t.Errorf("ask output lacks citations or sources:\n%s", out)
	}

	// JSON output carries the trace.
	stdout.Reset()
	stderr.Reset()
	m = &Main{Stdout: &stdout, Stderr: &stderr, Getenv: envOf(map[string]string{"DOCENT_DATA": dataDir})}
	err = m.Ask(context.Background(), []string{"--json", "How", "do", "I", "reset", "my", "VPN", "token?"})
	m.Close()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr.String(), "syncing") {
		t.Error("second ask should not sync again")
	}
	var resp api.AskResponse
	if err := json.Unmarshal(stdout.Bytes(), &resp); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, stdout.String())
	}
	if resp.Trace == nil || len(resp.Trace.Candidates) == 0 || resp.Status != docent.StatusAnswered {
		t.Errorf("--json: status %q, trace %v", resp.Status, resp.Trace)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "docent.yaml")
	if err := os.WriteFile(bad, []byte("data_dir: ./x\nsources:\n  - name: docs\n    type: git\n    git:\n      url: [unclosed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	unknown := filepath.Join(dir, "unknown.yaml")
	if err := os.WriteFile(unknown, []byte("data_dir: ./x\nindex:\n  backend: local\n  fusoin: rrf\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.yaml")
	if err := os.WriteFile(missing, []byte("sources:\n  - name: runbooks\n    type: dir\n    dir:\n      path: /nonexistent/docent-runbooks\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	notBuilt := filepath.Join(dir, "notbuilt.yaml")
	if err := os.WriteFile(notBuilt, []byte("sources:\n  - name: wiki\n    type: notion_wiki\nanswerer:\n  provider: cohere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"malformed yaml names the line", []string{"--config", bad, "sync"}, []string{"docent.yaml:6"}},
		{"unknown key names key and line", []string{"--config", unknown, "sync"}, []string{"unknown.yaml:4: index.fusoin: unknown key"}},
		{"source type this build lacks", []string{"--config", notBuilt, "serve"}, []string{`notbuilt.yaml:3: sources[0].type: unknown source type "notion_wiki"`}},
		{"provider this build lacks", []string{"--config", notBuilt, "config"}, []string{`notbuilt.yaml:5: answerer.provider: unknown provider "cohere"`}},
		{"empty question", []string{"ask", "  "}, []string{"question is empty"}},
		{"unknown command", []string{"frobnicate"}, []string{`unknown command "frobnicate"`, "see docent help"}},
		{"flag the command lacks", []string{"ask", "--jsn", "q"}, []string{"ask: flag provided but not defined: -jsn", "see docent help"}},
		{"config takes no arguments", []string{"config", "extra"}, []string{"config takes no arguments"}},
		{"folder that does not exist", []string{"--config", missing, "config"}, []string{"missing.yaml:5: sources[0].dir.path: no folder /nonexistent/docent-runbooks"}},
		{"unknown source", []string{"sync", "--source", "nope"}, []string{`no source named "nope"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			t.Setenv("DOCENT_DATA", filepath.Join(dir, "data"))
			err := run(context.Background(), tc.args, io.Discard, &stderr)
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	for _, args := range [][]string{{"frobnicate"}, {"ask", "--jsn", "q"}, {}} {
		if err := run(context.Background(), args, io.Discard, io.Discard); exitCode(err) != 2 {
			t.Errorf("docent %q: %v, exit %d; want a usage error (exit 2)", args, err, exitCode(err))
		}
	}
}

// TestConfigShowsImplementations: `docent config` prints the redacted
// configuration and the implementation every seam got.
func TestConfigShowsImplementations(t *testing.T) {
	var stdout bytes.Buffer
	t.Setenv("DOCENT_DATA", t.TempDir())
	if err := run(context.Background(), []string{"config"}, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"data_dir: ",
		"# implementations in use:",
		"#   index:             local — search/local",
		"#   embedder:          offline — llm/offline",
		"#   answerer:          offline — answer/offline: standalone rewrite",
		"#   source handbook:   bundled — connectors/files",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("docent config output lacks %q:\n%s", want, stdout.String())
		}
	}
}

// TestSyncUnreachableSourceOthersSync: a git remote that cannot be reached
// fails that source with a clear error while the other sources still sync.
func TestSyncUnreachableSourceOthersSync(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(docs, "hello.md"), []byte("# Hello\n\nThe office opens at nine.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(docs, "logo.md"), []byte("\x89PNG\x00\x00binary"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "docent.yaml")
	yaml := "data_dir: " + filepath.Join(dir, "data") + "\nsources:\n" +
		"  - name: gone\n    type: git\n    git:\n      url: http://127.0.0.1:1/nope.git\n      token: ${SECRET_TOKEN}\n" +
		"  - name: local\n    type: dir\n    dir:\n      path: " + docs + "\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	m := &Main{ConfigPath: cfg, Stdout: &stdout, Stderr: &stderr,
		Getenv: envOf(map[string]string{"SECRET_TOKEN": "s3cr3t-t0ken"})}
	err := m.Sync(context.Background(), nil)
	m.Close()
	if err == nil || !strings.Contains(err.Error(), "(gone)") {
		t.Fatalf("sync error = %v, want one naming the unreachable source", err)
	}
	// Why it failed is reported once, in the engine's log line; the
	// summary and the error name the source without repeating it.
	if n := strings.Count(err.Error()+stdout.String()+stderr.String(), "connection refused"); n != 1 ||
		!strings.Contains(stderr.String(), "connection refused") {
		t.Errorf("the failure's reason is reported %d times, want once in the log:\nerror: %v\nstdout:\n%s\nstderr:\n%s",
			n, err, stdout.String(), stderr.String())
	}
	for name, out := range map[string]string{"error": err.Error(), "stdout": stdout.String(), "logs": stderr.String()} {
		if strings.Contains(out, "s3cr3t-t0ken") {
			t.Errorf("the git token leaked into %s", name)
		}
	}
	summary := stdout.String()
	if !strings.Contains(summary, "local: skipped local:logo.md:") || !strings.Contains(summary, "binary") {
		t.Errorf("summary should report the skipped binary file:\n%s", summary)
	}
	if strings.Contains(summary, "retried next run") {
		t.Errorf("a binary file is not retried until it changes:\n%s", summary)
	}
	// Columns: seen, added, updated, unchanged, deleted, failed.
	if !regexp.MustCompile(`local\s+2\s+1\s+0\s+0\s+0\s+1\s.*ok`).MatchString(summary) ||
		!regexp.MustCompile(`gone\s+0\s+0\s+0\s+0\s+0\s+0\s.*failed`).MatchString(summary) {
		t.Errorf("summary should show local synced and gone failed:\n%s", summary)
	}

	// The local source answers.
	stdout.Reset()
	m = &Main{ConfigPath: cfg, Stdout: &stdout, Stderr: &stderr, Getenv: envOf(map[string]string{"SECRET_TOKEN": "x"})}
	err = m.Ask(context.Background(), []string{"When", "does", "the", "office", "open?"})
	m.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "nine") || !strings.Contains(stdout.String(), "[1] Hello") {
		t.Errorf("answer from the synced source:\n%s", stdout.String())
	}
}

// goldenReport is what the golden-set tests read of `eval --json`.
type goldenReport struct {
	Answerable   int     `json:"answerable"`
	Unanswerable int     `json:"unanswerable"`
	HitAt5       float64 `json:"hit_at_5"`
	MRR          float64 `json:"mrr_at_10"`
	NotFoundAcc  float64 `json:"not_found_accuracy"`
	Declined     float64 `json:"declined_rate"`
	LinkedFirst  float64 `json:"linked_first_rate"`
	Correct      float64 `json:"correct_rate"`
}

// evalGolden runs `docent eval --golden path --json` over a copy of the
// indexed handbook (--index-dir), or, with fresh, on a throwaway index it
// builds first as a user's run does.
func evalGolden(t *testing.T, path string, fresh bool) goldenReport {
	t.Helper()
	var stdout, stderr bytes.Buffer
	m := &Main{Stdout: &stdout, Stderr: &stderr, Getenv: envOf(map[string]string{"DOCENT_DATA": t.TempDir()})}
	args := []string{"--golden", path, "--json"}
	if !fresh {
		args = append(args, "--index-dir", handbookData(t))
	}
	err := m.Eval(context.Background(), args)
	m.Close()
	if err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr.String())
	}
	var rep goldenReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, stdout.String())
	}
	return rep
}

// TestEvalGolden runs `docent eval --golden` on the bundled handbook's
// golden set, written in the handbook's words. golden.yaml is a
// development set (the offline answerer's defaults are fitted on it), so
// only its retrieval is held here (hit@5 >= 0.97), as a regression check;
// the answer figures are floors on the untouched heldout-test half
// (TestEvalHeldout). The table names the figures.
func TestEvalGolden(t *testing.T) {
	t.Parallel()
	rep := evalGolden(t, "../../examples/handbook/golden.yaml", false)
	t.Logf("golden: hit@5 %.3f MRR %.3f declined %.3f not-found accuracy %.3f right page first %.3f answered correctly %.3f",
		rep.HitAt5, rep.MRR, rep.Declined, rep.NotFoundAcc, rep.LinkedFirst, rep.Correct)
	if rep.Answerable < 40 || rep.HitAt5 < 0.97 {
		t.Errorf("golden set below the bar: %+v (want hit@5 >= 0.97)", rep)
	}

	var stdout, stderr bytes.Buffer
	m := &Main{Stdout: &stdout, Stderr: &stderr, Getenv: envOf(map[string]string{"DOCENT_DATA": t.TempDir()})}
	err := m.Eval(context.Background(), []string{"--golden", "../../examples/handbook/golden.yaml", "--index-dir", handbookData(t)})
	m.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"hit@1 / @3 / @5", "MRR@10", "not-found accuracy", "declined", "answered / uncertain / not found"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, stdout.String())
		}
	}
}

// TestEvalAsked holds the retrieval of examples/handbook/asked.yaml, the
// questions as employees ask them in chat: a development set, like
// golden.yaml, so its answer figures are not floors (see TestEvalGolden).
func TestEvalAsked(t *testing.T) {
	t.Parallel()
	rep := evalGolden(t, "../../examples/handbook/asked.yaml", false)
	t.Logf("asked: hit@5 %.3f right page first %.3f answered correctly %.3f declined %.3f",
		rep.HitAt5, rep.LinkedFirst, rep.Correct, rep.Declined)
	if rep.Answerable < 150 || rep.HitAt5 < 0.97 {
		t.Errorf("asked set below the bar: %+v (want hit@5 >= 0.97)", rep)
	}
}

// TestEvalHeldout holds the levels measured on examples/handbook/heldout-test.yaml,
// the half of the held-out set nobody tuned on (heldout-dev.yaml, the
// other half, was): written by someone who had read neither the other
// sets nor the answerer, so that a change which only fits the development
// sets shows up as no gain here, and one that breaks general answering as
// a loss.
func TestEvalHeldout(t *testing.T) {
	t.Parallel()
	rep := evalGolden(t, "../../examples/handbook/heldout-test.yaml", true)
	t.Logf("heldout-test: hit@5 %.3f right page first %.3f answered correctly %.3f declined %.3f",
		rep.HitAt5, rep.LinkedFirst, rep.Correct, rep.Declined)
	declined := int(rep.Declined*float64(rep.Unanswerable) + 0.5)
	if rep.Answerable < 23 || rep.HitAt5 < 0.95 || rep.LinkedFirst < 0.80 || rep.Correct < 0.30 || declined < 5 {
		t.Errorf("heldout-test set below the bar: %+v (want hit@5 >= 0.95, right page first >= 0.80, answered correctly >= 0.30, declined >= 5)", rep)
	}
}

// TestAskCitesTheInstallSection asks the bundled handbook an earlier
// issue's example: "How do I get access to the VPN?" links the VPN page
// first, answered or uncertain, and its "Installing the client" section
// is among the first candidates. (The rules that cited that section
// first were fitted to the question; the passage model does not yet.)
func TestAskCitesTheInstallSection(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	m := &Main{Stdout: &stdout, Stderr: &stderr, Getenv: envOf(map[string]string{"DOCENT_DATA": t.TempDir()})}
	err := m.Ask(context.Background(), []string{"--json", "How do I get access to the VPN?"})
	m.Close()
	if err != nil {
		t.Fatalf("ask: %v\n%s", err, stderr.String())
	}
	var resp api.AskResponse
	if err := json.Unmarshal(stdout.Bytes(), &resp); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, stdout.String())
	}
	if (resp.Status != docent.StatusAnswered && resp.Status != docent.StatusUncertain) || len(resp.Citations) == 0 {
		t.Fatalf("status %s, %d citations: %s", resp.Status, len(resp.Citations), resp.Answer)
	}
	if c := resp.Citations[0]; !strings.HasSuffix(c.DocID, "it/vpn.md") {
		t.Errorf("first citation %s › %s, want it/vpn.md\n%s", c.DocID, c.Section, resp.Answer)
	}
	found := false
	for _, h := range resp.Trace.Candidates[:min(10, len(resp.Trace.Candidates))] {
		found = found || (strings.HasSuffix(h.Chunk.DocID, "it/vpn.md") && slices.Contains(h.Chunk.Section, "Installing the client"))
	}
	if !found {
		t.Errorf("it/vpn.md › Installing the client is not among the first 10 candidates")
	}
}

// TestEvalBEIR runs `docent eval --beir` on a tiny self-written BEIR set:
// every mode reports, --json parses, --run writes a TREC run file, and the
// serving data dir is never touched.
func TestEvalBEIR(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	run := filepath.Join(t.TempDir(), "run.txt")
	var stdout, stderr bytes.Buffer
	m := &Main{Stdout: &stdout, Stderr: &stderr, Getenv: envOf(map[string]string{"DOCENT_DATA": dataDir})}
	err := m.Eval(context.Background(), []string{"--beir", "../../eval/testdata/beir-tiny", "--mode", "hybrid", "--json", "--run", run})
	m.Close()
	if err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr.String())
	}
	var rep struct {
		Mode    string  `json:"mode"`
		Queries int     `json:"queries"`
		NDCG    float64 `json:"ndcg_at_10"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout.String())
	}
	if rep.Mode != "hybrid" || rep.Queries == 0 || rep.NDCG <= 0 {
		t.Errorf("report = %+v", rep)
	}
	b, err := os.ReadFile(run)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^\S+ Q0 d\d+ 1 \S+ docent-hybrid$`).Match(b) {
		t.Errorf("run file is not TREC format:\n%s", b)
	}
	if entries, _ := os.ReadDir(dataDir); len(entries) != 0 {
		t.Errorf("eval wrote into the data dir: %v", entries)
	}

	stdout.Reset()
	m = &Main{Stdout: &stdout, Stderr: &stderr, Getenv: envOf(map[string]string{"DOCENT_DATA": dataDir})}
	err = m.Eval(context.Background(), []string{"--beir", "../../eval/testdata/beir-tiny", "--mode", "all"})
	m.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"bm25", "vector", "hybrid", "default", "nDCG@10", "R@100", "query p50"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("comparison table lacks %q:\n%s", want, stdout.String())
		}
	}
}

// grepLines returns the lines of s that contain substr.
func grepLines(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestAskFirstTries: what a new user tries first. "How much is the meal
// per diem?" states the US figure of the current policy first (the table
// in its order, the newer version before the 2021 one); a greeting and a
// thanks get a short reply that cites nothing, and are no miss.
func TestAskFirstTries(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	ask := func(q string) api.AskResponse {
		t.Helper()
		var stdout, stderr bytes.Buffer
		m := &Main{Stdout: &stdout, Stderr: &stderr, Getenv: envOf(map[string]string{"DOCENT_DATA": data})}
		err := m.Ask(context.Background(), []string{"--json", q})
		m.Close()
		if err != nil {
			t.Fatalf("ask %q: %v\n%s", q, err, stderr.String())
		}
		var resp api.AskResponse
		if err := json.Unmarshal(stdout.Bytes(), &resp); err != nil {
			t.Fatalf("--json output is not JSON: %v\n%s", err, stdout.String())
		}
		return resp
	}
	pd := ask("How much is the meal per diem?")
	us, ca := strings.Index(pd.Answer, "$75"), strings.Index(pd.Answer, "CAD")
	if pd.Status != docent.StatusAnswered || us < 0 || (ca >= 0 && ca < us) || len(pd.Citations) == 0 ||
		!strings.HasSuffix(pd.Citations[0].DocID, "travel/expense-policy.md") {
		t.Errorf("per diem: %s %q citing %+v; want the current policy's US $75 first", pd.Status, pd.Answer, pd.Citations)
	}
	for _, q := range []string{"good morning :)", "thanks!"} {
		r := ask(q)
		if r.Status != docent.StatusSmallTalk || len(r.Citations) != 0 || r.Answer == "" || len(r.Answer) > 120 {
			t.Errorf("%q: %s %q with %d citations; want a short small-talk reply citing nothing", q, r.Status, r.Answer, len(r.Citations))
		}
	}
}
