package console

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/templates"
)

// tokenPrefix starts every API token, so that a leaked one is easy to
// recognise (and to scan for).
const tokenPrefix = "dct_"

// showTokens lists the API tokens.
func (h *handler) showTokens(w http.ResponseWriter, r *http.Request) {
	h.renderTokens(w, r, "", "")
}

func (h *handler) renderTokens(w http.ResponseWriter, r *http.Request, newToken, newName string) {
	tokens, err := h.store.ListAPITokens(r.Context())
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	var sources []string
	for _, s := range h.opts.Sources {
		sources = append(sources, s.Name)
	}
	h.render(w, r, templates.TokensListPage(templates.TokensPage{Meta: h.meta(r, "API tokens", "tokens"), Tokens: tokens,
		NewToken: newToken, NewName: newName, DefaultRate: h.opts.DefaultRate, Required: h.opts.APITokensRequired,
		Sources: sources}))
}

// createToken makes a token, stores its hash and shows it once.
func (h *handler) createToken(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimSpace(r.PostFormValue("name"))
	if name == "" {
		h.badRequest(w, r, "Name the token after who or what uses it.")
		return
	}
	rate := 0
	if s := strings.TrimSpace(r.PostFormValue("rate")); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			h.badRequest(w, r, "Requests per minute: want a whole number of at least 1.")
			return
		}
		rate = n
	}
	scope, msg := h.tokenScope(r)
	if msg != "" {
		h.badRequest(w, r, msg)
		return
	}
	token := tokenPrefix + randomToken(32)
	t := docent.APIToken{Name: name, Hash: hashKey(token), Prefix: token[:len(tokenPrefix)+6], RatePerMinute: rate,
		Scope: scope, CreatedBy: sessionOf(r.Context()).user}
	if err := h.store.CreateAPIToken(r.Context(), &t); err != nil {
		h.serverError(w, r, err)
		return
	}
	h.renderTokens(w, r, token, name)
}

// tokenScope reads the scope of a new token from the form: the ticked
// sources (each a configured one) and the labels, comma-separated. None
// of either reads everything. It returns a message for a bad value.
func (h *handler) tokenScope(r *http.Request) (docent.Scope, string) {
	var scope docent.Scope
	configured := map[string]bool{}
	for _, s := range h.opts.Sources {
		configured[s.Name] = true
	}
	for _, name := range r.PostForm["source"] {
		if !configured[name] {
			return scope, "Scope: no source is called " + strconv.Quote(name) + "."
		}
		if !slices.Contains(scope.Sources, name) {
			scope.Sources = append(scope.Sources, name)
		}
	}
	for l := range strings.SplitSeq(r.PostFormValue("labels"), ",") {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(scope.Labels, l) {
			scope.Labels = append(scope.Labels, l)
		}
	}
	return scope, ""
}

// revokeToken revokes a token: the API refuses it from now on.
func (h *handler) revokeToken(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(r)
	if !ok {
		h.renderError(w, r, http.StatusNotFound, "No such token.")
		return
	}
	if err := h.store.RevokeAPIToken(r.Context(), id); err != nil {
		h.serverError(w, r, err)
		return
	}
	redirect(w, r, "/tokens", "revoked")
}
