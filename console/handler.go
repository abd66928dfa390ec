package console

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"

	"github.com/a-h/templ"

	"github.com/docent-hq/docent/store"
	"github.com/docent-hq/docent/templates"
)

// flashes are the notices a redirect after an action may ask for
// (?done=CODE); only these are shown, so a link cannot put words on a page.
var flashes = map[string]string{
	"reviewed":    "Marked reviewed.",
	"reopened":    "Back in the inbox.",
	"assigned":    "Assigned.",
	"golden":      "Saved to the golden set.",
	"golden-miss": "Saved to the golden set; the miss it came from is marked reviewed.",
	"applied":     "Calibration applied: it decides the questions asked from now on.",
	"synonym":     "Synonym added: questions asked from now on read it.",
	"deleted":     "Deleted from the golden set.",
	"imported":    "Golden set imported.",
	"run":         "Golden run started.",
	"acked":       "Acknowledged.",
	"unacked":     "Acknowledgement withdrawn.",
	"sync":        "Sync queued.",
	"revoked":     "Token revoked.",
	"signed-out":  "Signed out.",
}

// redirect sends the browser to path after an action, with a notice.
func redirect(w http.ResponseWriter, r *http.Request, path, done string) {
	if done != "" {
		u, _ := url.Parse(path)
		q := u.Query()
		q.Set("done", done)
		u.RawQuery = q.Encode()
		path = u.String()
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
}

// render writes a component with status 200.
func (h *handler) render(w http.ResponseWriter, r *http.Request, c templ.Component) {
	h.renderStatus(w, r, http.StatusOK, c)
}

func (h *handler) renderStatus(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := c.Render(r.Context(), w); err != nil {
		h.log.ErrorContext(r.Context(), "console: render", slog.String("path", r.URL.Path), slog.Any("error", err))
	}
}

// renderError shows a status page with a message that is safe to show.
func (h *handler) renderError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	h.renderStatus(w, r, status, templates.Error(templates.ErrorPage{
		Meta: h.meta(r, http.StatusText(status), ""), Status: status, Message: msg}))
}

// serverError logs err and shows "Internal error"; a store ErrNotFound
// is a 404 instead.
func (h *handler) serverError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, store.ErrNotFound) {
		h.renderError(w, r, http.StatusNotFound, "Not found.")
		return
	}
	h.log.ErrorContext(r.Context(), "console: request failed", slog.String("method", r.Method),
		slog.String("path", r.URL.Path), slog.Any("error", err))
	h.renderError(w, r, http.StatusInternalServerError, "Internal error. The details are in the server log.")
}

// badRequest shows a 400 with msg.
func (h *handler) badRequest(w http.ResponseWriter, r *http.Request, msg string) {
	h.renderError(w, r, http.StatusBadRequest, msg)
}

// pathID parses the {id} path value.
func pathID(r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	return id, err == nil && id > 0
}

// page parses ?page= (from 1).
func page(r *http.Request) int {
	p, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || p < 1 {
		return 1
	}
	return p
}

// pager builds the links around page p of total items, perPage each.
func pager(r *http.Request, p, total, perPage int) templates.Pager {
	pages := max((total+perPage-1)/perPage, 1)
	link := func(n int) string {
		q := r.URL.Query()
		q.Del("done")
		q.Set("page", strconv.Itoa(n))
		return r.URL.Path + "?" + q.Encode()
	}
	pg := templates.Pager{Page: p, Pages: pages}
	if p > 1 {
		pg.PrevURL = link(p - 1)
	}
	if p < pages {
		pg.NextURL = link(p + 1)
	}
	return pg
}

const perPage = 50
