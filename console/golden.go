package console

import (
	"context"
	"strings"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/store"
	"github.com/docent-hq/docent/templates"
)

// toEval is the stored golden questions as an eval set (the two hold
// the one docent.GoldenQuestion).
func toEval(qs []docent.GoldenQuestion) *eval.Golden { return &eval.Golden{Questions: qs} }

// formFromGolden fills the edit form from a stored question.
func formFromGolden(q docent.GoldenQuestion) templates.GoldenForm {
	f := templates.GoldenForm{Edit: true, ID: q.ID, Question: q.Question, Kind: string(q.Kind), Facts: strings.Join(q.Facts, "\n"),
		Covered: q.Covered, Uncovered: q.Uncovered, Source: q.Source, FromTurn: q.FromTurn}
	var lines []string
	for _, e := range q.Expect {
		if e.Section != "" {
			lines = append(lines, e.Doc+" | "+e.Section)
		} else {
			lines = append(lines, e.Doc)
		}
	}
	f.Expect = strings.Join(lines, "\n")
	return f
}

// parseExpect reads "path | section" lines.
func parseExpect(text string) []docent.GoldenExpect {
	var out []docent.GoldenExpect
	for _, line := range strings.Split(text, "\n") {
		doc, section, _ := strings.Cut(line, "|")
		doc, section = strings.TrimSpace(doc), strings.TrimSpace(section)
		if doc != "" {
			out = append(out, docent.GoldenExpect{Doc: doc, Section: section})
		}
	}
	return out
}

// lines splits text into its non-blank trimmed lines.
func lines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// goldenFromForm builds the question a form describes and checks it as
// eval checks a golden file; errors are keyed by form field.
func goldenFromForm(f templates.GoldenForm) (docent.GoldenQuestion, map[string]string) {
	q := docent.GoldenQuestion{ID: strings.TrimSpace(f.ID), Question: strings.TrimSpace(f.Question), Kind: docent.GoldenKind(f.Kind),
		Expect: parseExpect(f.Expect), Facts: lines(f.Facts), Covered: strings.TrimSpace(f.Covered),
		Uncovered: strings.TrimSpace(f.Uncovered), Source: strings.TrimSpace(f.Source), FromTurn: f.FromTurn}
	errs := map[string]string{}
	if q.ID == "" {
		errs["id"] = "Give the question an id."
	} else if strings.ContainsAny(q.ID, "/?#% ") {
		errs["id"] = "Use letters, digits, - and _ only."
	}
	if q.Question == "" {
		errs["question"] = "Write the question."
	}
	switch {
	case !q.Kind.Known():
		errs["kind"] = "Pick a kind."
	case q.Kind == docent.KindUnanswerable && len(q.Expect) > 0:
		errs["expect"] = "An unanswerable question expects no document."
	case q.Kind != docent.KindUnanswerable && len(q.Expect) == 0:
		errs["expect"] = "Pick the document that answers it (or make it unanswerable)."
	case q.Kind == docent.KindUnanswerable && len(q.Facts) > 0:
		errs["expect"] = "An unanswerable question lists no facts."
	}
	if len(errs) > 0 {
		return q, errs
	}
	if err := toEval([]docent.GoldenQuestion{q}).Validate(); err != nil {
		errs["question"] = err.Error()
	}
	return q, errs
}

// ImportGolden writes a parsed golden set to the store (replacing it, or
// adding and updating by ID): how `docent serve` seeds the demo's set
// from the bundled handbook.
func ImportGolden(ctx context.Context, st *store.DB, g *eval.Golden, replace bool) error {
	return st.ImportGolden(ctx, g.Questions, replace)
}
