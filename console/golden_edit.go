package console

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/docent-hq/docent/store"
	"github.com/docent-hq/docent/templates"
)

// showGoldenNew renders the add form, from a turn (?turn=) with its
// candidate documents to pick from, plus any documents found by ?docq=.
func (h *handler) showGoldenNew(w http.ResponseWriter, r *http.Request) {
	f := templates.GoldenForm{Kind: "paraphrase"}
	if id, err := strconv.ParseInt(r.URL.Query().Get("turn"), 10, 64); err == nil && id > 0 {
		turn, err := h.store.Turn(r.Context(), id)
		if err != nil {
			h.serverError(w, r, err)
			return
		}
		f = goldenFormFromTurn(turn)
	}
	if err := h.findDocs(r, &f, r.URL.Query().Get("docq")); err != nil {
		h.serverError(w, r, err)
		return
	}
	f.Meta = h.meta(r, "Add a golden question", "golden")
	h.render(w, r, templates.GoldenFormPage(f))
}

// findDocs puts the documents matching q (title or path) first among the
// form's choices.
func (h *handler) findDocs(r *http.Request, f *templates.GoldenForm, q string) error {
	f.DocQuery = strings.TrimSpace(q)
	if f.DocQuery == "" {
		return nil
	}
	docs, err := h.store.SearchDocuments(r.Context(), f.DocQuery, 20)
	if err != nil {
		return err
	}
	found := make([]templates.DocChoice, 0, len(docs))
	for _, d := range docs {
		found = append(found, templates.DocChoice{Path: d.Path, Title: d.Title, Rank: len(found) + 1})
	}
	f.Candidates = found
	return nil
}

// findGolden is the form's "Find the expected document": it searches the
// documents and shows the form again with everything typed kept (the
// id, question, kind, expected documents and facts) and the matches to
// pick from. Nothing is saved.
func (h *handler) findGolden(w http.ResponseWriter, r *http.Request) {
	f := formOf(r)
	title := "Add a golden question"
	if id := r.PostFormValue("edit"); id != "" {
		if _, err := h.store.Golden(r.Context(), id); err != nil {
			h.serverError(w, r, err)
			return
		}
		f.Edit, f.ID, title = true, id, "Edit "+id
	}
	if err := h.findDocs(r, &f, r.PostFormValue("docq")); err != nil {
		h.serverError(w, r, err)
		return
	}
	f.Meta = h.meta(r, title, "golden")
	h.render(w, r, templates.GoldenFormPage(f))
}

// formOf reads the golden form from a POST; a picked candidate is added
// to the expected documents.
func formOf(r *http.Request) templates.GoldenForm {
	f := templates.GoldenForm{ID: r.PostFormValue("id"), Question: r.PostFormValue("question"), Kind: r.PostFormValue("kind"),
		Expect: r.PostFormValue("expect"), Facts: r.PostFormValue("facts"), Covered: r.PostFormValue("covered"),
		Uncovered: r.PostFormValue("uncovered"), Source: r.PostFormValue("source")}
	f.FromTurn, _ = strconv.ParseInt(r.PostFormValue("from_turn"), 10, 64)
	if pick := strings.TrimSpace(r.PostFormValue("pick")); pick != "" {
		f.Expect = strings.TrimSpace(pick + "\n" + f.Expect)
	}
	return f
}

// createGolden adds a question; an ID already in the set is refused.
func (h *handler) createGolden(w http.ResponseWriter, r *http.Request) {
	f := formOf(r)
	q, errs := goldenFromForm(f)
	if len(errs) == 0 {
		_, err := h.store.Golden(r.Context(), q.ID)
		switch {
		case err == nil:
			errs["id"] = "A question with this id is already in the set."
		case !errors.Is(err, store.ErrNotFound):
			h.serverError(w, r, err)
			return
		}
	}
	if len(errs) > 0 {
		f.Errors, f.Meta = errs, h.meta(r, "Add a golden question", "golden")
		h.renderStatus(w, r, http.StatusUnprocessableEntity, templates.GoldenFormPage(f))
		return
	}
	if err := h.store.PutGolden(r.Context(), q); err != nil {
		h.serverError(w, r, err)
		return
	}
	h.refreshStale(r)
	if q.FromTurn != 0 {
		// The miss it was made from is dealt with: out of the open inbox.
		if err := h.store.SetReviewed(r.Context(), q.FromTurn, sessionOf(r.Context()).user, true); err != nil && !errors.Is(err, store.ErrNotFound) {
			h.serverError(w, r, err)
			return
		}
		redirect(w, r, "/golden", "golden-miss")
		return
	}
	redirect(w, r, "/golden", "golden")
}

// showGoldenEdit renders the edit form of one question.
func (h *handler) showGoldenEdit(w http.ResponseWriter, r *http.Request) {
	q, err := h.store.Golden(r.Context(), r.PathValue("id"))
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	f := formFromGolden(q)
	f.Meta = h.meta(r, "Edit "+q.ID, "golden")
	h.render(w, r, templates.GoldenFormPage(f))
}

// updateGolden saves an edited question (its ID is fixed).
func (h *handler) updateGolden(w http.ResponseWriter, r *http.Request) {
	old, err := h.store.Golden(r.Context(), r.PathValue("id"))
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	f := formOf(r)
	f.ID, f.Edit, f.FromTurn = old.ID, true, old.FromTurn
	q, errs := goldenFromForm(f)
	if len(errs) > 0 {
		f.Errors, f.Meta = errs, h.meta(r, "Edit "+old.ID, "golden")
		h.renderStatus(w, r, http.StatusUnprocessableEntity, templates.GoldenFormPage(f))
		return
	}
	if err := h.store.PutGolden(r.Context(), q); err != nil {
		h.serverError(w, r, err)
		return
	}
	h.refreshStale(r)
	redirect(w, r, "/golden", "golden")
}

// deleteGolden removes a question.
func (h *handler) deleteGolden(w http.ResponseWriter, r *http.Request) {
	if err := h.store.DeleteGolden(r.Context(), r.PathValue("id")); err != nil {
		h.serverError(w, r, err)
		return
	}
	h.refreshStale(r)
	redirect(w, r, "/golden", "deleted")
}
