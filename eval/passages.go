package eval

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// PassageRow is one passage a calibration run scored for a question,
// labelled: the share of the question's facts it states or, for a
// question that names sections but no facts, 1 when its chunk is in an
// expected section.
type PassageRow struct {
	// Set and ID name the question.
	Set string `json:"set"`
	ID  string `json:"id"`
	// Label is in [0, 1]: how much of the answer the passage holds.
	Label float64 `json:"label"`
	// Text is the passage, and Doc and Section its chunk's place, for
	// reading a fit's mistakes.
	Text    string `json:"text,omitempty"`
	Doc     string `json:"doc,omitempty"`
	Section string `json:"section,omitempty"`
	// Features are the passage features, in the model's order.
	Features []float64 `json:"features"`
}

// LabelPassage labels a passage of q: the share of q's facts its text
// states (see missingFacts) when it is on an expected page, or, when q has no facts, 1 when docID and
// section are an expected document's expected section. ok is false when
// q has neither facts nor sections to label by.
func LabelPassage(q GoldenQuestion, text, docID string, section []string) (label float64, ok bool) {
	if len(q.Facts) > 0 {
		expected := map[string]bool{}
		for _, e := range q.Expect {
			expected[e.Doc] = true
		}
		if _, ok := expectedDoc(docID, expected); !ok {
			return 0, true // a fact stated on another page is not the answer
		}
		missing := missingFacts(q.Facts, text)
		return float64(len(q.Facts)-len(missing)) / float64(len(q.Facts)), true
	}
	if !hasSection(q) {
		return 0, false
	}
	if citesSection(q.Expect, docID, strings.Join(section, " › ")) {
		return 1, true
	}
	return 0, true
}

// passageL2 is the L2 penalty of the passage fit: weaker than the
// decision rule's, as it has many more rows.
const passageL2 = 1e-4

// FitPassages fits the passage model to rows: L2-regularised logistic
// regression of the labels on the features, each question's rows weighing
// 1 in all and each set the same; questions with no positive passage
// among their rows (the answer was not retrieved) teach nothing about
// ranking and are left out. names are the feature names, in order.
func FitPassages(rows []PassageRow, names []string) (bias float64, weights map[string]float64) {
	type key struct{ set, id string }
	pos := map[key]float64{}
	count := map[key]float64{}
	for _, r := range rows {
		k := key{r.Set, r.ID}
		pos[k] += r.Label
		count[k]++
	}
	perSet := map[string]float64{}
	for k := range count {
		if pos[k] > 0 {
			perSet[k.set]++
		}
	}
	// Within a question the passages that hold the answer weigh as much
	// as those that do not: few do, and the model is to rank them first.
	var x [][]float64
	var y, w []float64
	for _, r := range rows {
		k := key{r.Set, r.ID}
		if pos[k] == 0 || len(r.Features) != len(names) {
			continue
		}
		neg := count[k] - pos[k]
		q := 1 / perSet[k.set]
		x = append(x, r.Features, r.Features)
		y = append(y, 1, 0)
		w = append(w, q*0.5*r.Label/pos[k], q*0.5*(1-r.Label)/max(neg, 1e-9))
	}
	b, coef := logisticL2(x, y, w, passageL2)
	weights = make(map[string]float64, len(names))
	for i, n := range names {
		if i < len(coef) {
			weights[n] = round4(coef[i])
		}
	}
	return round4(b), weights
}

// WritePassageRows writes rows as JSON lines.
func WritePassageRows(w io.Writer, rows []PassageRow) error {
	enc := json.NewEncoder(w)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("eval: passage rows: %w", err)
		}
	}
	return nil
}

// ReadPassageRows reads the rows WritePassageRows wrote, from each file.
func ReadPassageRows(paths ...string) ([]PassageRow, error) {
	var rows []PassageRow
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("eval: passage rows: %w", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		n := 0
		for sc.Scan() {
			n++
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			var r PassageRow
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				f.Close()
				return nil, fmt.Errorf("eval: passage rows: %s:%d: %w", p, n, err)
			}
			rows = append(rows, r)
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("eval: passage rows: %s: %w", p, err)
		}
	}
	return rows, nil
}
