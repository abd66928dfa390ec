package console

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// slowHashCost is a bcrypt cost at which one check takes tens of
// milliseconds, long enough for concurrent attempts to overlap.
const slowHashCost = 10

// withSlowAdmin makes alice's hash cost slowHashCost.
func withSlowAdmin(t *testing.T) envOption {
	hash, err := bcrypt.GenerateFromPassword([]byte(testPassword), slowHashCost)
	if err != nil {
		t.Fatal(err)
	}
	return func(o *Options) { o.Auth.Admins = []Admin{{User: "alice", Hash: string(hash)}} }
}

// signIn posts the sign-in form straight to the console's handler from
// addr (host:port), with a login cookie and the same token in the form.
func (e *env) signIn(addr, user, password, next string) *httptest.ResponseRecorder {
	form := url.Values{"csrf": {"tok"}, "user": {user}, "password": {password}}
	if next != "" {
		form.Set("next", next)
	}
	req := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: loginCookie, Value: "tok"})
	req.RemoteAddr = addr
	w := httptest.NewRecorder()
	e.srv.Config.Handler.ServeHTTP(w, req)
	return w
}

// TestConcurrentWrongPasswordsThrottled: 50 wrong passwords for one user
// at once, from one address and then from 50, get at most maxFailures
// password checks (401); the rest are refused with 429 before any check.
func TestConcurrentWrongPasswordsThrottled(t *testing.T) {
	for _, tc := range []struct {
		name string
		addr func(i int) string
	}{
		{"one address", func(int) string { return "192.0.2.1:1234" }},
		{"fifty addresses", func(i int) string { return "198.51.100." + strconv.Itoa(i+1) + ":1234" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, withSlowAdmin(t))
			const n = 50
			codes := make([]int, n)
			var start, wg sync.WaitGroup
			start.Add(1)
			for i := range n {
				wg.Go(func() {
					start.Wait()
					codes[i] = e.signIn(tc.addr(i), "alice", "wrong password", "").Code
				})
			}
			start.Done()
			wg.Wait()
			count := map[int]int{}
			for _, c := range codes {
				count[c]++
			}
			if count[http.StatusUnauthorized] > maxFailures || count[http.StatusUnauthorized] == 0 ||
				count[http.StatusUnauthorized]+count[http.StatusTooManyRequests] != n {
				t.Fatalf("50 concurrent wrong passwords: %v, want at most %d checked (401) and the rest 429", count, maxFailures)
			}
			if got := strings.Count(e.logs.String(), "login throttled"); got > 2 {
				t.Errorf("%d 'login throttled' lines for one burst, want one per locked key", got)
			}
		})
	}
}

// TestFailedLoginRecordsBounded: 300 failed sign-ins from different
// addresses with user names up to 1 MB are refused without reflecting
// or logging the names whole, and the failure records expire and stay
// bounded however many keys an attacker makes.
func TestFailedLoginRecordsBounded(t *testing.T) {
	e := newEnv(t)
	for i := range 300 {
		size := 10 << 10
		if i%50 == 0 {
			size = 1<<20 - 200 // just under the form's bound
		}
		user := strings.Repeat(string(rune('a'+i%26)), size)
		w := e.signIn("198.18."+strconv.Itoa(i/250)+"."+strconv.Itoa(i%250)+":1", user, "x", "")
		if w.Code != http.StatusUnauthorized {
			t.Fatalf("sign-in %d with a %d-byte user name = %d, want 401", i, size, w.Code)
		}
		if strings.Contains(w.Body.String(), user[:MaxUserBytes+1]) {
			t.Fatalf("the sign-in page reflects a %d-byte user name", size)
		}
	}
	if n := e.logs.Len(); n > 300*400 {
		t.Errorf("300 failed sign-ins logged %d bytes, want a short line each", n)
	}
	a := e.console.h.auth
	a.mu.Lock()
	records := len(a.failed)
	a.mu.Unlock()
	if records != 300 {
		t.Errorf("%d failure records after 300 sign-ins from 300 addresses with overlong names, want one per address", records)
	}
	// Expired records are swept.
	e.clock.Advance(failureWindow + 2*time.Minute)
	e.signIn("192.0.2.77:1", "bob", "x", "")
	a.mu.Lock()
	records = len(a.failed)
	a.mu.Unlock()
	if records != 2 {
		t.Errorf("%d failure records after the window passed, want the 2 of the last attempt", records)
	}
	// However many keys, at most maxFailureRecords; alice's record (a
	// configured admin) is dropped last.
	alice := userKey("alice")
	for range maxFailures - 1 {
		done, why, _ := a.begin(ipKey("192.0.2.200"), alice)
		if why != admitted {
			t.Fatalf("attempt refused: %v", why)
		}
		done()
	}
	for i := range 2 * maxFailureRecords {
		done, _, _ := a.begin(ipKey("10.1."+strconv.Itoa(i/250)+"."+strconv.Itoa(i%250)), userKey("u"+strconv.Itoa(i)))
		if done != nil {
			done()
		}
	}
	a.mu.Lock()
	records = len(a.failed)
	kept := a.failed[alice]
	a.mu.Unlock()
	if records > maxFailureRecords {
		t.Errorf("%d failure records, want at most %d", records, maxFailureRecords)
	}
	if kept == nil || kept.n != maxFailures-1 {
		t.Errorf("alice's failure record = %+v after the flood, want kept with %d attempts", kept, maxFailures-1)
	}
}

// TestLoginNextStaysOnSite: after a successful sign-in, next is followed
// only to a cleaned path on this site.
func TestLoginNextStaysOnSite(t *testing.T) {
	e := newEnv(t)
	cases := []struct{ next, want string }{
		{"/turns", "/turns"},
		{"/turns?status=not_found&page=2", "/turns?status=not_found&page=2"},
		{"/golden/../stale", "/stale"},
		{"/./\\evil.example", "/"},
		{"/\t/evil.example", "/"},
		{"//evil.example", "/"},
		{"/\\evil.example", "/"},
		{"\\\\evil.example", "/"},
		{"/%2F%2Fevil.example", "/evil.example"},
		{"/\n/evil.example", "/"},
		{"/ /evil.example", "/"},
		{"https://evil.example/", "/"},
		{"/\u00a0/evil.example", "/"},
		{"/.//evil.example", "/evil.example"},
		{"///evil.example", "/evil.example"},
		{"javascript:alert(1)", "/"},
	}
	for i, tc := range cases {
		t.Run(tc.next, func(t *testing.T) {
			w := e.signIn("192.0.2."+strconv.Itoa(i+1)+":1", "alice", testPassword, tc.next)
			if w.Code != http.StatusSeeOther {
				t.Fatalf("sign-in = %d", w.Code)
			}
			loc := w.Header().Get("Location")
			if loc != tc.want {
				t.Errorf("next=%q redirects to %q, want %q", tc.next, loc, tc.want)
			}
			// Resolved the way a browser resolves it, it stays here.
			base, _ := url.Parse("http://docent.test/login")
			if u, err := base.Parse(loc); err != nil || u.Host != "docent.test" {
				t.Errorf("next=%q: Location %q leaves the site (%v)", tc.next, loc, u)
			}
		})
	}
}

// TestUnknownUserCostsAsMuchAsKnown: a wrong password for an unknown
// user takes as long as for a known one (no user enumeration by timing).
func TestUnknownUserCostsAsMuchAsKnown(t *testing.T) {
	e := newEnv(t, withSlowAdmin(t))
	if c, err := bcrypt.Cost(e.console.h.auth.dummy); err != nil || c != slowHashCost {
		t.Fatalf("the unknown-user hash costs %d (%v), the admin's %d", c, err, slowHashCost)
	}
	// The fastest of alternating tries (load only slows a try down): an
	// unknown user answered without a hash comparison would take a
	// thousandth of a known one's.
	var known, unknown time.Duration
	for i := range 5 {
		for k, u := range []struct {
			name string
			best *time.Duration
		}{{"alice", &known}, {"mallory", &unknown}} {
			start := time.Now()
			if w := e.signIn("192.0.2."+strconv.Itoa(i*2+k)+":1", u.name, "wrong", ""); w.Code != http.StatusUnauthorized {
				t.Fatalf("%s: %d", u.name, w.Code)
			}
			if d := time.Since(start); *u.best == 0 || d < *u.best {
				*u.best = d
			}
		}
	}
	if ratio := float64(unknown) / float64(known); ratio < 0.25 || ratio > 4 {
		t.Errorf("wrong password: known user %v, unknown user %v; want the same cost", known, unknown)
	}
}

// TestTrustedHeaderOnlyFromProxies: the header signs in only a request
// whose peer is a trusted proxy; from anywhere else it is ignored.
func TestTrustedHeaderOnlyFromProxies(t *testing.T) {
	e := newEnv(t, func(o *Options) {
		o.Auth.TrustedHeader = "X-Forwarded-Email"
		o.Auth.Allowed = []string{"ops@example.com"}
		o.Auth.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32")}
	})
	for _, tc := range []struct {
		addr string
		want int
	}{
		{"10.1.2.3:5555", http.StatusOK},
		{"192.0.2.7:1", http.StatusOK},
		{"[::ffff:10.9.9.9]:1", http.StatusOK},
		{"192.0.2.8:1", http.StatusSeeOther},
		{"127.0.0.1:1", http.StatusSeeOther},
		{"[2001:db8::1]:1", http.StatusSeeOther},
	} {
		req := httptest.NewRequest(http.MethodGet, "/turns", nil)
		req.RemoteAddr = tc.addr
		req.Header.Set("X-Forwarded-Email", "ops@example.com")
		w := httptest.NewRecorder()
		e.srv.Config.Handler.ServeHTTP(w, req)
		if w.Code != tc.want {
			t.Errorf("trusted header from %s = %d, want %d", tc.addr, w.Code, tc.want)
		}
	}
	// Without proxies the header is ignored, from anywhere.
	open := newEnv(t, func(o *Options) {
		o.Auth.TrustedHeader = "X-Forwarded-Email"
		o.Auth.Allowed = []string{"ops@example.com"}
	})
	req := httptest.NewRequest(http.MethodGet, "/turns", nil)
	req.RemoteAddr = "127.0.0.1:1"
	req.Header.Set("X-Forwarded-Email", "ops@example.com")
	w := httptest.NewRecorder()
	open.srv.Config.Handler.ServeHTTP(w, req)
	if w.Code != http.StatusSeeOther {
		t.Errorf("trusted header with no proxies configured = %d, want a redirect to sign in", w.Code)
	}
}
