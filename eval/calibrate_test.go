package eval

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
)

// calRows makes rows of two sets: an answerable row is right when its
// passage covers more than half the question; unanswerable rows cover
// little and miss a detail.
func calRows() []CalibrationRow {
	var rows []CalibrationRow
	for _, set := range []string{"a", "b"} {
		for i := 0; i < 20; i++ {
			cov := float64(i) / 20
			rows = append(rows, CalibrationRow{Set: set, ID: set + "-ans", Answerable: true, Correct: cov > 0.5,
				Features: map[string]float64{"coverage": cov, "page": cov}})
		}
		for i := 0; i < 10; i++ {
			rows = append(rows, CalibrationRow{Set: set, ID: set + "-un", Answerable: false,
				Features: map[string]float64{"coverage": 0.3 + float64(i)/50, "missing": 0.5, "page": 0.4}})
		}
	}
	return rows
}

func TestFitDecision(t *testing.T) {
	rows := calRows()
	cur := answer.Logistic{Bias: -100, Weights: map[string]float64{}, AnswerAt: 0.5} // never answers
	f := FitDecision(rows, DefaultMinDeclined, cur)
	if !f.Feasible {
		t.Fatalf("fit infeasible: %+v", f)
	}
	if err := f.Rule.Validate(); err != nil {
		t.Fatalf("fitted rule invalid: %v", err)
	}
	if f.Rule.Weights["coverage"] <= 0 || f.Rule.Weights["missing"] >= 0 {
		t.Errorf("weights %v: want coverage to raise and a missing detail to lower the probability", f.Rule.Weights)
	}
	if len(f.BySet) != 2 || len(f.Current) != 2 {
		t.Fatalf("outcomes by set %d, current %d; want 2 each", len(f.BySet), len(f.Current))
	}
	for _, o := range f.BySet {
		if o.DeclinedRate() < DefaultMinDeclined {
			t.Errorf("set %s declines %.2f, want >= %.2f", o.Set, o.DeclinedRate(), DefaultMinDeclined)
		}
		if o.AnsweredCorrect < 8 || o.AnsweredWrong > 2 {
			t.Errorf("set %s: %d correct, %d wrong; want most of the 9 right rows answered, few wrong", o.Set, o.AnsweredCorrect, o.AnsweredWrong)
		}
	}
	if f.Current[0].AnsweredCorrect != 0 || f.Current[0].Declined != 10 {
		t.Errorf("current rule outcome %+v, want nothing answered", f.Current[0])
	}
	if f.Rule.NotFoundAt > f.Rule.AnswerAt {
		t.Errorf("not_found_at %v above answer_at %v", f.Rule.NotFoundAt, f.Rule.AnswerAt)
	}
	if f.All.NotFound > 2 {
		t.Errorf("%d answerable rows not found, want at most 5%% (2)", f.All.NotFound)
	}
	var b bytes.Buffer
	if err := f.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"answerer:\n  decision:\n    bias: ", "      coverage: ", "    answer_at: ", "    not_found_at: ", "fitted", "in force"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, b.String())
		}
	}
}

func TestCalibrationRowsRoundTrip(t *testing.T) {
	rep := GoldenReport{Rows: []GoldenRow{
		{ID: "q1", Kind: docent.KindParaphrase, Status: docent.StatusAnswered, FirstCitedOK: true, FactsOK: true, Facts: 1,
			Features: map[string]float64{"coverage": 0.8}},
		{ID: "q2", Kind: docent.KindParaphrase, Status: docent.StatusAnswered, FirstCitedOK: true, FactsOK: true, // no facts, wrong section
			Features: map[string]float64{"coverage": 0.6}},
		{ID: "q3", Kind: docent.KindUnanswerable, Status: docent.StatusAnswered, Features: map[string]float64{"coverage": 0.4}},
		{ID: "q4", Kind: docent.KindParaphrase, Status: docent.StatusError},
		{ID: "q5", Kind: docent.KindParaphrase, Status: docent.StatusSmallTalk},
	}}
	rows := CalibrationRows("set", "corpus", rep)
	if len(rows) != 3 || !rows[0].Correct || rows[1].Correct || rows[2].Answerable {
		t.Fatalf("rows = %+v", rows)
	}
	path := filepath.Join(t.TempDir(), "rows.jsonl")
	var b bytes.Buffer
	if err := WriteRows(&b, rows); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := ReadRows(path)
	if err != nil || len(back) != 3 || back[0].Features["coverage"] != 0.8 || back[0].Set != "set" {
		t.Fatalf("ReadRows = %+v, %v", back, err)
	}
	if err := os.WriteFile(path, []byte("{not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRows(path); err == nil || !strings.Contains(err.Error(), "rows.jsonl:1") {
		t.Errorf("ReadRows(bad) = %v, want the file and line", err)
	}
}

// TestSeparations: the AUC of each feature and of the rule's score between
// a set's answerable and unanswerable rows; a set with one kind only has
// none, and "all" is there when several sets have both.
func TestSeparations(t *testing.T) {
	row := func(set string, answerable bool, cov, missing float64) CalibrationRow {
		return CalibrationRow{Set: set, Answerable: answerable, Features: map[string]float64{"coverage": cov, "missing": missing}}
	}
	rows := []CalibrationRow{
		row("a", true, 0.9, 0), row("a", true, 0.5, 0), row("a", false, 0.5, 1), row("a", false, 0.1, 1),
		row("b", true, 0.7, 0),
		row("c", true, 0.2, 1), row("c", false, 0.8, 0),
	}
	scores := []float64{4, 3, 2, 1, 9, 1, 1}
	got := separations(rows, scores, []string{"a", "b", "c"})
	if len(got) != 3 || got[0].Set != "a" || got[1].Set != "c" || got[2].Set != "" {
		t.Fatalf("separations for sets %v, want a, c and all", got)
	}
	tests := []struct {
		sep                     Separation
		rule, coverage, missing float64
	}{
		// a: coverage 0.9 and 0.5 against 0.5 and 0.1 (one tie); the
		// rule's scores separate; missing only on unanswerable rows.
		{got[0], 1, 0.875, 0},
		// c: the one answerable row is below the unanswerable one; the
		// rule ties.
		{got[1], 0.5, 0, 1},
		// all: 4 answerable (0.9, 0.5, 0.7, 0.2) against 3 (0.5, 0.1, 0.8).
		{got[2], 0.8333, 0.625, 0.2917},
	}
	for _, tt := range tests {
		if tt.sep.Rule != tt.rule || tt.sep.Features["coverage"] != tt.coverage || tt.sep.Features["missing"] != tt.missing {
			t.Errorf("set %q: rule %v coverage %v missing %v; want %v %v %v", tt.sep.Set,
				tt.sep.Rule, tt.sep.Features["coverage"], tt.sep.Features["missing"], tt.rule, tt.coverage, tt.missing)
		}
	}
	var b bytes.Buffer
	if err := (Fit{Separation: got}).writeSeparation(&b); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"AUC", "fitted rule", "coverage", "0.88", "all"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("separation table lacks %q:\n%s", s, b.String())
		}
	}
}
