package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/crypto/bcrypt"
)

// oneTimePassword is the line serve prints to a terminal.
var oneTimePassword = regexp.MustCompile(`one-time password (\S+) \(valid`)

// passwordFile is the log line's field naming the one-time password's file.
var passwordFile = regexp.MustCompile(`password_file=(\S+)`)

// mustOneTimePassword reads the one-time password from the file the log
// names (serve's stdout is not a terminal in tests), checking that only
// this user can read it.
func mustOneTimePassword(t testing.TB, logs string) string {
	t.Helper()
	m := passwordFile.FindStringSubmatch(logs)
	if m == nil {
		t.Fatalf("the log names no one-time password file:\n%s", logs)
	}
	info, err := os.Stat(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("one-time password file %s has mode %o, want 600", m[1], perm)
	}
	b, err := os.ReadFile(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// consoleClient is a browser-like HTTP client for the console.
type consoleClient struct {
	t    testing.TB
	base string
	c    *http.Client
}

func newConsoleClient(t testing.TB, base string) *consoleClient {
	jar, _ := cookiejar.New(nil)
	return &consoleClient{t: t, base: base, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

func (c *consoleClient) get(path string) (*http.Response, *goquery.Document) {
	c.t.Helper()
	resp, err := c.c.Get(c.base + path)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp, doc
}

func (c *consoleClient) post(path string, form url.Values) (*http.Response, *goquery.Document) {
	c.t.Helper()
	resp, err := c.c.PostForm(c.base+path, form)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp, doc
}

func (c *consoleClient) login(user, password string) {
	c.t.Helper()
	_, doc := c.get("/login")
	tok, _ := doc.Find(`[data-testid=login-form] input[name=csrf]`).Attr("value")
	resp, doc := c.post("/login", url.Values{"csrf": {tok}, "user": {user}, "password": {password}})
	if resp.StatusCode != http.StatusSeeOther {
		c.t.Fatalf("login as %s = %d: %s", user, resp.StatusCode, doc.Find(`[data-testid=login-error]`).Text())
	}
}

func (c *consoleClient) csrf() string {
	c.t.Helper()
	_, doc := c.get("/tokens")
	tok, _ := doc.Find(`form[action="/logout"] input[name=csrf]`).Attr("value")
	return tok
}

// writeConsoleConfig writes a docent.yaml into dir and returns its path.
func writeConsoleConfig(t *testing.T, dir, text string) string {
	t.Helper()
	p := filepath.Join(dir, "docent.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func askWith(t *testing.T, base, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/api/ask", strings.NewReader(`{"question": "What does Gatekeeper error GK-409 mean?"}`))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServeDemoOnLocalhost: no admin configured on localhost gives a
// one-time admin whose password is printed once to stdout (never to the
// log), an open API, and the handbook's golden set to start from.
func TestServeDemoOnLocalhost(t *testing.T) {
	t.Parallel()
	var stdout, logs syncBuffer
	m := &Main{Stdout: &stdout, Stderr: &logs, Getenv: envOf(map[string]string{"DOCENT_DATA": handbookData(t)})}
	base, stop := MustServeMain(t, m)
	defer stop()
	waitReady(t, base)
	password := mustOneTimePassword(t, logs.String())
	if len(password) < 20 || strings.Contains(logs.String(), password) || strings.Contains(stdout.String(), password) {
		t.Fatalf("one-time password %q: in the log or on stdout (not a terminal), or too short", password)
	}
	if !strings.Contains(logs.String(), "localhost, no admin configured: /api/ is open without a token") {
		t.Errorf("serve does not say the API is open: %s", logs.String())
	}
	if status, body := askWith(t, base, ""); status != http.StatusOK {
		t.Fatalf("/api/ask without a token in the demo = %d %s", status, body)
	}
	if status, _ := askWith(t, base, "dct_not-a-token"); status != http.StatusUnauthorized {
		t.Errorf("/api/ask with a bad token in the demo = %d, want 401", status)
	}
	c := newConsoleClient(t, base)
	if resp, _ := c.get("/"); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("console without a session = %d, want a redirect to login", resp.StatusCode)
	}
	c.login("admin", password)
	_, doc := c.get("/golden")
	if got := doc.Find(`[data-testid=golden-count]`).Text(); got != "58" {
		t.Errorf("seeded golden set has %q questions, want the handbook's 58", got)
	}
	// Health, readiness and metrics stay open.
	for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d", p, resp.StatusCode)
		}
	}
}

// TestServeTokensRequired: with an admin configured and API tokens
// required, /api/ask needs a token made in the console; a revoked one is
// refused; metrics move to their own address.
func TestServeTokensRequired(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	hash, err := bcrypt.GenerateFromPassword([]byte("a long admin password"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeConsoleConfig(t, dir, "server:\n  metrics_addr: 127.0.0.1:0\nauth:\n  api_tokens: required\n  admins:\n    - user: ops@example.com\n"+
		"      password_hash: \""+string(hash)+"\"\n")
	var stdout, logs syncBuffer
	metricsAddr := make(chan string, 1)
	m := &Main{ConfigPath: cfg, Stdout: &stdout, Stderr: &logs, Getenv: envOf(map[string]string{"DOCENT_DATA": handbookData(t)}),
		OnMetricsListen: func(a string) { metricsAddr <- a }}
	base, stop := MustServeMain(t, m)
	defer stop()
	waitReady(t, base)
	if passwordFile.MatchString(logs.String()) || strings.Contains(stdout.String(), "one-time password") {
		t.Error("a one-time password was made although an admin is configured")
	}
	if !strings.Contains(logs.String(), "/api/ requires a bearer token") {
		t.Errorf("serve does not say tokens are required: %s", logs.String())
	}
	if status, body := askWith(t, base, ""); status != http.StatusUnauthorized || !strings.Contains(body, "token_required") {
		t.Fatalf("/api/ask without a token = %d %s, want 401", status, body)
	}
	c := newConsoleClient(t, base)
	c.login("ops@example.com", "a long admin password")
	_, doc := c.post("/tokens", url.Values{"csrf": {c.csrf()}, "name": {"ci"}})
	token := strings.TrimSpace(doc.Find(`[data-testid=new-token]`).Text())
	if token == "" {
		t.Fatal("no token made")
	}
	if status, body := askWith(t, base, token); status != http.StatusOK || !strings.Contains(body, "GK-409") {
		t.Fatalf("/api/ask with the token = %d %s", status, body)
	}
	revoke, _ := doc.Find(`[data-testid=token-row] form`).First().Attr("action")
	if resp, _ := c.post(revoke, url.Values{"csrf": {c.csrf()}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke = %d", resp.StatusCode)
	}
	if status, body := askWith(t, base, token); status != http.StatusUnauthorized || !strings.Contains(body, "revoked") {
		t.Errorf("/api/ask with the revoked token = %d %s, want 401", status, body)
	}
	// Metrics on their own address only.
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/metrics on the main address = %d, want 404", resp.StatusCode)
	}
	resp, err = http.Get("http://" + <-metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "docent_") {
		t.Errorf("/metrics on metrics_addr = %d", resp.StatusCode)
	}
}

// TestServeBeyondLocalhostNeedsAnAdmin: serving on every interface with
// no admin is refused at start, with what to do; auth: none says it is open.
func TestServeBeyondLocalhostNeedsAnAdmin(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	m := &Main{Stdout: io.Discard, Stderr: &logs, Getenv: envOf(map[string]string{"DOCENT_DATA": handbookData(t)})}
	err := m.Serve(context.Background(), []string{"--addr", "0.0.0.0:0"})
	m.Close()
	if err == nil || !strings.Contains(err.Error(), "auth.admins") || !strings.Contains(err.Error(), "auth.mode: none") {
		t.Fatalf("serve on 0.0.0.0 without an admin = %v", err)
	}

	m = &Main{Stdout: io.Discard, Stderr: &logs}
	m.Config.Auth.Mode = "none"
	acc, err := m.decideAccessFor(t, "0.0.0.0:8080")
	if err != nil || !acc.open || acc.tokensRequired {
		t.Fatalf("auth none = %+v, %v", acc, err)
	}
	if !strings.Contains(logs.String(), "auth: none: the console and /api/ are open to anyone") {
		t.Errorf("serve does not say it is open: %s", logs.String())
	}
	for addr, want := range map[string]bool{"localhost:8080": true, "127.0.0.1:0": true, "[::1]:80": true,
		":8080": false, "0.0.0.0:8080": false, "10.0.0.5:80": false, "docent.internal:80": false} {
		if got := isLoopback(addr); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// decideAccessFor runs decideAccess and sayAccess with a discarding
// logger over m's stderr.
func (m *Main) decideAccessFor(t *testing.T, addr string) (webAccess, error) {
	t.Helper()
	m.Log = newLogger(m.Stderr, m.Config.Log, slog.LevelInfo)
	acc, err := m.decideAccess(addr)
	if err == nil {
		m.sayAccess(addr, acc)
	}
	return acc, err
}

func TestAdminHashPassword(t *testing.T) {
	t.Parallel()
	var out, errs strings.Builder
	err := run(context.Background(), []string{"admin", "hash-password", "--cost", "10"}, &out, &errs)
	if err == nil {
		t.Fatal("hash-password with no password on stdin succeeded")
	}
	m := &Main{Stdin: strings.NewReader("correct horse battery staple\n"), Stdout: &out, Stderr: &errs}
	if err := m.Admin(context.Background(), []string{"hash-password", "--cost", "10"}); err != nil {
		t.Fatal(err)
	}
	hash := strings.TrimSpace(out.String())
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte("correct horse battery staple")) != nil {
		t.Fatalf("printed %q, not a bcrypt hash of the password", hash)
	}
	if cost, _ := bcrypt.Cost([]byte(hash)); cost != 10 {
		t.Errorf("cost = %d", cost)
	}
	m.Stdin = strings.NewReader("short\n")
	if err := m.Admin(context.Background(), []string{"hash-password"}); err == nil || !strings.Contains(err.Error(), "at least 12") {
		t.Errorf("short password: %v", err)
	}
	if err := m.Admin(context.Background(), []string{"frobnicate"}); err == nil {
		t.Error("unknown admin command succeeded")
	}
}

// TestDocsConsoleScreenshot checks that docs/console.md shows the
// turn-detail screenshot TestConsoleInBrowser takes, and that the PNG is
// committed (DOCENT_UPDATE_README_SCREENSHOT=1 rewrites it).
func TestDocsConsoleScreenshot(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "..", "docs", "console.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`!\[[^\]]*turn-detail[^\]]*\]\(console-turn\.png\)`).Match(readme) {
		t.Error("docs/console.md does not show console-turn.png as the turn-detail screenshot")
	}
	png, err := os.ReadFile(filepath.Join("..", "..", "docs", "console-turn.png"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(png), "\x89PNG\r\n\x1a\n") || len(png) < 10_000 {
		t.Errorf("docs/console-turn.png is not a screenshot (%d bytes)", len(png))
	}
	// The new pages' screenshots (DOCENT_UPDATE_DOCS_SCREENSHOTS=1 retakes
	// them) are shown and committed, each under 300 KB.
	for _, name := range []string{"console-gaps.png", "console-golden-run.png", "console-turn-390.png", "console-docs-page.png"} {
		if !strings.Contains(string(readme), "]("+name+")") {
			t.Errorf("docs/console.md does not show %s", name)
		}
		png, err := os.ReadFile(filepath.Join("..", "..", "docs", name))
		if err != nil || !strings.HasPrefix(string(png), "\x89PNG\r\n\x1a\n") || len(png) < 10_000 || len(png) > 300_000 {
			t.Errorf("docs/%s is not a screenshot of a sensible size (%d bytes, %v)", name, len(png), err)
		}
	}
}
