package console

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DocLinks signs links to this server's /docs pages, so that a citation
// in a chat answer opens for the person it was shown to when /docs needs
// a token: the link carries its expiry (exp, Unix seconds) and an
// HMAC-SHA256 of the path and expiry under a key only the server holds
// (sig). A link is good for its path only, until it expires.
type DocLinks struct {
	key  []byte
	base *url.URL // the public URL: scheme and host links must have
	ttl  time.Duration
	now  func() time.Time
}

// NewDocLinks returns a signer for links under publicURL with key (at
// least 32 random bytes, kept across restarts so that links outlive
// them), each good for ttl. now is the clock (nil: time.Now).
func NewDocLinks(key []byte, publicURL string, ttl time.Duration, now func() time.Time) (*DocLinks, error) {
	if len(key) < 32 {
		return nil, fmt.Errorf("console: doc links: the key must be at least 32 bytes")
	}
	u, err := url.Parse(strings.TrimRight(publicURL, "/"))
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("console: doc links: public URL %q is not absolute", publicURL)
	}
	if now == nil {
		now = time.Now
	}
	return &DocLinks{key: key, base: u, ttl: ttl, now: now}, nil
}

// TTL is how long a signed link works.
func (l *DocLinks) TTL() time.Duration { return l.ttl }

// Sign returns rawURL signed when it links to a /docs page of this
// server, and unchanged otherwise (another site, a console page, a URL
// that does not parse).
func (l *DocLinks) Sign(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || !strings.EqualFold(u.Scheme, l.base.Scheme) || !strings.EqualFold(u.Host, l.base.Host) {
		return rawURL
	}
	p := strings.TrimPrefix(u.Path, l.base.Path)
	if !strings.HasPrefix(p, "/docs/") {
		return rawURL
	}
	exp := strconv.FormatInt(l.now().Add(l.ttl).Unix(), 10)
	q := u.Query()
	q.Set("exp", exp)
	q.Set("sig", l.mac(p, exp))
	u.RawQuery = q.Encode()
	return u.String()
}

// mac is the signature of a /docs path (as the server routes it) and
// an expiry.
func (l *DocLinks) mac(path, exp string) string {
	m := hmac.New(sha256.New, l.key)
	m.Write([]byte("docent /docs link\x00"))
	m.Write([]byte(exp))
	m.Write([]byte{0})
	m.Write([]byte(path))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// linkState is what a request's signature says.
type linkState int

const (
	unsigned    linkState = iota // no exp or sig
	linkValid                    // signed for this path, not expired
	linkInvalid                  // signed for another path, or tampered with
	linkExpired                  // signed for this path, expired
)

// check reads the signature r carries for its own path.
func (l *DocLinks) check(r *http.Request) linkState {
	q := r.URL.Query()
	sig, exp := q.Get("sig"), q.Get("exp")
	if sig == "" && exp == "" {
		return unsigned
	}
	until, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || !hmac.Equal([]byte(sig), []byte(l.mac(r.URL.Path, exp))) {
		return linkInvalid
	}
	if l.now().Unix() > until {
		return linkExpired
	}
	return linkValid
}

// GuardDocs puts /docs behind the API's rule. When the API guard
// requires tokens, a page is served to a request with a valid bearer
// token (checked and rate-limited as on /api/), a console session (or an
// allowed trusted header from a trusted proxy), or a signed link that has
// not expired (links may be nil: no signed links); anyone else gets 401.
// When the API is open, so is /docs.
func (c *Console) GuardDocs(g *APIGuard, links *DocLinks, next http.Handler) http.Handler {
	if !g.Required() {
		return next
	}
	withToken := g.Wrap(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			withToken.ServeHTTP(w, r)
			return
		}
		link := unsigned
		if links != nil {
			if link = links.check(r); link == linkValid {
				w.Header().Set("Cache-Control", "private, no-store")
				next.ServeHTTP(w, r)
				return
			}
		}
		if c.h.signedIn(r) {
			w.Header().Set("Cache-Control", "private, no-store")
			next.ServeHTTP(w, r)
			return
		}
		c.h.refuseDoc(w, r, link, links)
	})
}

// signedIn reports whether the request comes from a console user: a live
// session, or an allowed trusted header from a trusted proxy. It starts
// no session.
func (h *handler) signedIn(r *http.Request) bool {
	if h.auth.session(r) != nil {
		return true
	}
	_, ok := h.auth.trustedUser(r)
	return ok
}

var docRefused = template.Must(template.New("refused").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in to read this page</title></head>
<body><h1>{{.Title}}</h1><p>{{.Message}}</p>
<p><a href="{{.Login}}" data-testid="docs-sign-in">Sign in to the console</a> to read it.</p></body></html>`))

// refuseDoc answers 401: JSON for API clients, a page with a sign-in
// link for browsers.
func (h *handler) refuseDoc(w http.ResponseWriter, r *http.Request, link linkState, links *DocLinks) {
	code, msg := "token_required", "This page needs a bearer token, a console session or a signed link."
	title := "This page needs you to sign in"
	switch link {
	case linkExpired:
		code, title = "link_expired", "This link has expired"
		msg = "Links to pages in chat answers work for " + span(links.TTL()) + ". Ask again for a fresh link."
	case linkInvalid:
		code, title = "invalid_link", "This link is not valid"
		msg = "The link was changed or is for another page. Use the link from the answer as it was given."
	}
	w.Header().Set("Cache-Control", "no-store")
	if !strings.Contains(r.Header.Get("Accept"), "text/html") {
		unauthorized(w, code, msg)
		return
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="docent"`)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	_ = docRefused.Execute(w, map[string]string{"Title": title, "Message": msg,
		"Login": "/login?next=" + url.QueryEscape(r.URL.Path)})
}

// span says a duration in words: "24 hours", "90 minutes".
func span(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return strconv.Itoa(int(d/time.Hour)) + " hours"
	case d >= time.Minute && d%time.Minute == 0:
		return strconv.Itoa(int(d/time.Minute)) + " minutes"
	}
	return d.String()
}
