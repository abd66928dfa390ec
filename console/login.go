package console

import (
	"crypto/subtle"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/docent-hq/docent/templates"
)

// showLogin renders the sign-in form with a fresh login CSRF token (a
// cookie and the same value in the form).
func (h *handler) showLogin(w http.ResponseWriter, r *http.Request) {
	if s := h.auth.session(r); s != nil {
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	h.renderLogin(w, r, http.StatusOK, "", "")
}

func (h *handler) renderLogin(w http.ResponseWriter, r *http.Request, status int, user, msg string) {
	token := randomToken(24)
	http.SetCookie(w, h.auth.cookie(r, loginCookie, token, 3600))
	w.Header().Set("Cache-Control", "no-store")
	next := r.URL.Query().Get("next")
	if r.Method == http.MethodPost {
		next = r.PostFormValue("next")
	}
	if len(user) > MaxUserBytes {
		user = ""
	}
	h.renderStatus(w, r, status, templates.Login(templates.LoginPage{
		CSRF: token, User: user, Error: msg, Next: safeNext(next), Demo: h.opts.Auth.Demo}))
}

// login checks the password and starts a session. The attempt is
// counted against the address and the user name before the check (see
// auth.begin), so concurrent wrong passwords are throttled like
// sequential ones.
func (h *handler) login(w http.ResponseWriter, r *http.Request) {
	user := r.PostFormValue("user")
	c, err := r.Cookie(loginCookie)
	if err != nil || c.Value == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostFormValue("csrf"))) != 1 {
		h.renderLogin(w, r, http.StatusForbidden, user, "The sign-in form expired. Try again.")
		return
	}
	ip := clientIP(r)
	keys := []string{ipKey(ip)}
	if len(user) <= MaxUserBytes {
		keys = append(keys, userKey(user))
	}
	done, why, first := h.auth.begin(keys...)
	switch why {
	case throttled:
		if first {
			h.log.WarnContext(r.Context(), "console: login throttled", slog.String("user", logUser(user)), slog.String("ip", ip))
		}
		w.Header().Set("Retry-After", "900")
		h.renderLogin(w, r, http.StatusTooManyRequests, user, "Too many failed sign-ins. Wait a few minutes and try again.")
		return
	case busy:
		w.Header().Set("Retry-After", "5")
		h.renderLogin(w, r, http.StatusTooManyRequests, user, "Too many sign-ins at once. Wait a moment and try again.")
		return
	}
	// No admin has a name over MaxUserBytes (config refuses one): that
	// attempt counts against the address, and nothing is checked. The
	// check's slot is free before the answer goes out, so that a client's
	// next attempt does not find it taken.
	ok := len(user) <= MaxUserBytes && h.auth.check(user, r.PostFormValue("password"))
	done()
	if !ok {
		h.log.InfoContext(r.Context(), "console: login failed", slog.String("user", logUser(user)), slog.String("ip", ip))
		h.renderLogin(w, r, http.StatusUnauthorized, user, "Wrong user or password.")
		return
	}
	h.auth.succeed(keys...)
	h.auth.newSession(w, r, user)
	http.SetCookie(w, h.auth.cookie(r, loginCookie, "", -1))
	h.log.InfoContext(r.Context(), "console: signed in", slog.String("user", user))
	http.Redirect(w, r, safeNext(r.PostFormValue("next")), http.StatusSeeOther)
}

// logUser is a typed user name as the log shows it: at most 64 bytes,
// with how long it was when longer.
func logUser(user string) string {
	const keep = 64
	if len(user) <= keep {
		return user
	}
	cut := keep
	for cut > 0 && !utf8.RuneStart(user[cut]) {
		cut--
	}
	return user[:cut] + "… (" + strconv.Itoa(len(user)) + " bytes)"
}

// logout ends the session.
func (h *handler) logout(w http.ResponseWriter, r *http.Request) {
	h.auth.end(w, r)
	redirect(w, r, "/login", "")
}

// safeNext keeps a post-login redirect on this site: a path on this
// host, cleaned, with its query. Anything else — an absolute or
// scheme-relative URL, a backslash (which browsers read as a slash), a
// control or space character (which browsers drop) — gives "/".
func safeNext(next string) string {
	if next == "" || len(next) > 4096 || !strings.HasPrefix(next, "/") {
		return "/"
	}
	for _, c := range next {
		if c == '\\' || unicode.IsControl(c) || unicode.IsSpace(c) || c == utf8.RuneError {
			return "/"
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" || !strings.HasPrefix(u.Path, "/") {
		return "/"
	}
	clean := path.Clean(u.Path)
	if strings.HasPrefix(clean, "//") || strings.ContainsAny(clean, "\\") {
		return "/"
	}
	out := (&url.URL{Path: clean, RawQuery: u.RawQuery}).String()
	if !strings.HasPrefix(out, "/") || strings.HasPrefix(out, "//") {
		return "/"
	}
	return out
}
