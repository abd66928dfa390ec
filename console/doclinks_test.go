package console

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent"
)

// docsEnv is the console with /docs behind GuardDocs (tokens required)
// over a stand-in page handler, links signed under http://docent.test.
func docsEnv(t *testing.T) (*env, *DocLinks, http.Handler) {
	t.Helper()
	e := newEnv(t)
	links, err := NewDocLinks([]byte(strings.Repeat("k", 32)), "http://docent.test/", 24*time.Hour, e.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("the page " + r.URL.Path)) })
	guard := NewAPIGuard(e.db, true, 60, nil)
	mux := http.NewServeMux()
	mux.Handle("/docs/", e.console.GuardDocs(guard, links, page))
	return e, links, e.console.Handler(mux)
}

func serve(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// TestGuardDocs: with tokens required, /docs needs a bearer token, a
// console session or a signed link for that page that has not expired;
// anyone else gets 401 (JSON, or a page with a sign-in link for a
// browser), and a link for another page, changed, or expired does not
// open it.
func TestGuardDocs(t *testing.T) {
	e, links, h := docsEnv(t)
	const page = "/docs/local/office.md"
	signed := links.Sign("http://docent.test" + page + "#parking")
	u, err := url.Parse(signed)
	if err != nil || u.Fragment != "parking" || u.Query().Get("sig") == "" || u.Query().Get("exp") == "" {
		t.Fatalf("Sign = %q", signed)
	}
	for _, other := range []string{"https://elsewhere.example/docs/local/office.md", "http://docent.test/turns/1", "not a url\x7f"} {
		if got := links.Sign(other); got != other {
			t.Errorf("Sign(%q) = %q, want it unchanged", other, got)
		}
	}
	tok := &docent.APIToken{Name: "ci", Hash: hashKey("dct_good"), Prefix: "dct_go"}
	if err := e.db.CreateAPIToken(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	session := e.client()
	session.login()
	jar := session.c.Jar.Cookies(mustURL(t, e.srv.URL))

	req := func(target string, mod func(*http.Request)) *http.Request {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		r.RemoteAddr = "192.0.2.1:1"
		if mod != nil {
			mod(r)
		}
		return r
	}
	q := u.Query()
	flip := "A"
	if strings.HasPrefix(q.Get("sig"), "A") {
		flip = "B"
	}
	tampered := url.Values{"exp": {q.Get("exp")}, "sig": {flip + q.Get("sig")[1:]}}
	later := url.Values{"exp": {"9999999999"}, "sig": {q.Get("sig")}}
	cases := []struct {
		name     string
		r        *http.Request
		want     int
		wantCode string
	}{
		{"nothing", req(page, nil), 401, "token_required"},
		{"signed link", req(page+"?"+u.RawQuery, nil), 200, ""},
		{"signed link, another page", req("/docs/local/vpn.md?"+u.RawQuery, nil), 401, "invalid_link"},
		{"changed signature", req(page+"?"+tampered.Encode(), nil), 401, "invalid_link"},
		{"later expiry, same signature", req(page+"?"+later.Encode(), nil), 401, "invalid_link"},
		{"bearer token", req(page, func(r *http.Request) { r.Header.Set("Authorization", "Bearer dct_good") }), 200, ""},
		{"wrong token", req(page, func(r *http.Request) { r.Header.Set("Authorization", "Bearer dct_bad") }), 401, "invalid_token"},
		{"console session", req(page, func(r *http.Request) {
			for _, c := range jar {
				r.AddCookie(c)
			}
		}), 200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := serve(h, tc.r)
			if w.Code != tc.want {
				t.Fatalf("GET = %d, want %d: %s", w.Code, tc.want, w.Body)
			}
			if tc.want == 200 {
				if !strings.Contains(w.Body.String(), "the page "+page) {
					t.Errorf("body %q", w.Body)
				}
				return
			}
			var body map[string]string
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body["error"] != tc.wantCode {
				t.Errorf("body %s (%v), want error %q", w.Body, err, tc.wantCode)
			}
		})
	}
	// A browser is offered the sign-in page, coming back to the document.
	w := serve(h, req(page, func(r *http.Request) { r.Header.Set("Accept", "text/html,application/xhtml+xml") }))
	if w.Code != 401 || !strings.Contains(w.Body.String(), `href="/login?next=%2Fdocs%2Flocal%2Foffice.md"`) {
		t.Errorf("a browser without a session = %d:\n%s", w.Code, w.Body)
	}
	// Past its lifetime the link is expired.
	e.clock.Advance(24*time.Hour + time.Minute)
	w = serve(h, req(page+"?"+u.RawQuery, func(r *http.Request) { r.Header.Set("Accept", "text/html") }))
	if w.Code != 401 || !strings.Contains(w.Body.String(), "This link has expired") || !strings.Contains(w.Body.String(), "24 hours") {
		t.Errorf("an expired link = %d:\n%s", w.Code, w.Body)
	}
}

// TestGuardDocsOpenAPI: where the API is open, so is /docs.
func TestGuardDocsOpenAPI(t *testing.T) {
	e := newEnv(t)
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("the page")) })
	h := e.console.GuardDocs(NewAPIGuard(e.db, false, 60, nil), nil, page)
	if w := serve(h, httptest.NewRequest(http.MethodGet, "/docs/local/office.md", nil)); w.Code != 200 {
		t.Errorf("/docs with an open API = %d", w.Code)
	}
}
