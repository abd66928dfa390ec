package console

import (
	"cmp"
	"net/http"
	"slices"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/templates"
)

// showSourceDocuments lists the live documents of one source, with their
// chunk counts, each linking to its document page.
func (h *handler) showSourceDocuments(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	known := false
	for _, s := range h.opts.Sources {
		known = known || s.Name == name
	}
	if !known {
		h.renderError(w, r, http.StatusNotFound, "No such source.")
		return
	}
	recs, err := h.store.Documents(r.Context(), name)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	docs := make([]docent.DocRecord, 0, len(recs))
	for _, d := range recs {
		docs = append(docs, d)
	}
	slices.SortFunc(docs, func(a, b docent.DocRecord) int { return cmp.Compare(a.Path, b.Path) })
	p := page(r)
	from := min((p-1)*perPage, len(docs))
	h.render(w, r, templates.SourceDocumentsPage(templates.SourceDocuments{
		Meta: h.meta(r, "Documents of "+name, "sources"), Source: name, Total: len(docs),
		Docs: docs[from:min(from+perPage, len(docs))], Pager: pager(r, p, len(docs), perPage),
	}))
}

// showDocument shows one document's record and its chunks as the index
// holds them: section path, deep link and text.
func (h *handler) showDocument(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	if id == "" {
		h.badRequest(w, r, "Which document? Add ?id=SOURCE:PATH.")
		return
	}
	rec, err := h.store.Document(r.Context(), id)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	chunks, err := h.opts.Index.Chunks(r.Context(), rec.ChunkIDs)
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	h.render(w, r, templates.DocumentPage(templates.Document{
		Meta: h.meta(r, rec.Title, "sources"), Doc: rec, Chunks: chunks, Missing: len(rec.ChunkIDs) - len(chunks),
	}))
}
