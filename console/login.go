package console

import (
	"crypto/subtle"
	"log/slog"
	"net/http"

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
	h.renderStatus(w, r, status, templates.Login(templates.LoginPage{
		CSRF: token, User: user, Error: msg, Next: safeNext(next), Demo: h.opts.Auth.Demo}))
}

// login checks the password, throttling repeated failures per address
// and per user, and starts a session.
func (h *handler) login(w http.ResponseWriter, r *http.Request) {
	user := r.PostFormValue("user")
	c, err := r.Cookie(loginCookie)
	if err != nil || c.Value == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostFormValue("csrf"))) != 1 {
		h.renderLogin(w, r, http.StatusForbidden, user, "The sign-in form expired. Try again.")
		return
	}
	keys := []string{"ip:" + clientIP(r), "user:" + user}
	if h.auth.throttled(keys...) {
		h.log.WarnContext(r.Context(), "console: login throttled", slog.String("user", user), slog.String("ip", clientIP(r)))
		w.Header().Set("Retry-After", "900")
		h.renderLogin(w, r, http.StatusTooManyRequests, user, "Too many failed sign-ins. Wait a few minutes and try again.")
		return
	}
	if !h.auth.check(user, r.PostFormValue("password")) {
		h.auth.fail(keys...)
		h.log.InfoContext(r.Context(), "console: login failed", slog.String("user", user), slog.String("ip", clientIP(r)))
		h.renderLogin(w, r, http.StatusUnauthorized, user, "Wrong user or password.")
		return
	}
	h.auth.succeed(keys...)
	h.auth.newSession(w, r, user)
	http.SetCookie(w, h.auth.cookie(r, loginCookie, "", -1))
	h.log.InfoContext(r.Context(), "console: signed in", slog.String("user", user))
	http.Redirect(w, r, safeNext(r.PostFormValue("next")), http.StatusSeeOther)
}

// logout ends the session.
func (h *handler) logout(w http.ResponseWriter, r *http.Request) {
	h.auth.end(w, r)
	redirect(w, r, "/login", "")
}
