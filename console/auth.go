package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// Cookie names.
const (
	sessionCookie = "docent_session"
	loginCookie   = "docent_login"
)

// Login throttling: after maxFailures failed logins from one address or
// for one user within failureWindow, logins are refused until the
// window has passed.
const (
	maxFailures   = 5
	failureWindow = 15 * time.Minute
	// sessionMaxAge ends a session however active it is.
	sessionMaxAge = 24 * time.Hour
)

// session is a signed-in admin. Sessions live in memory: a restart signs
// everyone out.
type session struct {
	user     string
	csrf     string
	created  time.Time
	lastSeen time.Time
	// viaHeader is set for a session the trusted header began.
	viaHeader bool
}

type failures struct {
	n     int
	first time.Time
}

// auth keeps sessions and login failures.
type auth struct {
	opts AuthOptions
	now  func() time.Time
	// dummy is compared against when the user is unknown, so that a
	// wrong user takes as long as a wrong password.
	dummy []byte

	mu       sync.Mutex
	sessions map[string]*session // by SHA-256 of the cookie value
	failed   map[string]*failures
}

func newAuth(opts AuthOptions, now func() time.Time) *auth {
	if opts.SessionIdle <= 0 {
		opts.SessionIdle = 2 * time.Hour
	}
	dummy, _ := bcrypt.GenerateFromPassword([]byte(randomToken(8)), bcrypt.MinCost)
	return &auth{opts: opts, now: now, dummy: dummy, sessions: map[string]*session{}, failed: map[string]*failures{}}
}

// randomToken returns n random bytes, URL-safe base64.
func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

func hashKey(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// newSession starts a session for user and sets its cookie.
func (a *auth) newSession(w http.ResponseWriter, r *http.Request, user string) *session {
	id := randomToken(32)
	now := a.now()
	s := &session{user: user, csrf: randomToken(32), created: now, lastSeen: now}
	a.mu.Lock()
	for k, old := range a.sessions { // sweep expired sessions
		if a.expired(old, now) {
			delete(a.sessions, k)
		}
	}
	a.sessions[hashKey(id)] = s
	a.mu.Unlock()
	http.SetCookie(w, a.cookie(r, sessionCookie, id, 0))
	return s
}

func (a *auth) expired(s *session, now time.Time) bool {
	return now.Sub(s.lastSeen) > a.opts.SessionIdle || now.Sub(s.created) > sessionMaxAge
}

// cookie makes an HttpOnly, SameSite=Lax cookie, Secure over TLS (or
// when the public URL is https); maxAge < 0 deletes it.
func (a *auth) cookie(r *http.Request, name, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: r.TLS != nil || a.opts.SecureCookies, MaxAge: maxAge}
}

// session returns the request's live session, touching it, or nil.
func (a *auth) session(r *http.Request) *session {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return nil
	}
	key := hashKey(c.Value)
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[key]
	if !ok {
		return nil
	}
	if a.expired(s, now) {
		delete(a.sessions, key)
		return nil
	}
	s.lastSeen = now
	return s
}

// end ends the request's session and deletes its cookie.
func (a *auth) end(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		a.mu.Lock()
		delete(a.sessions, hashKey(c.Value))
		a.mu.Unlock()
	}
	http.SetCookie(w, a.cookie(r, sessionCookie, "", -1))
}

// throttled reports whether logins from this address or for this user
// are refused for now.
func (a *auth) throttled(keys ...string) bool {
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, k := range keys {
		f := a.failed[k]
		if f == nil {
			continue
		}
		if now.Sub(f.first) > failureWindow {
			delete(a.failed, k)
			continue
		}
		if f.n >= maxFailures {
			return true
		}
	}
	return false
}

// fail counts a failed login against each key; succeed forgets them.
func (a *auth) fail(keys ...string) {
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, k := range keys {
		f := a.failed[k]
		if f == nil || now.Sub(f.first) > failureWindow {
			f = &failures{first: now}
			a.failed[k] = f
		}
		f.n++
	}
}

func (a *auth) succeed(keys ...string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, k := range keys {
		delete(a.failed, k)
	}
}

// check compares a password with the admin's hash, taking as long for
// an unknown user.
func (a *auth) check(user, password string) bool {
	hash := a.dummy
	known := false
	for _, ad := range a.opts.Admins {
		if subtle.ConstantTimeCompare([]byte(ad.User), []byte(user)) == 1 {
			hash, known = []byte(ad.Hash), true
		}
	}
	ok := bcrypt.CompareHashAndPassword(hash, []byte(password)) == nil
	return known && ok
}

// trustedUser returns the email of the trusted header when it names an
// allowed person.
func (a *auth) trustedUser(r *http.Request) (string, bool) {
	if a.opts.TrustedHeader == "" {
		return "", false
	}
	email := strings.TrimSpace(r.Header.Get(a.opts.TrustedHeader))
	if email == "" {
		return "", false
	}
	ok := slices.ContainsFunc(a.opts.Allowed, func(e string) bool { return strings.EqualFold(e, email) })
	return email, ok
}

// clientIP is the request's remote address without the port.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

type sessionKey struct{}

// sessionOf returns the session requireSession put in ctx.
func sessionOf(ctx context.Context) *session {
	s, _ := ctx.Value(sessionKey{}).(*session)
	if s == nil {
		return &session{}
	}
	return s
}

// validCSRF reports whether the request carries the session's token.
func validCSRF(r *http.Request, s *session) bool {
	got := r.PostFormValue("csrf")
	if got == "" {
		got = r.Header.Get("X-CSRF-Token")
	}
	return s.csrf != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf)) == 1
}
