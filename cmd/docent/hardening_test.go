package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/api"
	"github.com/docent-hq/docent/connectors/git/gittest"
	"github.com/docent-hq/docent/internal/loadgen"
	"github.com/docent-hq/docent/internal/private/privatetest"
	"github.com/docent-hq/docent/store"
)

// tinyDocs is a two-page folder source: small, so asks are cheap.
var tinyDocs = map[string]string{
	"office.md": "# Office\n\nThe office opens at nine and closes at six.\n\n## Parking\n\nParking is in the basement, level -2.\n",
	"vpn.md":    "# VPN\n\nReset your VPN token in the Gatekeeper portal under Security.\n",
}

// MustDocsConfig writes docs (slash path -> content) under dir/docs and a
// config file with a data dir under dir, the folder as source "local"
// after any extra sources (YAML list items), and scheduled syncs off. It
// returns the config file's path.
func MustDocsConfig(tb testing.TB, dir string, docs map[string]string, extra string) string {
	tb.Helper()
	root := filepath.Join(dir, "docs")
	for p, content := range docs {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "docent.yaml")
	yaml := "data_dir: " + filepath.Join(dir, "data") + "\nsync:\n  schedule: \"off\"\nsources:\n" + extra +
		"  - name: local\n    type: dir\n    dir:\n      path: " + root + "\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		tb.Fatal(err)
	}
	return cfg
}

// askResult is one POST /api/ask as a client saw it.
type askResult struct {
	status     int
	retryAfter string
	body       []byte
}

func ask(tb testing.TB, client *http.Client, base, question string) askResult {
	tb.Helper()
	resp, err := client.Post(base+"/api/ask", "application/json", strings.NewReader(fmt.Sprintf(`{"question":%q}`, question)))
	if err != nil {
		tb.Error(err)
		return askResult{}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return askResult{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: b}
}

// metricSum adds up the samples of a counter on /metrics.
func metricSum(tb testing.TB, base, name string) float64 {
	tb.Helper()
	v, err := loadgen.Counter(base, name)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// mustOpenStore opens the data dir's store (beside a stopped server).
func mustOpenStore(tb testing.TB, dataDir string) *store.DB {
	tb.Helper()
	db, err := store.Open(context.Background(), filepath.Join(dataDir, "docent.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func storedTurns(tb testing.TB, db *store.DB) int {
	tb.Helper()
	counts, err := db.CountTurnsByStatus(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

// TestAskBeforeFirstSync: while the first sync of an empty index runs,
// /api/ask answers 503 with Retry-After and stores nothing; a source whose
// sync failed is logged as failed, with its reason, and never as synced.
func TestAskBeforeFirstSync(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	release := make(chan struct{})
	var once sync.Once
	// A git remote that hangs until released, then fails.
	remote := newHangingRemote(t, release)
	cfg := MustDocsConfig(t, dir, tinyDocs,
		"  - name: slow\n    type: git\n    git:\n      url: "+remote+"/team/docs.git\n")
	var logs syncBuffer
	base, stop := MustServeMain(t, &Main{ConfigPath: cfg, Stdout: io.Discard, Stderr: &logs, Getenv: envOf(nil)})
	defer func() { once.Do(func() { close(release) }); _ = stop() }()

	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("/readyz during the first sync = %d, want 503", resp.StatusCode)
	}
	r := ask(t, http.DefaultClient, base, "When does the office open?")
	var e api.ErrorResponse
	if r.status != http.StatusServiceUnavailable || r.retryAfter == "" || json.Unmarshal(r.body, &e) != nil || e.Code != api.CodeNotReady {
		t.Fatalf("ask before ready: %d, Retry-After %q, %s; want 503 not_ready with Retry-After", r.status, r.retryAfter, r.body)
	}

	once.Do(func() { close(release) })
	waitReady(t, base)
	r = ask(t, http.DefaultClient, base, "When does the office open?")
	if r.status != http.StatusOK || !strings.Contains(string(r.body), "nine") {
		t.Fatalf("ask once ready: %d %s", r.status, r.body)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if n := storedTurns(t, mustOpenStore(t, filepath.Join(dir, "data"))); n != 1 {
		t.Errorf("%d turns stored, want 1: the refused ask is not a turn", n)
	}

	// The failed source: one ERROR or WARN line naming it and the reason;
	// no "sync finished" line for it. The folder source did sync.
	var failed int
	var syncedSlow, syncedLocal bool
	for line := range strings.Lines(logs.String()) {
		switch {
		case strings.Contains(line, `msg="sync finished"`) && strings.Contains(line, "source=slow"):
			syncedSlow = true
		case strings.Contains(line, `msg="sync finished"`) && strings.Contains(line, "source=local"):
			syncedLocal = true
		case regexp.MustCompile(`level=(ERROR|WARN) .*source=slow .*error=.*500`).MatchString(line):
			failed++
		}
	}
	if failed != 1 || syncedSlow || !syncedLocal {
		t.Errorf("logs: failure of slow logged %d times (want once), slow synced %v (want false), local synced %v (want true):\n%s",
			failed, syncedSlow, syncedLocal, logs.String())
	}
}

// newHangingRemote is an HTTP server whose every request waits for
// release, then fails with 500.
func newHangingRemote(t *testing.T, release <-chan struct{}) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		http.Error(w, "the remote broke", http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestDocsServesOnlyIndexedFiles: dot-files and dot-folders of a folder
// source are neither indexed nor served, and an indexed file replaced by a
// symbolic link (out of the folder or in) is a 404.
func TestDocsServesOnlyIndexedFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	docs := map[string]string{
		"office.md":    tinyDocs["office.md"],
		".secret.md":   "# Secret\n\nThe launch code is ZEBRA-42.\n",
		".hidden/x.md": "# Vault\n\nThe vault code is OTTER-77.\n",
	}
	cfg := MustDocsConfig(t, dir, docs, "")
	outside := filepath.Join(dir, "passwd")
	if err := os.WriteFile(outside, []byte("root:x:0:0:root:/root:/bin/bash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base, stop := MustServeMain(t, &Main{ConfigPath: cfg, Stdout: io.Discard, Stderr: io.Discard, Getenv: envOf(nil)})
	defer stop()
	waitReady(t, base)

	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/docs/local/office.md"); code != 200 || !strings.Contains(body, "nine") {
		t.Fatalf("indexed page: %d", code)
	}
	for _, p := range []string{"/docs/local/.secret.md", "/docs/local/.hidden/x.md", "/docs/local/%2e%2e/passwd"} {
		if code, body := get(p); code != http.StatusNotFound || strings.Contains(body, "ZEBRA") || strings.Contains(body, "OTTER") {
			t.Errorf("GET %s = %d, want 404", p, code)
		}
	}
	for _, q := range []string{"What is the launch code?", "What is the vault code?"} {
		r := ask(t, http.DefaultClient, base, q)
		if r.status != 200 || strings.Contains(string(r.body), "ZEBRA-42") || strings.Contains(string(r.body), "OTTER-77") ||
			strings.Contains(string(r.body), "local:.") {
			t.Errorf("ask %q: %d %s; want an answer that knows nothing of hidden files", q, r.status, r.body)
		}
	}

	// Swap the indexed page for a link out of the folder, then for a link
	// to the hidden file inside it.
	page := filepath.Join(dir, "docs", "office.md")
	for _, target := range []string{outside, ".secret.md"} {
		if err := os.Remove(page); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, page); err != nil {
			t.Fatal(err)
		}
		if code, body := get("/docs/local/office.md"); code != http.StatusNotFound || strings.Contains(body, "root:x") ||
			strings.Contains(body, "ZEBRA") {
			t.Errorf("page swapped for a link to %s: %d, want 404", target, code)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	recs, err := mustOpenStore(t, filepath.Join(dir, "data")).ListDocuments(context.Background(), store.DocFilter{State: store.DocAny})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].ID != "local:office.md" {
		t.Errorf("registry holds %v, want only local:office.md", recs)
	}
}

// TestDataDirPrivate: a git source whose URL carries a token syncs, and
// afterwards no file under the data dir holds the token; the data dir is
// 0700 and every file in it 0600 or stricter, including the files of an
// older docent that were readable by others.
func TestDataDirPrivate(t *testing.T) {
	t.Parallel()
	const token = "ghp_TokenNeverAtRest7"
	repo := gittest.MustServe(t, map[string]string{"guide.md": "# Guide\n\nDeploys happen on Tuesdays.\n"}, "bot", token)
	dir := t.TempDir()
	cfg := MustDocsConfig(t, dir, tinyDocs, "  - name: guide\n    type: git\n    git:\n      url: "+
		strings.Replace(repo, "http://", "http://bot:${GIT_TOKEN}@", 1)+"\n")
	dataDir := filepath.Join(dir, "data")
	// What an older docent left: a world-readable dir and database.
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dataDir, "offline-embedder.bin"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	m := &Main{ConfigPath: cfg, Stdout: &stdout, Stderr: &stderr, Getenv: envOf(map[string]string{"GIT_TOKEN": token})}
	err := m.Sync(context.Background(), nil)
	m.Close()
	if err != nil {
		t.Fatalf("sync: %v\n%s", err, stderr.String())
	}
	if !regexp.MustCompile(`guide\s+1\s`).MatchString(stdout.String()) {
		t.Fatalf("the git source did not sync:\n%s", stdout.String())
	}
	if strings.Contains(stdout.String()+stderr.String(), token) {
		t.Error("the token reached the output or logs")
	}
	files := privatetest.MustBePrivate(t, dataDir, token)
	if files < 5 {
		t.Errorf("only %d files under the data dir: did the git clone happen?", files)
	}
}

// TestServePrunesTurns: serve deletes turns past the retention at start
// (90 days by default, --retain-turns caps the count), and the chat
// events older than a day that the bots keep to drop redeliveries.
func TestServePrunesTurns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	cfg := MustDocsConfig(t, dir, tinyDocs, "")
	dataDir := filepath.Join(dir, "data")
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-100 * 24 * time.Hour)
	db, err := store.Open(ctx, filepath.Join(dataDir, "docent.db"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		tu := docent.Turn{Question: docent.Question{Text: fmt.Sprint("q", i)}, Answer: docent.Answer{Status: docent.StatusAnswered}}
		if i < 3 {
			tu.CreatedAt = old
		}
		if err := db.CreateTurn(ctx, &tu); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	// A chat event delivered two days ago and one just now (the bot's dedupe).
	old2d := time.Now().Add(-48 * time.Hour)
	for _, ev := range []struct {
		id string
		at func() time.Time
	}{{"Ev-old", func() time.Time { return old2d }}, {"Ev-new", time.Now}} {
		db, err := store.Open(ctx, filepath.Join(dataDir, "docent.db"), store.WithClock(ev.at))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.MarkEvent(ctx, "slack", ev.id); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}

	for _, tt := range []struct {
		args []string
		want int
	}{
		{nil, 5},
		{[]string{"--retain-turns", "2"}, 2},
	} {
		var logs syncBuffer
		base, stop := MustServeMain(t, &Main{ConfigPath: cfg, Stdout: io.Discard, Stderr: &logs, Getenv: envOf(nil)}, tt.args...)
		waitReady(t, base)
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(logs.String(), "pruned turns") && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		db := mustOpenStore(t, dataDir)
		if n := storedTurns(t, db); n != tt.want {
			t.Errorf("serve %v: %d turns left, want %d\n%s", tt.args, n, tt.want, logs.String())
		}
		db.Close()
	}
	// The old event was forgotten, the new one is still known.
	db = mustOpenStore(t, dataDir)
	defer db.Close()
	for id, wantFresh := range map[string]bool{"Ev-old": true, "Ev-new": false} {
		if fresh, err := db.MarkEvent(ctx, "slack", id); err != nil || fresh != wantFresh {
			t.Errorf("after serve, MarkEvent(%s) = %v, %v; want %v (events kept %s)", id, fresh, err, wantFresh, eventsKept)
		}
	}
}

// TestLoadCommand runs `docent load --url` against a running server for a
// moment: it prints the phase table and the acceptance lines, and passes.
func TestLoadCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := MustDocsConfig(t, dir, tinyDocs, "")
	base, stop := MustServeMain(t, &Main{ConfigPath: cfg, Stdout: io.Discard, Stderr: io.Discard, Getenv: envOf(nil)})
	defer stop()
	waitReady(t, base)
	var out bytes.Buffer
	m := &Main{Stdout: &out, Stderr: io.Discard, Getenv: envOf(nil)}
	err := m.Load(context.Background(), []string{"--url", base, "--clients", "2,8", "--duration", "500ms"})
	if err != nil {
		t.Fatalf("load: %v\n%s", err, out.String())
	}
	t.Log(out.String())
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^clients\s+time\s+requests\s+req/s\s+p50\s+p95\s+p99\s+max\s+responses\n\s+2\s`),
		// The phase lasts its 500ms, and longer by the requests in
		// flight when it ends (1.0s on a busy machine).
		regexp.MustCompile(`(?m)^\s+2\s+(0\.[5-9]|[1-9]\d*\.\d)s\s+\d+\s+[\d.]+\s+\d+ms\s+\d+ms\s+\d+ms\s+\d+ms\s+200:\d+$`),
		regexp.MustCompile(`(?m)^\s+8\s+[\d.]+s\s+\d+\s+[\d.]+\s+\d+ms`),
		regexp.MustCompile(`acceptance, 8 clients:\n\s+ok\s+0 responses >= 500\n\s+ok\s+100.00% 200s`),
		regexp.MustCompile(`(?m)^PASS$`),
	} {
		if !want.MatchString(out.String()) {
			t.Errorf("output lacks %s", want)
		}
	}
	if err := m.Load(context.Background(), []string{"--clients", "0"}); err == nil {
		t.Error("--clients 0 accepted")
	}
}
