package console

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/docent-hq/docent/templates"
)

// csp allows only the console's own files: no inline script or style,
// no framing.
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"

// securityHeaders sets the headers every response carries.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
		next.ServeHTTP(w, r)
	})
}

// requireSession lets a request through with a session: an existing one,
// or a new one for auth: none or a trusted header. Otherwise it is
// redirected to the login page, a POST without running its action. A
// POST must also carry the session's CSRF token.
func (h *handler) requireSession(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := h.auth.session(r)
		if email, ok := h.auth.trustedUser(r); email != "" && (s == nil || s.user != email) {
			switch {
			case ok:
				s = h.auth.newSession(w, r, email)
				s.viaHeader = true
			case s != nil && s.viaHeader:
				// The proxy now vouches for someone not allowed: the
				// earlier user's session does not carry over to them.
				s = nil
			}
		}
		if s == nil && h.opts.Auth.Open {
			s = h.auth.newSession(w, r, "admin")
		}
		if s == nil {
			// A GET comes back to itself after signing in; a form posted
			// without a session (it expired) does nothing and comes back
			// to the page it was posted from.
			next := r.URL.RequestURI()
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				next = "/"
				if ref, err := url.Parse(r.Referer()); err == nil && ref.Host == r.Host {
					next = safeNext(ref.RequestURI())
				}
			}
			http.Redirect(w, r, "/login?next="+url.QueryEscape(next), http.StatusSeeOther)
			return
		}
		if r.Method == http.MethodPost && !validCSRF(r, s) {
			h.renderError(w, r, http.StatusForbidden, "The form expired or did not come from this console. Reload the page and try again.")
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		ctx := context.WithValue(r.Context(), sessionKey{}, s)
		ctx = templates.WithCSRF(ctx, s.csrf)
		next(w, r.WithContext(ctx))
	})
}

// meta is the layout data for the request's session.
func (h *handler) meta(r *http.Request, title, nav string) templates.Meta {
	s := sessionOf(r.Context())
	return templates.Meta{Title: title, Nav: nav, User: s.user, CSRF: s.csrf,
		Flash: flashes[r.URL.Query().Get("done")]}
}

// maxFormBytes bounds a console form's body (the golden import has its
// own, larger bound).
const maxFormBytes = 1 << 20

// limitForm bounds a POST's body at n bytes and parses its form before
// anything reads it (the session's CSRF check does, and the sign-in form
// needs no session), so a body over n is a 413, and an uploaded file is
// held in memory within n, never spooled to a temporary file.
func (h *handler) limitForm(n int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, n)
		// ParseMultipartForm drops ParseForm's error for a form that is
		// not multipart, so the URL-encoded body is parsed first.
		err := r.ParseForm()
		if err == nil {
			if err = r.ParseMultipartForm(n); errors.Is(err, http.ErrNotMultipart) {
				err = nil
			}
		}
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			h.renderError(w, r, http.StatusRequestEntityTooLarge, "The form is too large.")
			return
		case err != nil:
			h.badRequest(w, r, "The form could not be read.")
			return
		}
		next.ServeHTTP(w, r)
	})
}
