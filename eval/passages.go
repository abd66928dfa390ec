package eval

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/docent-hq/docent"
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
func LabelPassage(q docent.GoldenQuestion, text, docID string, section []string) (label float64, ok bool) {
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

// passageL2 is the L2 penalty of the passage fit.
const passageL2 = 1e-3

// FitPassages fits the passage model to rows as a ranking: a conditional
// logit (softmax over each question's passages) whose target puts each
// question's weight on its passages in proportion to their labels, each
// question weighing the same within its set and each set the same. The
// model ranks passages by σ(Σ weights·features); bias is 0 (it cancels
// within a question, and the decision rule is fitted on the probability
// afterwards). Questions with no positive passage among their rows (the
// answer was not retrieved) teach nothing about ranking and are left out.
// names are the feature names, in order.
func FitPassages(rows []PassageRow, names []string) (bias float64, weights map[string]float64) {
	type key struct{ set, id string }
	groups := map[key][]PassageRow{}
	var order []key
	for _, r := range rows {
		if len(r.Features) != len(names) {
			continue
		}
		k := key{r.Set, r.ID}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	perSet := map[string]float64{}
	var gs [][]PassageRow
	var gw []float64
	for _, k := range order {
		pos := 0.0
		for _, r := range groups[k] {
			pos += r.Label
		}
		if pos > 0 {
			perSet[k.set]++
			gs = append(gs, groups[k])
		}
	}
	for _, g := range gs {
		gw = append(gw, 1/perSet[g[0].Set])
	}
	// Standardised features (see logisticL2); the mean cancels within a
	// question, so only the scale is undone.
	var all [][]float64
	var aw []float64
	for gi, g := range gs {
		for _, r := range g {
			all = append(all, r.Features)
			aw = append(aw, gw[gi]/float64(len(g)))
		}
	}
	var beta []float64
	if len(all) > 0 {
		mean, sd := moments(all, aw)
		scaled := make([][]PassageRow, len(gs))
		for gi, g := range gs {
			scaled[gi] = make([]PassageRow, len(g))
			for i, r := range g {
				z := standardise([][]float64{r.Features}, mean, sd)[0]
				scaled[gi][i] = PassageRow{Label: r.Label, Features: z}
			}
		}
		beta = softmaxFit(scaled, gw, len(names), passageL2)
		for k := range beta {
			beta[k] /= sd[k]
		}
	} else {
		beta = make([]float64, len(names))
	}
	weights = make(map[string]float64, len(names))
	for i, n := range names {
		weights[n] = round4(beta[i])
	}
	return 0, weights
}

// softmaxFit fits a conditional logit by Newton's method.
func softmaxFit(groups [][]PassageRow, gw []float64, d int, l2 float64) []float64 {
	beta := make([]float64, d)
	total := 0.0
	for _, w := range gw {
		total += w
	}
	for step := 0; step < 4*fitSteps; step++ {
		grad := make([]float64, d)
		hess := make([][]float64, d)
		for k := range hess {
			hess[k] = make([]float64, d)
		}
		for gi, g := range groups {
			w := gw[gi] / total
			zs := make([]float64, len(g))
			zmax := math.Inf(-1)
			lab := 0.0
			for i, r := range g {
				for k, v := range r.Features {
					zs[i] += beta[k] * v
				}
				zmax = max(zmax, zs[i])
				lab += r.Label
			}
			sum := 0.0
			for i := range zs {
				zs[i] = math.Exp(zs[i] - zmax)
				sum += zs[i]
			}
			mean := make([]float64, d)
			for i, r := range g {
				p := zs[i] / sum
				t := r.Label / lab
				for k, v := range r.Features {
					grad[k] += w * (p - t) * v
					mean[k] += p * v
				}
			}
			for i, r := range g {
				p := zs[i] / sum
				for a, va := range r.Features {
					for b := a; b < d; b++ {
						hess[a][b] += w * p * va * r.Features[b]
					}
				}
			}
			for a := 0; a < d; a++ {
				for b := a; b < d; b++ {
					hess[a][b] -= w * mean[a] * mean[b]
				}
			}
		}
		for a := 0; a < d; a++ {
			for b := 0; b < a; b++ {
				hess[a][b] = hess[b][a]
			}
			grad[a] += l2 * beta[a]
			hess[a][a] += l2 + 1e-9
		}
		delta := solve(hess, grad)
		// A damped step: at most 1 on any weight, so that flat directions
		// (features constant within a question) cannot throw it off.
		scale := 1.0
		for _, v := range delta {
			if a := math.Abs(v); a > 1/scale {
				scale = 1 / a
			}
		}
		change := 0.0
		for k := range beta {
			beta[k] -= scale * delta[k]
			change = max(change, math.Abs(scale*delta[k]))
		}
		if change < 1e-8 {
			break
		}
	}
	return beta
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
