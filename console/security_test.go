package console

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/docent-hq/docent"
)

func TestEveryConsoleRouteNeedsASession(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	for _, p := range Paths {
		t.Run("GET "+p, func(t *testing.T) {
			r := c.get(p)
			loc := r.Header.Get("Location")
			if r.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/login?next=") {
				t.Fatalf("GET %s without a session = %d Location %q, want a redirect to /login", p, r.StatusCode, loc)
			}
			if next, _ := url.QueryUnescape(strings.TrimPrefix(loc, "/login?next=")); next != p {
				t.Errorf("next = %q, want %q", next, p)
			}
		})
	}
	for _, p := range PostPaths {
		t.Run("POST "+p, func(t *testing.T) {
			// An expired form comes back, after signing in, to the page
			// it was posted from (same origin only).
			for _, tc := range []struct{ referer, wantNext string }{
				{c.url + "/misses?review=all", "/misses?review=all"},
				{"", "/"},
				{"https://evil.example/misses", "/"},
			} {
				req, err := http.NewRequest(http.MethodPost, c.url+p, strings.NewReader("csrf=x"))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				if tc.referer != "" {
					req.Header.Set("Referer", tc.referer)
				}
				r := c.do(req)
				if want := "/login?next=" + url.QueryEscape(tc.wantNext); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != want {
					t.Fatalf("POST %s without a session (Referer %q) = %d Location %q, want a redirect to %s",
						p, tc.referer, r.StatusCode, r.Header.Get("Location"), want)
				}
			}
		})
	}
	// None of those posts ran its action.
	if runs, err := e.db.ListGoldenRuns(context.Background(), 10); err != nil || len(runs) != 0 {
		t.Errorf("golden runs after posts without a session = %v, %v", runs, err)
	}
	if toks, err := e.db.ListAPITokens(context.Background()); err != nil || len(toks) != 0 {
		t.Errorf("API tokens after posts without a session = %v, %v", toks, err)
	}
	// The JSON API's neighbours stay open: the console passes them on.
	if r := c.get("/healthz"); r.StatusCode != http.StatusOK || r.body != "ok" {
		t.Errorf("GET /healthz = %d %q, want the API handler's 200", r.StatusCode, r.body)
	}
}

func TestPostWithoutValidCSRFTokenIsRejected(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	c.login()
	form := url.Values{"name": {"ci"}}
	for _, tc := range []struct {
		name  string
		token []string
	}{{"missing", nil}, {"empty", []string{""}}, {"wrong", []string{"not-the-token"}}} {
		t.Run(tc.name, func(t *testing.T) {
			f := url.Values{"name": {"ci"}}
			if tc.token != nil {
				f["csrf"] = tc.token
			} else {
				f["csrf"] = []string{""}
			}
			r := c.post("/tokens", f)
			if r.StatusCode != http.StatusForbidden {
				t.Fatalf("POST /tokens with a %s CSRF token = %d, want 403", tc.name, r.StatusCode)
			}
		})
	}
	// Every state-changing route checks it, not only one.
	for _, p := range PostPaths {
		if r := c.post(p, url.Values{"csrf": {"forged"}}); r.StatusCode != http.StatusForbidden {
			t.Errorf("POST %s with a forged token = %d, want 403", p, r.StatusCode)
		}
	}
	if tokens, _ := e.db.ListAPITokens(context.Background()); len(tokens) != 0 {
		t.Fatalf("a forged POST made %d tokens", len(tokens))
	}
	if r := c.post("/tokens", form); r.StatusCode != http.StatusOK || text(r.doc.Find(`[data-testid=new-token]`)) == "" {
		t.Fatalf("POST /tokens with the session's token = %d, want the new token shown", r.StatusCode)
	}
	// The login form has its own token (a cookie and the same value in the form).
	other := e.client()
	if r := other.post("/login", url.Values{"csrf": {"guess"}, "user": {"alice"}, "password": {testPassword}}); r.StatusCode != http.StatusForbidden {
		t.Errorf("POST /login without the login cookie = %d, want 403", r.StatusCode)
	}
}

func TestLoginThrottledAfterRepeatedFailures(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	var codes []int
	for range 10 {
		codes = append(codes, c.loginAs("alice", "wrong").StatusCode)
	}
	for i, code := range codes {
		want := http.StatusUnauthorized
		if i >= maxFailures {
			want = http.StatusTooManyRequests
		}
		if code != want {
			t.Fatalf("attempt %d = %d, want %d (all: %v)", i+1, code, want, codes)
		}
	}
	// Throttled means even the right password is refused for now, from
	// this address and for this user from any address.
	r := c.loginAs("alice", testPassword)
	if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" ||
		!strings.Contains(text(r.doc.Find(`[data-testid=login-error]`)), "Too many") {
		t.Fatalf("right password while throttled = %d %q", r.StatusCode, text(r.doc.Find(`[data-testid=login-error]`)))
	}
	if !strings.Contains(e.logs.String(), "login throttled") {
		t.Error("throttling is not logged")
	}
	e.clock.Advance(failureWindow + time.Minute)
	if r := c.loginAs("alice", testPassword); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/turns" {
		t.Fatalf("login after the window = %d %q, want 303 to next", r.StatusCode, r.Header.Get("Location"))
	}
	// An unknown user fails like a wrong password.
	if r := e.client().loginAs("mallory", testPassword); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("unknown user = %d, want 401", r.StatusCode)
	}
}

func TestSessionCookieFlagsAndIdleExpiry(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	r := c.loginAs("alice", testPassword)
	var sc *http.Cookie
	for _, ck := range r.Cookies() {
		if ck.Name == sessionCookie {
			sc = ck
		}
	}
	if sc == nil {
		t.Fatal("login set no session cookie")
	}
	if !sc.HttpOnly || sc.SameSite != http.SameSiteLaxMode || sc.Secure || sc.Path != "/" {
		t.Errorf("session cookie over plain HTTP = %+v, want HttpOnly, SameSite=Lax, not Secure", sc)
	}
	if got := c.get("/turns"); got.StatusCode != http.StatusOK {
		t.Fatalf("GET /turns signed in = %d", got.StatusCode)
	}
	// Idle for longer than the limit: signed out.
	e.clock.Advance(time.Hour + time.Minute)
	if got := c.get("/turns"); got.StatusCode != http.StatusSeeOther {
		t.Fatalf("GET /turns after the idle limit = %d, want a redirect to login", got.StatusCode)
	}
	// Sign-out ends the session on the server, not only in the browser.
	c.login()
	cookie := c.c.Jar.Cookies(mustURL(t, e.srv.URL))
	if r := c.post("/logout", nil); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout = %d", r.StatusCode)
	}
	replay := e.client()
	replay.c.Jar.SetCookies(mustURL(t, e.srv.URL), cookie)
	if got := replay.get("/turns"); got.StatusCode != http.StatusSeeOther {
		t.Errorf("a signed-out session cookie still works: %d", got.StatusCode)
	}

	// Over TLS the cookie is Secure.
	tls := httptest.NewTLSServer(e.console.Handler(http.NotFoundHandler()))
	defer tls.Close()
	tc := e.client()
	tc.url = tls.URL
	tc.c.Transport = tls.Client().Transport
	r = tc.loginAs("alice", testPassword)
	for _, ck := range r.Cookies() {
		if ck.Name == sessionCookie && (!ck.Secure || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode) {
			t.Errorf("session cookie over TLS = %+v, want Secure, HttpOnly, SameSite=Lax", ck)
		}
	}
}

func TestSecurityHeadersAndNoInlineScript(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	c.login()
	turn := e.ask(questionText("How do I reset my VPN token?"))
	for _, p := range append(Paths[:len(Paths):len(Paths)], "/login", "/turns/"+itoa(turn.ID)) {
		r := c.get(p)
		if r.StatusCode >= 500 {
			t.Errorf("GET %s = %d", p, r.StatusCode)
		}
		csp := r.Header.Get("Content-Security-Policy")
		for _, want := range []string{"script-src 'self'", "frame-ancestors 'none'", "default-src 'self'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("GET %s: CSP %q lacks %q", p, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") {
			t.Errorf("GET %s: CSP allows inline code: %q", p, csp)
		}
		if r.Header.Get("X-Content-Type-Options") != "nosniff" || r.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("GET %s: headers %v", p, r.Header)
		}
		r.doc.Find("script").Each(func(_ int, s *goquery.Selection) {
			if src, ok := s.Attr("src"); !ok || src == "" || strings.TrimSpace(s.Text()) != "" {
				t.Errorf("GET %s has an inline script", p)
			}
		})
		if r.doc.Find("[style]").Length() > 0 || r.doc.Find("style").Length() > 0 {
			t.Errorf("GET %s has inline styles", p)
		}
		for _, a := range []string{"onclick", "onload", "onsubmit", "onchange"} {
			if r.doc.Find("["+a+"]").Length() > 0 {
				t.Errorf("GET %s has an inline %s handler", p, a)
			}
		}
	}
}

func TestNoConfigSecretRendered(t *testing.T) {
	e := newEnv(t, func(o *Options) {
		o.Config = func() string { return "llm:\n  gemini:\n    api_key: REDACTED\n" }
	})
	c := e.client()
	c.login()
	// The stored configuration of a run is the redacted one.
	if err := e.db.ImportGolden(context.Background(), []docent.GoldenQuestion{{ID: "vpn", Question: "How do I reset my VPN token?",
		Kind: "exact", Expect: []docent.GoldenExpect{{Doc: "it/vpn.md"}}}}, true); err != nil {
		t.Fatal(err)
	}
	id, err := e.console.h.StartGoldenRun(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	e.console.h.runs.Wait()
	page := c.get("/golden/runs/" + itoa(id))
	if cfg := text(page.doc.Find(`[data-testid=run-config]`)); cfg != strings.TrimSpace(e.console.h.opts.Config()) {
		t.Errorf("run config = %q, want the redacted config it was given", cfg)
	}
}

func TestAPIGuard(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	mk := func(name string, rate int) (string, docent.APIToken) {
		tok := tokenPrefix + randomToken(32)
		st := docent.APIToken{Name: name, Hash: hashKey(tok), Prefix: tok[:10], RatePerMinute: rate}
		if err := e.db.CreateAPIToken(ctx, &st); err != nil {
			t.Fatal(err)
		}
		return tok, st
	}
	good, _ := mk("ci", 0)
	limited, _ := mk("bursty", 2)
	revoked, rt := mk("old", 0)
	if err := e.db.RevokeAPIToken(ctx, rt.ID); err != nil {
		t.Fatal(err)
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	call := func(g *APIGuard, authz string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/api/ask", strings.NewReader(`{"question":"x"}`))
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		rec := httptest.NewRecorder()
		g.Wrap(ok).ServeHTTP(rec, req)
		return rec
	}
	required := NewAPIGuard(e.db, true, 60, nil)
	open := NewAPIGuard(e.db, false, 60, nil)
	for _, tc := range []struct {
		name  string
		g     *APIGuard
		authz string
		want  int
		code  string
	}{
		{"required: no token", required, "", http.StatusUnauthorized, "token_required"},
		{"required: valid token", required, "Bearer " + good, http.StatusTeapot, ""},
		{"required: lower-case scheme", required, "bearer " + good, http.StatusTeapot, ""},
		{"required: revoked token", required, "Bearer " + revoked, http.StatusUnauthorized, "invalid_token"},
		{"required: unknown token", required, "Bearer dct_nope", http.StatusUnauthorized, "invalid_token"},
		{"required: basic auth", required, "Basic YTpi", http.StatusUnauthorized, "invalid_token"},
		{"open: no token", open, "", http.StatusTeapot, ""},
		{"open: revoked token", open, "Bearer " + revoked, http.StatusUnauthorized, "invalid_token"},
		{"open: valid token", open, "Bearer " + good, http.StatusTeapot, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := call(tc.g, tc.authz)
			if rec.Code != tc.want {
				t.Fatalf("status = %d, want %d: %s", rec.Code, tc.want, rec.Body)
			}
			if tc.code != "" && (!strings.Contains(rec.Body.String(), `"error":"`+tc.code+`"`) || rec.Header().Get("WWW-Authenticate") == "") {
				t.Errorf("body %s, WWW-Authenticate %q; want error %s", rec.Body, rec.Header().Get("WWW-Authenticate"), tc.code)
			}
		})
	}
	// Per-token rate limit: two a minute, the third waits.
	now := time.Now()
	required.now = func() time.Time { return now }
	for i := range 2 {
		if rec := call(required, "Bearer "+limited); rec.Code != http.StatusTeapot {
			t.Fatalf("request %d within the rate = %d", i+1, rec.Code)
		}
	}
	rec := call(required, "Bearer "+limited)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "30" {
		t.Fatalf("third request in a minute = %d Retry-After %q, want 429 after 30s", rec.Code, rec.Header().Get("Retry-After"))
	}
	if rec := call(required, "Bearer "+good); rec.Code != http.StatusTeapot {
		t.Errorf("another token is limited too: %d", rec.Code)
	}
	now = now.Add(30 * time.Second)
	if rec := call(required, "Bearer "+limited); rec.Code != http.StatusTeapot {
		t.Errorf("after the wait = %d", rec.Code)
	}
	list, err := e.db.ListAPITokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range list {
		if tk.Name == "ci" && tk.LastUsedAt.IsZero() {
			t.Error("the token's use was not recorded")
		}
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestPathsCoverEveryRoute checks that Paths and PostPaths, which the
// session and CSRF tests walk, hold a path for every route routes.go
// registers behind a session, so a new page cannot skip those tests.
func TestPathsCoverEveryRoute(t *testing.T) {
	src, err := os.ReadFile("routes.go")
	if err != nil {
		t.Fatal(err)
	}
	routes := regexp.MustCompile(`"(GET|POST) (/[^"]*)"`).FindAllStringSubmatch(string(src), -1)
	if len(routes) < 20 {
		t.Fatalf("found only %d routes in routes.go", len(routes))
	}
	wild := regexp.MustCompile(`\{[a-z]+\}`)
	for _, m := range routes {
		if m[2] == "/login" || m[2] == "/favicon.ico" { // the one page without a session, and the icon's redirect
			continue
		}
		p := strings.ReplaceAll(m[2], "{$}", "\x00")
		p = wild.ReplaceAllString(p, "\x01")
		pattern := "^" + regexp.QuoteMeta(p)
		pattern = strings.NewReplacer("\x00", "$", "\x01", `[^/]+`).Replace(pattern)
		if !strings.HasSuffix(pattern, "$") {
			pattern += `(\?.*)?$`
		}
		re := regexp.MustCompile(pattern)
		list := Paths
		if m[1] == "POST" {
			list = PostPaths
		}
		if !slices.ContainsFunc(list, re.MatchString) {
			t.Errorf("%s %s has no path in the console's %s list", m[1], m[2], map[string]string{"GET": "Paths", "POST": "PostPaths"}[m[1]])
		}
	}
}

// TestTrustedHeader checks the SSO-proxy mode: the header's email gets a
// session when it is allowed, and nothing otherwise, even with the
// cookie of an earlier allowed user.
func TestTrustedHeader(t *testing.T) {
	e := newEnv(t, func(o *Options) {
		o.Auth.TrustedHeader = "X-Forwarded-Email"
		o.Auth.Allowed = []string{"ops@example.com"}
		o.Auth.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	})
	c := e.client()
	get := func(email string) *response {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, c.url+"/turns", nil)
		if err != nil {
			t.Fatal(err)
		}
		if email != "" {
			req.Header.Set("X-Forwarded-Email", email)
		}
		return c.do(req)
	}
	cases := []struct {
		name, email string
		wantStatus  int
		wantUser    string
	}{
		{"no header, no session", "", http.StatusSeeOther, ""},
		{"not allowed", "mallory@example.com", http.StatusSeeOther, ""},
		{"allowed, any case", "Ops@Example.com", http.StatusOK, "Ops@Example.com"},
		{"not allowed, with the allowed user's cookie", "mallory@example.com", http.StatusSeeOther, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := get(tc.email)
			if r.StatusCode != tc.wantStatus {
				t.Fatalf("GET /turns as %q = %d, want %d", tc.email, r.StatusCode, tc.wantStatus)
			}
			if tc.wantStatus == http.StatusSeeOther && !strings.HasPrefix(r.Header.Get("Location"), "/login") {
				t.Errorf("redirect to %q, want the login page", r.Header.Get("Location"))
			}
			if got := text(r.doc.Find(`[data-testid=user]`)); got != tc.wantUser {
				t.Errorf("signed in as %q, want %q", got, tc.wantUser)
			}
		})
	}
}

// TestFormBodiesBounded: a console POST over its bound is a 413 and
// changes nothing, checked before the form is used: the sign-in form
// (no session yet) and a multipart upload included.
func TestFormBodiesBounded(t *testing.T) {
	e := newEnv(t)
	big := strings.Repeat("x", maxFormBytes+1)

	// A multipart file to the sign-in form, with no session or login cookie.
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", "big.bin")
	if err != nil {
		t.Fatal(err)
	}
	fw.Write([]byte(big))
	mw.Close()
	anon := e.client()
	req, err := http.NewRequest(http.MethodPost, anon.url+"/login", &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if r := anon.do(req); r.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("POST /login with a %d-byte file = %d, want 413", len(big), r.StatusCode)
	}

	c := e.client()
	c.login()
	if r := c.post("/tokens", url.Values{"name": {"ci"}, "pad": {big}}); r.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("POST /tokens with a %d-byte body = %d, want 413", len(big), r.StatusCode)
	}
	if tokens, _ := e.db.ListAPITokens(context.Background()); len(tokens) != 0 {
		t.Errorf("an oversized form made %d tokens", len(tokens))
	}
	// The golden import has a larger bound, enforced too.
	if r := c.post("/golden/import", url.Values{"yaml": {big}}); r.StatusCode == http.StatusRequestEntityTooLarge {
		t.Errorf("POST /golden/import with %d bytes = 413, want it within the import bound", len(big))
	}
	huge := strings.Repeat("x", maxImportBytes+1)
	if r := c.post("/golden/import", url.Values{"yaml": {huge}}); r.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("POST /golden/import with %d bytes = %d, want 413", len(huge), r.StatusCode)
	}
}

// TestAPIGuardCaller: a valid token reaches the handler as the request's
// docent.Caller, scope included; Authenticate checks the token without
// charging its rate, which Allow charges from the same bucket as Wrap.
func TestAPIGuardCaller(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	tok := tokenPrefix + randomToken(32)
	st := docent.APIToken{Name: "community", Hash: hashKey(tok), Prefix: tok[:10], RatePerMinute: 2,
		Scope: docent.Scope{Sources: []string{"public"}}}
	if err := e.db.CreateAPIToken(ctx, &st); err != nil {
		t.Fatal(err)
	}
	var got []docent.Caller
	seen := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := docent.CallerFromContext(r.Context())
		if ok {
			got = append(got, c)
		}
		w.WriteHeader(http.StatusTeapot)
	})
	g := NewAPIGuard(e.db, true, 60, nil)
	now := time.Now()
	g.now = func() time.Time { return now }
	do := func(h http.Handler) int {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{}`))
		req.Header.Set("Authorization", "Bearer "+tok)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	for range 3 { // more than the rate: Authenticate does not charge it
		if code := do(g.Authenticate(seen)); code != http.StatusTeapot {
			t.Fatalf("Authenticate = %d", code)
		}
	}
	if len(got) != 3 || got[2].Name != "community" || got[2].TokenID != st.ID || got[2].RatePerMinute != 2 ||
		!slices.Equal(got[2].Scope.Sources, []string{"public"}) {
		t.Fatalf("callers = %+v", got)
	}
	if _, ok := g.Allow(got[0]); !ok {
		t.Fatal("Allow refused the first request")
	}
	if code := do(g.Wrap(seen)); code != http.StatusTeapot {
		t.Fatalf("Wrap = %d after one Allow", code)
	}
	if wait, ok := g.Allow(got[0]); ok || wait != 30*time.Second {
		t.Errorf("third request of a 2/min token: ok %v, wait %v; want refused for 30s", ok, wait)
	}
	if code := do(g.Wrap(seen)); code != http.StatusTooManyRequests {
		t.Errorf("Wrap after the bucket ran dry = %d, want 429", code)
	}
}
