package console

import (
	"io"
	"net/http"
	"strconv"

	"github.com/goccy/go-yaml"

	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/templates"
)

// maxImportBytes bounds the import form's body (routes applies it).
const maxImportBytes = 4 << 20

// showGoldenImport renders the import form.
func (h *handler) showGoldenImport(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, templates.GoldenImportPage(templates.GoldenImport{Meta: h.meta(r, "Import the golden set", "golden")}))
}

// importGolden reads a golden YAML file (uploaded or pasted), validates
// it as `docent eval --golden` does, and adds it to the set or replaces it.
func (h *handler) importGolden(w http.ResponseWriter, r *http.Request) {
	text := r.PostFormValue("yaml")
	name := "pasted YAML"
	if f, hdr, err := r.FormFile("file"); err == nil {
		b, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			h.badRequest(w, r, "The file could not be read.")
			return
		}
		if len(b) > 0 {
			text, name = string(b), hdr.Filename
		}
	}
	g, err := eval.ParseGolden(name, []byte(text))
	if err != nil {
		p := templates.GoldenImport{Meta: h.meta(r, "Import the golden set", "golden"), YAML: text}
		p.Error = err.Error()
		h.renderStatus(w, r, http.StatusUnprocessableEntity, templates.GoldenImportPage(p))
		return
	}
	if err := h.store.ImportGolden(r.Context(), g.Questions, r.PostFormValue("replace") == "1"); err != nil {
		h.serverError(w, r, err)
		return
	}
	h.refreshStale(r)
	redirect(w, r, "/golden", "imported")
}

// exportGolden writes the set as YAML in the format import reads.
func (h *handler) exportGolden(w http.ResponseWriter, r *http.Request) {
	qs, err := h.store.ListGolden(r.Context())
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	b, err := yaml.Marshal(toEval(qs))
	if err != nil {
		h.serverError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/yaml; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="golden.yaml"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}
