package console

import (
	"net/http"

	"github.com/docent-hq/docent/static"
)

// routes lists every console route. Pages need a session; POSTs also
// need the session's CSRF token, and their bodies are bounded. Anything
// else goes to next.
func (h *handler) routes(next http.Handler) http.Handler {
	mux := http.NewServeMux()
	page := func(pattern string, fn http.HandlerFunc) {
		mux.Handle(pattern, h.limitForm(maxFormBytes, h.requireSession(fn)))
	}

	mux.Handle("GET "+static.Prefix, static.Handler())
	// Browsers ask for /favicon.ico on pages that name no icon.
	mux.Handle("GET /favicon.ico", http.RedirectHandler(static.URL("favicon.svg"), http.StatusMovedPermanently))
	mux.HandleFunc("GET /login", h.showLogin)
	mux.Handle("POST /login", h.limitForm(maxFormBytes, http.HandlerFunc(h.login)))
	page("POST /logout", h.logout)

	page("GET /{$}", h.showOverview)

	page("GET /turns", h.showTurnList)
	page("GET /turns/{id}", h.showTurn)

	page("GET /misses", h.showMisses)
	page("GET /misses.csv", h.exportMisses)
	page("GET /gaps", h.showGaps)
	page("GET /gaps.csv", h.exportGaps)
	page("POST /misses/{id}/review", h.reviewMiss)
	page("POST /misses/{id}/assign", h.assignMiss)

	page("GET /golden", h.showGolden)
	page("GET /golden/new", h.showGoldenNew)
	page("POST /golden", h.createGolden)
	page("POST /golden/find", h.findGolden)
	page("GET /golden/q/{id}", h.showGoldenEdit)
	page("POST /golden/q/{id}", h.updateGolden)
	page("POST /golden/q/{id}/delete", h.deleteGolden)
	page("GET /golden/import", h.showGoldenImport)
	mux.Handle("POST /golden/import", h.limitForm(maxImportBytes, h.requireSession(h.importGolden)))
	page("GET /golden/export.yaml", h.exportGolden)
	page("POST /golden/runs", h.runGolden)
	page("GET /golden/runs/{id}", h.showGoldenRun)
	page("POST /golden/runs/{id}/apply", h.applyCalibration)
	page("POST /synonyms", h.addSynonym)
	page("GET /golden/diff", h.showGoldenDiff)

	page("GET /stale", h.showStale)
	page("POST /stale/ack", h.ackStale)
	page("POST /stale/unack", h.unackStale)

	page("GET /sources", h.showSources)
	page("GET /sources/{name}/documents", h.showSourceDocuments)
	page("GET /document", h.showDocument)
	page("POST /sources/{name}/sync", h.syncSource)

	page("GET /playground", h.showPlayground)
	page("POST /playground", h.askPlayground)

	page("GET /tokens", h.showTokens)
	page("POST /tokens", h.createToken)
	page("POST /tokens/{id}/revoke", h.revokeToken)

	mux.Handle("/", next)
	return mux
}

// Paths lists a GET path of every console page, for tests that check
// each one needs a session.
var Paths = []string{
	"/", "/turns", "/turns/1", "/misses", "/misses.csv", "/gaps", "/gaps.csv", "/golden", "/golden/new", "/golden/q/x", "/golden/import",
	"/golden/export.yaml", "/golden/runs/1", "/golden/diff?a=1&b=2", "/stale", "/sources", "/sources/handbook/documents",
	"/document?id=handbook:index.md", "/playground", "/tokens",
}

// PostPaths lists every state-changing console route (but /login), for
// tests that check each one needs a session and a CSRF token.
var PostPaths = []string{
	"/logout", "/misses/1/review", "/misses/1/assign", "/golden", "/golden/find", "/golden/q/x", "/golden/q/x/delete",
	"/golden/import", "/golden/runs", "/golden/runs/1/apply", "/synonyms", "/stale/ack", "/stale/unack", "/sources/handbook/sync", "/playground",
	"/tokens", "/tokens/1/revoke",
}
