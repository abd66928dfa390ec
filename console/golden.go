package console

import (
	"context"
	"strings"

	"github.com/docent-hq/docent/eval"
	"github.com/docent-hq/docent/store"
	"github.com/docent-hq/docent/templates"
)

// toEval converts stored golden questions to an eval set.
func toEval(qs []store.GoldenQuestion) *eval.Golden {
	g := &eval.Golden{}
	for _, q := range qs {
		eq := eval.GoldenQuestion{ID: q.ID, Question: q.Question, Kind: eval.Kind(q.Kind), Facts: q.Facts,
			Covered: q.Covered, Uncovered: q.Uncovered, Source: q.Source}
		for _, e := range q.Expect {
			eq.Expect = append(eq.Expect, eval.Expect{Doc: e.Doc, Section: e.Section})
		}
		g.Questions = append(g.Questions, eq)
	}
	return g
}

// fromEval converts an eval set's questions for the store.
func fromEval(g *eval.Golden) []store.GoldenQuestion {
	var out []store.GoldenQuestion
	for _, q := range g.Questions {
		sq := store.GoldenQuestion{ID: q.ID, Question: q.Question, Kind: string(q.Kind), Facts: q.Facts,
			Covered: q.Covered, Uncovered: q.Uncovered, Source: q.Source}
		for _, e := range q.Expect {
			sq.Expect = append(sq.Expect, store.GoldenExpect{Doc: e.Doc, Section: e.Section})
		}
		out = append(out, sq)
	}
	return out
}

// formFromGolden fills the edit form from a stored question.
func formFromGolden(q store.GoldenQuestion) templates.GoldenForm {
	f := templates.GoldenForm{Edit: true, ID: q.ID, Question: q.Question, Kind: q.Kind, Facts: strings.Join(q.Facts, "\n"),
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
func parseExpect(text string) []store.GoldenExpect {
	var out []store.GoldenExpect
	for _, line := range strings.Split(text, "\n") {
		doc, section, _ := strings.Cut(line, "|")
		doc, section = strings.TrimSpace(doc), strings.TrimSpace(section)
		if doc != "" {
			out = append(out, store.GoldenExpect{Doc: doc, Section: section})
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
func goldenFromForm(f templates.GoldenForm) (store.GoldenQuestion, map[string]string) {
	q := store.GoldenQuestion{ID: strings.TrimSpace(f.ID), Question: strings.TrimSpace(f.Question), Kind: f.Kind,
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
	known := false
	for _, k := range eval.Kinds {
		known = known || string(k) == q.Kind
	}
	switch {
	case !known:
		errs["kind"] = "Pick a kind."
	case q.Kind == string(eval.KindUnanswerable) && len(q.Expect) > 0:
		errs["expect"] = "An unanswerable question expects no document."
	case q.Kind != string(eval.KindUnanswerable) && len(q.Expect) == 0:
		errs["expect"] = "Pick the document that answers it (or make it unanswerable)."
	case q.Kind == string(eval.KindUnanswerable) && len(q.Facts) > 0:
		errs["expect"] = "An unanswerable question lists no facts."
	}
	if len(errs) > 0 {
		return q, errs
	}
	if err := toEval([]store.GoldenQuestion{q}).Validate(); err != nil {
		errs["question"] = err.Error()
	}
	return q, errs
}

// ImportGolden writes a parsed golden set to the store (replacing it, or
// adding and updating by ID): how `docent serve` seeds the demo's set
// from the bundled handbook.
func ImportGolden(ctx context.Context, st *store.DB, g *eval.Golden, replace bool) error {
	return st.ImportGolden(ctx, fromEval(g), replace)
}
