package console

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/crypto/bcrypt"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	offlineans "github.com/docent-hq/docent/answer/offline"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/files"
	"github.com/docent-hq/docent/llm/offline"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/searchtest"
	"github.com/docent-hq/docent/stale"
	"github.com/docent-hq/docent/store"
)

// testPassword is the password of the test admin "alice".
const testPassword = "correct horse battery staple"

// corpus is a small handbook: a current page, an old one, and an expense
// policy with an outdated copy that states other numbers.
var corpus = fstest.MapFS{
	"it/vpn.md": {Data: []byte("---\ntitle: VPN\nupdated: 2026-10-20\n---\n# VPN\n\n## Resetting your token\n\n" +
		"Open the Kestrel VPN client, choose Reset token and sign in again. Error VPN-E12 means the token expired.\n")},
	"it/guest-wifi.md": {Data: []byte("---\ntitle: Guest Wi-Fi\nupdated: 2020-02-11\n---\n# Guest Wi-Fi\n\n" +
		"The guest network is KestrelGuest and the password changes every Monday at the front desk.\n")},
	"travel/expense-policy.md": {Data: []byte("---\ntitle: Travel and Expense Policy\nupdated: 2026-01-15\n---\n" +
		"# Travel and Expense Policy\n\n## Meal per diem\n\nThe meal per diem is $75 a day in the United States.\n")},
	"travel/expense-policy-2021.md": {Data: []byte("---\ntitle: Travel and Expense Policy (2021)\nupdated: 2021-03-01\n---\n" +
		"# Travel and Expense Policy (2021)\n\n## Meal per diem\n\nThe meal per diem is $50 a day in the United States.\n")},
	"people/pto.md": {Data: []byte("---\ntitle: Paid Time Off\nupdated: 2026-09-01\n---\n# Paid Time Off\n\n" +
		"## Vacation\n\nEmployees get 25 vacation days a year, booked in Workday.\n")},
}

// hashOnly is the offline embedder without Fit, so syncs do not train it.
type hashOnly struct{ e *offline.Embedder }

func (h hashOnly) Name() string { return h.e.Name() }
func (h hashOnly) Dim() int     { return h.e.Dim() }
func (h hashOnly) EmbedDocuments(ctx context.Context, t []string) ([][]float32, error) {
	return h.e.EmbedDocuments(ctx, t)
}
func (h hashOnly) EmbedQuery(ctx context.Context, t string) ([]float32, error) {
	return h.e.EmbedQuery(ctx, t)
}

// clock is a test clock that runs with the wall clock and that Advance
// moves ahead. (The turns the Recorder stores take the wall clock: a
// clock stopped when the env was made fell behind them on a slow run,
// and the overview's window left them out.)
type clock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().UTC().Add(c.offset)
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
}

// env is a console over a real store, index, sync engine and answer
// pipeline, synced from corpus.
type env struct {
	t        *testing.T
	pipe     *answer.Pipeline
	db       *store.DB
	idx      *searchtest.Memory
	console  *Console
	recorder *answer.Recorder
	sched    *connectors.Scheduler
	clock    *clock
	srv      *httptest.Server
	logs     *strings.Builder
}

// options adjust the console options of a test env.
type envOption func(*Options)

func newEnv(t *testing.T, opts ...envOption) *env {
	t.Helper()
	ctx := context.Background()
	clk := &clock{}
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "docent.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	idx := searchtest.NewMemory()
	emb := hashOnly{offline.NewEmbedder(offline.Options{Dim: 64})}
	engine := connectors.NewEngine(db, idx, emb, search.Chunker{TargetTokens: 200, OverlapTokens: 20}, nil, connectors.EngineOptions{StageDir: t.TempDir()})
	// The documents' stale state is derived in the sync's corpus pass.
	chk := stale.New(db, stale.Options{Now: clk.Now, ExcludePlatform: "eval", MaxAgeDays: func(string) int { return 365 }})
	engine.Derive(chk)
	src := files.New("handbook", corpus, files.Options{WebURL: "http://localhost:8080/docs/handbook/{path}"})
	if _, err := engine.Sync(ctx, src, nil); err != nil {
		t.Fatal(err)
	}
	ret, err := search.NewRetriever(idx, emb, search.RetrieverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pipe, err := answer.New(offlineans.NewStages(ret, offlineans.Options{}), nil, answer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := answer.NewRecorder(pipe, db, nil, slog.New(slog.DiscardHandler), nil)
	sched := connectors.NewScheduler(engine, nil, connectors.SchedulerOptions{Workers: 1})
	if err := sched.Add(src, "@every 1h"); err != nil {
		t.Fatal(err)
	}
	schedCtx, stop := context.WithCancel(ctx)
	if err := sched.Start(schedCtx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(); sched.Wait() })
	hash, err := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	logs := &strings.Builder{}
	var logMu sync.Mutex
	o := Options{
		Store: db, Asker: rec, Answerer: pipe, Index: idx, Embedder: emb, Scheduler: sched,
		Stale:   chk,
		Sources: []Source{{Name: "handbook", Type: "bundled", Schedule: "@every 1h", StaleAfterDays: 365}},
		Auth:    AuthOptions{Admins: []Admin{{User: "alice", Hash: string(hash)}}, SessionIdle: time.Hour},
		Config:  func() string { return "index:\n  fusion: score\nllm:\n  gemini:\n    api_key: REDACTED\n" },
		Log:     slog.New(slog.NewTextHandler(lockedWriter{&logMu, logs}, nil)),
		Now:     clk.Now,
	}
	for _, f := range opts {
		f(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	api := http.NewServeMux()
	api.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	srv := httptest.NewServer(c.Handler(api))
	t.Cleanup(srv.Close)
	return &env{t: t, pipe: pipe, db: db, idx: idx, console: c, recorder: rec, sched: sched, clock: clk, srv: srv, logs: logs}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// ask asks a question through the recorder, as a chat adapter would.
func (e *env) ask(q docent.Question) docent.Turn {
	e.t.Helper()
	turn, err := e.recorder.Ask(context.Background(), q)
	if err != nil {
		e.t.Fatal(err)
	}
	return turn
}

// client is a browser: a cookie jar, redirects not followed.
type client struct {
	e   *env
	c   *http.Client
	url string
}

func (e *env) client() *client {
	jar, _ := cookiejar.New(nil)
	return &client{e: e, url: e.srv.URL, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

// response is a fetched page.
type response struct {
	*http.Response
	body string
	doc  *goquery.Document
}

func (c *client) do(req *http.Request) *response {
	c.e.t.Helper()
	resp, err := c.c.Do(req)
	if err != nil {
		c.e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.e.t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(b)))
	if err != nil {
		c.e.t.Fatal(err)
	}
	return &response{Response: resp, body: string(b), doc: doc}
}

func (c *client) get(path string) *response {
	c.e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, c.url+path, nil)
	if err != nil {
		c.e.t.Fatal(err)
	}
	return c.do(req)
}

// post submits a form; the session's CSRF token is added unless the
// form sets "csrf" itself.
func (c *client) post(path string, form url.Values) *response {
	c.e.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["csrf"]; !ok {
		form.Set("csrf", c.csrf())
	}
	req, err := http.NewRequest(http.MethodPost, c.url+path, strings.NewReader(form.Encode()))
	if err != nil {
		c.e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.do(req)
}

// csrf reads the session's token from a page's sign-out form.
func (c *client) csrf() string {
	c.e.t.Helper()
	tok, _ := c.get("/tokens").doc.Find(`form[action="/logout"] input[name=csrf]`).Attr("value")
	return tok
}

// login signs in as alice.
func (c *client) login() {
	c.e.t.Helper()
	if r := c.loginAs("alice", testPassword); r.StatusCode != http.StatusSeeOther {
		c.e.t.Fatalf("login = %d: %s", r.StatusCode, r.doc.Find(`[data-testid=login-error]`).Text())
	}
}

func (c *client) loginAs(user, password string) *response {
	c.e.t.Helper()
	page := c.get("/login")
	tok, ok := page.doc.Find(`[data-testid=login-form] input[name=csrf]`).Attr("value")
	if !ok {
		c.e.t.Fatalf("login page has no CSRF field: %s", page.body)
	}
	return c.post("/login", url.Values{"csrf": {tok}, "user": {user}, "password": {password}, "next": {"/turns"}})
}

// text returns the trimmed text of the selection.
func text(s *goquery.Selection) string { return strings.TrimSpace(s.Text()) }

func questionText(s string) docent.Question {
	return docent.Question{Text: s, Platform: "slack", Channel: "C-help"}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
