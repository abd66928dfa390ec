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
	"net/netip"
	"runtime"
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

// Login throttling. Every sign-in attempt is counted against its
// address and its user name before the password is checked; after
// maxFailures attempts that did not succeed within failureWindow, more
// are refused (429) until the window has passed. At most
// maxChecksPerKey attempts are in flight at once per address and per
// user (the rest are refused at once, 429), and maxChecks checks run in
// all (an attempt waits up to checkWait for one, then 429): a burst of
// wrong passwords costs a few bcrypt checks, not one each.
const (
	maxFailures   = 5
	failureWindow = 15 * time.Minute
	// maxChecksPerKey bounds the checks in flight per address and per user.
	maxChecksPerKey = 2
	// maxFailureRecords bounds the attempt records kept (an address or a
	// user name each); when full, the oldest tenth is dropped, the
	// configured admins' last.
	maxFailureRecords = 10_000
	// MaxUserBytes is the longest user name the sign-in form takes.
	MaxUserBytes = 256
	// sessionMaxAge ends a session however active it is.
	sessionMaxAge = 24 * time.Hour
	// maxSessions bounds the sessions kept; the least recently used go
	// first.
	maxSessions = 10_000
)

// maxChecks bounds the password checks in flight in all: bcrypt is
// CPU-bound, and the questions being answered need the cores too. An
// attempt waits up to checkWait for one, then is refused (429).
var maxChecks = max(1, runtime.GOMAXPROCS(0)/2)

const checkWait = 3 * time.Second

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

// failures counts the sign-in attempts of one address or user name in
// the window that began at first; logged is set once its refusal is
// logged, so a flood of refused attempts logs one line.
type failures struct {
	n      int
	first  time.Time
	logged bool
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
	// protected are the attempt keys of the configured admins, dropped
	// last when the records are full.
	protected map[string]bool
	// checking counts the attempts in flight by key; checks holds a
	// token per password check running, maxChecks at most.
	checking map[string]int
	checks   chan struct{}
	swept    time.Time
}

func newAuth(opts AuthOptions, now func() time.Time) *auth {
	if opts.SessionIdle <= 0 {
		opts.SessionIdle = 2 * time.Hour
	}
	// The dummy costs what the admins' hashes cost, so that an unknown
	// user takes as long as a known one with a wrong password.
	cost := bcrypt.MinCost
	protected := map[string]bool{}
	for _, ad := range opts.Admins {
		if c, err := bcrypt.Cost([]byte(ad.Hash)); err == nil && c > cost {
			cost = c
		}
		protected[userKey(ad.User)] = true
	}
	if len(opts.Admins) == 0 {
		cost = bcrypt.DefaultCost
	}
	dummy, _ := bcrypt.GenerateFromPassword([]byte(randomToken(8)), cost)
	return &auth{opts: opts, now: now, dummy: dummy, sessions: map[string]*session{}, failed: map[string]*failures{},
		protected: protected, checking: map[string]int{}, checks: make(chan struct{}, maxChecks)}
}

// userKey and ipKey are the attempt records' keys; a user name is
// hashed, so a record's size does not depend on what was typed.
func userKey(user string) string { return "user:" + hashKey(user) }
func ipKey(ip string) string     { return "ip:" + ip }

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
	for len(a.sessions) >= maxSessions { // full: the least recently used goes
		oldest := ""
		for k, old := range a.sessions {
			if oldest == "" || old.lastSeen.Before(a.sessions[oldest].lastSeen) {
				oldest = k
			}
		}
		delete(a.sessions, oldest)
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

// refusal is why an attempt was refused before its password was checked.
type refusal int

const (
	admitted  refusal = iota
	throttled         // too many attempts in the window
	busy              // too many checks in flight
)

// begin counts a sign-in attempt against each key (its address and its
// user name) and admits it to the password check, unless a key has had
// maxFailures attempts in its window (throttled) or too many checks are
// in flight (busy): maxChecksPerKey for a key at once, refused at once;
// maxChecks in all, waited for up to checkWait. An admitted attempt must
// call the returned done when its check is over; firstRefusal is set the
// first time a key's attempts are refused in a window, for logging once.
func (a *auth) begin(keys ...string) (done func(), why refusal, firstRefusal bool) {
	a.mu.Lock()
	if why, first := a.refusedLocked(keys); why != admitted {
		a.mu.Unlock()
		return nil, why, first
	}
	for _, k := range keys {
		a.checking[k]++
	}
	a.mu.Unlock()
	release := func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		for _, k := range keys {
			if a.checking[k]--; a.checking[k] <= 0 {
				delete(a.checking, k)
			}
		}
	}
	wait := time.NewTimer(checkWait)
	defer wait.Stop()
	select {
	case a.checks <- struct{}{}:
	case <-wait.C:
		release()
		return nil, busy, false
	}
	done = func() {
		<-a.checks
		release()
	}
	// Counted now, before the check; refused if others were counted
	// while this one waited.
	why, first := a.count(keys)
	if why != admitted {
		done()
		return nil, why, first
	}
	return done, admitted, false
}

// count counts an attempt against each key, unless one is throttled.
func (a *auth) count(keys []string) (refusal, bool) {
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, k := range keys {
		if f := a.failed[k]; f != nil && now.Sub(f.first) <= failureWindow && f.n >= maxFailures {
			first := !f.logged
			f.logged = true
			return throttled, first
		}
	}
	for _, k := range keys {
		f := a.failed[k]
		if f == nil || now.Sub(f.first) > failureWindow {
			if f == nil && len(a.failed) >= maxFailureRecords {
				a.sweepFailures(now, true)
			}
			f = &failures{first: now}
			a.failed[k] = f
		}
		f.n++
	}
	return admitted, false
}

// refusedLocked says whether an attempt for keys is refused before it
// waits: a key throttled, or at its checks in flight. Called with a.mu
// held.
func (a *auth) refusedLocked(keys []string) (refusal, bool) {
	now := a.now()
	a.sweepFailures(now, false)
	for _, k := range keys {
		if f := a.failed[k]; f != nil && now.Sub(f.first) <= failureWindow && f.n >= maxFailures {
			first := !f.logged
			f.logged = true
			return throttled, first
		}
	}
	for _, k := range keys {
		if a.checking[k] >= maxChecksPerKey {
			return busy, false
		}
	}
	return admitted, false
}

// sweepFailures drops the records whose window has passed, at most once
// a minute unless full; when still full after that, it drops the oldest
// tenth of the records, the configured admins' last. Called with a.mu
// held.
func (a *auth) sweepFailures(now time.Time, full bool) {
	if full || now.Sub(a.swept) >= time.Minute {
		a.swept = now
		for k, f := range a.failed {
			if now.Sub(f.first) > failureWindow {
				delete(a.failed, k)
			}
		}
	}
	if !full || len(a.failed) < maxFailureRecords {
		return
	}
	keys := make([]string, 0, len(a.failed))
	for k := range a.failed {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y string) int {
		if px, py := a.protected[x], a.protected[y]; px != py {
			if px {
				return 1
			}
			return -1
		}
		return a.failed[x].first.Compare(a.failed[y].first)
	})
	for _, k := range keys[:len(keys)/10+1] {
		delete(a.failed, k)
	}
}

// succeed forgets the attempts of each key after a successful sign-in.
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
// allowed person. The header counts only on a request that comes
// straight from one of the trusted proxies: anyone else could set it.
func (a *auth) trustedUser(r *http.Request) (string, bool) {
	if a.opts.TrustedHeader == "" || !a.fromProxy(r) {
		return "", false
	}
	email := strings.TrimSpace(r.Header.Get(a.opts.TrustedHeader))
	if email == "" {
		return "", false
	}
	ok := slices.ContainsFunc(a.opts.Allowed, func(e string) bool { return strings.EqualFold(e, email) })
	return email, ok
}

// fromProxy reports whether the request's peer is a trusted proxy.
func (a *auth) fromProxy(r *http.Request) bool {
	ip, err := netip.ParseAddr(clientIP(r))
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	return slices.ContainsFunc(a.opts.TrustedProxies, func(p netip.Prefix) bool { return p.Contains(ip) })
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
