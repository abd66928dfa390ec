package eval

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
)

// DefaultMinDeclined is the share of unanswerable questions a calibrated
// rule must decline (answer not found or uncertain): the mean, over the
// corpora the sets ask of, of each corpus's declined share.
const DefaultMinDeclined = 0.85

// CalibrationRow is one question of a calibration run: a golden run made
// with the answer.Always rule, so that every question with evidence is
// answered and the row says whether that answer is right.
type CalibrationRow struct {
	// Set names the question set the row comes from; each set weighs the
	// same in a fit, however many questions it has.
	Set string `json:"set"`
	// Corpus names the docs the set was asked of (its sources); the
	// declined share a fit must reach is measured per corpus, so that
	// several small sets over one corpus count as one.
	Corpus string `json:"corpus,omitempty"`
	// ID is the question's id.
	ID string `json:"id"`
	// Answerable is false for an unanswerable question.
	Answerable bool `json:"answerable"`
	// Correct reports that the forced answer is right: answered, the
	// first citation an expected document (and section, for a set whose
	// questions name sections but no facts), every fact stated.
	Correct bool `json:"correct"`
	// Features are the gate's measurements (answer.Features by name).
	Features map[string]float64 `json:"features"`
}

// CalibrationRows turns a calibration run of set into rows. Questions
// whose answer failed or carries no decision (small talk) are left out.
func CalibrationRows(set, corpus string, rep GoldenReport) []CalibrationRow {
	var rows []CalibrationRow
	for _, r := range rep.Rows {
		if r.Status == docent.StatusError || r.Features == nil {
			continue
		}
		row := CalibrationRow{Set: set, Corpus: corpus, ID: r.ID, Answerable: r.Kind != docent.KindUnanswerable, Features: r.Features}
		if row.Answerable {
			row.Correct = r.Status == docent.StatusAnswered && r.FirstCitedOK && r.FactsOK && (r.Facts > 0 || r.FirstSectionOK)
		}
		rows = append(rows, row)
	}
	return rows
}

// WriteRows writes rows as JSON lines.
func WriteRows(w io.Writer, rows []CalibrationRow) error {
	enc := json.NewEncoder(w)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("eval: calibration rows: %w", err)
		}
	}
	return nil
}

// ReadRows reads the rows WriteRows wrote, from each file in turn.
func ReadRows(paths ...string) ([]CalibrationRow, error) {
	var rows []CalibrationRow
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("eval: calibration rows: %w", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		n := 0
		for sc.Scan() {
			n++
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			var r CalibrationRow
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				f.Close()
				return nil, fmt.Errorf("eval: calibration rows: %s:%d: %w", p, n, err)
			}
			rows = append(rows, r)
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("eval: calibration rows: %s: %w", p, err)
		}
	}
	return rows, nil
}

// Outcome is what a rule gives on a set of calibration rows.
type Outcome struct {
	// Set names the set ("" for all rows together).
	Set string `json:"set"`
	// Answerable and Unanswerable count the rows.
	Answerable   int `json:"answerable"`
	Unanswerable int `json:"unanswerable"`
	// AnsweredCorrect and AnsweredWrong count the answerable rows answered
	// rightly and wrongly; Declined the unanswerable rows not answered;
	// NotFound the answerable rows answered not found.
	AnsweredCorrect int `json:"answered_correct"`
	AnsweredWrong   int `json:"answered_wrong"`
	Declined        int `json:"declined"`
	NotFound        int `json:"not_found"`
}

// CorrectRate and DeclinedRate are the shares of answerable rows
// answered correctly and of unanswerable rows declined.
func (o Outcome) CorrectRate() float64  { return ratio(o.AnsweredCorrect, o.Answerable) }
func (o Outcome) DeclinedRate() float64 { return ratio(o.Declined, o.Unanswerable) }

// Fit is a fitted decision rule with what it gives.
type Fit struct {
	// Rule is the fitted rule.
	Rule answer.Logistic `json:"rule"`
	// Proposed is what Rule gives on the rows, All together and BySet;
	// Current what the rule in force gives.
	All     Outcome   `json:"all"`
	BySet   []Outcome `json:"by_set"`
	Current []Outcome `json:"current"`
	// Feasible is false when no cut point declines MinDeclined of the
	// unanswerable rows (the mean of the sets' rates); the rule then
	// declines the most.
	Feasible    bool    `json:"feasible"`
	MinDeclined float64 `json:"min_declined"`
	// Passage is the passage model fitted before the rule, when one was.
	Passage *PassageFit `json:"passage,omitempty"`
	// Separation says, per set, how well the fitted rule's score and each
	// feature alone tell the set's answerable questions from its
	// unanswerable ones.
	Separation []Separation `json:"separation,omitempty"`
}

// Separation is, for one set of calibration rows (Set "" for all rows
// together), the AUC of the fitted rule's score (Rule) and of each
// feature (Features, by name) between the answerable and the unanswerable
// rows: the chance that an answerable row scores above an unanswerable
// one, ties counting half. 0.5 is chance; 1 (or 0, for a feature that
// falls when a question is covered) a measure a threshold separates them
// on. A feature far from 0.5 on one set and near it, or on the other
// side, on another carries no evidence from one corpus to the other.
type Separation struct {
	Set      string             `json:"set"`
	Rule     float64            `json:"rule"`
	Features map[string]float64 `json:"features"`
}

// separations measures Separation on each set that has rows of both kinds,
// then on all rows together when there are several such sets.
func separations(rows []CalibrationRow, scores []float64, sets []string) []Separation {
	one := func(set string) (Separation, bool) {
		var ans, un []int
		for i, r := range rows {
			if set != "" && r.Set != set {
				continue
			}
			if r.Answerable {
				ans = append(ans, i)
			} else {
				un = append(un, i)
			}
		}
		if len(ans) == 0 || len(un) == 0 {
			return Separation{}, false
		}
		of := func(v func(i int) float64) float64 {
			return round4(auc(ans, un, v))
		}
		sep := Separation{Set: set, Rule: of(func(i int) float64 { return scores[i] }), Features: map[string]float64{}}
		for _, name := range answer.FeatureNames {
			sep.Features[name] = of(func(i int) float64 { return rows[i].Features[name] })
		}
		return sep, true
	}
	var out []Separation
	for _, s := range sets {
		if sep, ok := one(s); ok {
			out = append(out, sep)
		}
	}
	if len(out) > 1 {
		if sep, ok := one(""); ok {
			out = append(out, sep)
		}
	}
	return out
}

// auc is the chance that v of a row of pos exceeds v of a row of neg, ties
// counting half (the Mann-Whitney statistic over their product).
func auc(pos, neg []int, v func(i int) float64) float64 {
	var sum float64
	for _, p := range pos {
		for _, n := range neg {
			switch a, b := v(p), v(n); {
			case a > b:
				sum++
			case a == b:
				sum += 0.5
			}
		}
	}
	return sum / float64(len(pos)*len(neg))
}

// PassageFit is a fitted passage model: its intercept and its weights by
// feature name, Names giving their order.
type PassageFit struct {
	Bias    float64            `json:"bias"`
	Weights map[string]float64 `json:"weights"`
	Names   []string           `json:"names"`
}

// wrongCost is what a wrong answer to an answerable question costs, in
// correct answers, when the answer cut is chosen: an uncertain reply that
// links the right page serves the asker better than a wrong quote.
const wrongCost = 0.5

// Fitting parameters: L2 penalty on the weights, the most Newton steps,
// and the share of answerable rows a not-found cut may leave under
// it.
const (
	fitL2       = 0.1
	fitSteps    = 50
	notFoundCut = 0.05
)

// FitDecision fits a Logistic rule to rows: weights by L2-regularised
// logistic regression of Correct on the features (each set weighing the
// same in total), then AnswerAt, among the fitted probabilities, as the
// cut that answers the most answerable rows correctly, less wrongCost for
// each one answered wrongly (summed over the sets' rates), while declining
// at least minDeclined of the unanswerable rows (the mean over corpora),
// and NotFoundAt as the highest cut that leaves, in every set, at most
// notFoundCut of the answerable rows under it. current, when not
// nil, is the rule in force, reported beside the fit.
func FitDecision(rows []CalibrationRow, minDeclined float64, current answer.Rule) Fit {
	fit := Fit{MinDeclined: minDeclined}
	sets := setNames(rows)
	per := map[string]float64{}
	for _, r := range rows {
		per[r.Set]++
	}
	x := make([][]float64, len(rows))
	y := make([]float64, len(rows))
	w := make([]float64, len(rows))
	for i, r := range rows {
		x[i] = answer.FeaturesFromMap(r.Features).Inputs()
		if r.Correct {
			y[i] = 1
		}
		w[i] = float64(len(rows)) / (float64(len(sets)) * per[r.Set])
	}
	bias, coef := logistic(x, y, w)
	rule := answer.Logistic{Bias: round4(bias), Weights: map[string]float64{}}
	for i, name := range answer.FeatureNames {
		if i < len(coef) {
			rule.Weights[name] = round4(coef[i])
		}
	}
	scores := make([]float64, len(rows))
	for i, r := range rows {
		scores[i] = rule.Score(answer.FeaturesFromMap(r.Features))
	}
	cuts := slices.Clone(scores)
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	cuts = append(cuts, 1)
	bestCut, bestGain, bestMin := 1.0, -1.0, -1.0
	for i, c := range cuts {
		if i > 0 {
			c = (cuts[i-1] + c) / 2 // between two observations
		}
		gain := 0.0
		for _, s := range sets {
			o := outcomeAt(rows, scores, s, c, 0)
			gain += o.CorrectRate() - wrongCost*ratio(o.AnsweredWrong, o.Answerable)
		}
		minDecl := declinedByCorpus(rows, scores, c)
		feasible := minDecl >= minDeclined
		switch {
		case feasible && (!fit.Feasible || gain > bestGain):
			fit.Feasible, bestCut, bestGain, bestMin = true, c, gain, minDecl
		case !fit.Feasible && (minDecl > bestMin || (minDecl == bestMin && gain > bestGain)):
			bestCut, bestGain, bestMin = c, gain, minDecl
		}
	}
	rule.AnswerAt = round4(bestCut)
	rule.NotFoundAt = notFoundAt(rows, scores, sets)
	rule.NotFoundAt = min(rule.NotFoundAt, rule.AnswerAt)
	fit.Rule = rule
	fit.All = outcomeOf(rows, "", rule)
	fit.Separation = separations(rows, scores, sets)
	for _, s := range sets {
		fit.BySet = append(fit.BySet, outcomeOf(rows, s, rule))
		if current != nil {
			fit.Current = append(fit.Current, outcomeOf(rows, s, current))
		}
	}
	return fit
}

// notFoundAt is the highest cut that leaves at most notFoundCut of each
// set's answerable rows under it: a set whose answers score low (docs
// unlike the others) gets uncertain replies with links, not refusals.
func notFoundAt(rows []CalibrationRow, scores []float64, sets []string) float64 {
	cut := math.Inf(1)
	for _, s := range sets {
		var answerable []float64
		for i, r := range rows {
			if r.Answerable && r.Set == s {
				answerable = append(answerable, scores[i])
			}
		}
		slices.Sort(answerable)
		if k := int(notFoundCut * float64(len(answerable))); k < len(answerable) {
			cut = min(cut, math.Floor(answerable[k]*1e4)/1e4)
		}
	}
	if math.IsInf(cut, 1) {
		return 0
	}
	return cut
}

// declinedByCorpus is the mean, over the rows' corpora, of the share of
// each corpus's unanswerable rows under the cut (1 without any).
func declinedByCorpus(rows []CalibrationRow, scores []float64, cut float64) float64 {
	un, decl := map[string]int{}, map[string]int{}
	for i, r := range rows {
		if r.Answerable {
			continue
		}
		k := r.Corpus
		if k == "" {
			k = r.Set
		}
		un[k]++
		if scores[i] < cut {
			decl[k]++
		}
	}
	if len(un) == 0 {
		return 1
	}
	sum := 0.0
	for k, n := range un {
		sum += float64(decl[k]) / float64(n)
	}
	return sum / float64(len(un))
}

// outcomeOf is what rule gives on the rows of set ("" for all).
func outcomeOf(rows []CalibrationRow, set string, rule answer.Rule) Outcome {
	o := Outcome{Set: set}
	for _, r := range rows {
		if set != "" && r.Set != set {
			continue
		}
		v := rule.Decide(answer.FeaturesFromMap(r.Features))
		o.count(r, v.Status)
	}
	return o
}

// outcomeAt is what a cut on scores gives on the rows of set.
func outcomeAt(rows []CalibrationRow, scores []float64, set string, answerAt, notFoundAt float64) Outcome {
	o := Outcome{Set: set}
	for i, r := range rows {
		if set != "" && r.Set != set {
			continue
		}
		st := docent.StatusUncertain
		switch {
		case scores[i] >= answerAt:
			st = docent.StatusAnswered
		case scores[i] < notFoundAt:
			st = docent.StatusNotFound
		}
		o.count(r, st)
	}
	return o
}

func (o *Outcome) count(r CalibrationRow, st docent.Status) {
	if !r.Answerable {
		o.Unanswerable++
		if st != docent.StatusAnswered {
			o.Declined++
		}
		return
	}
	o.Answerable++
	switch {
	case st == docent.StatusAnswered && r.Correct:
		o.AnsweredCorrect++
	case st == docent.StatusAnswered:
		o.AnsweredWrong++
	case st == docent.StatusNotFound:
		o.NotFound++
	}
}

// setNames returns the rows' set names in order of first appearance.
func setNames(rows []CalibrationRow) []string {
	var out []string
	for _, r := range rows {
		if !slices.Contains(out, r.Set) {
			out = append(out, r.Set)
		}
	}
	return out
}

// logistic fits weighted, L2-regularised logistic regression (labels in
// [0, 1]) by Newton's method, which converges in a few steps on problems
// this size (a few dozen features, tens of thousands of rows), returning
// the intercept and the coefficients. The intercept is not penalised.
func logistic(x [][]float64, y, w []float64) (float64, []float64) {
	return logisticL2(x, y, w, fitL2)
}

// logisticL2 is logistic with the L2 penalty l2, on features standardised
// to mean 0 and variance 1 (so that the penalty weighs every feature
// alike, whatever its spread), the coefficients returned for the
// features as given.
func logisticL2(x [][]float64, y, w []float64, l2 float64) (float64, []float64) {
	if len(x) == 0 {
		return 0, nil
	}
	mean, sd := moments(x, w)
	z := standardise(x, mean, sd)
	b, coef := logisticRaw(z, y, w, l2)
	for k := range coef {
		coef[k] /= sd[k]
		b -= coef[k] * mean[k]
	}
	return b, coef
}

// moments returns the weighted mean and standard deviation of each
// feature (a constant feature gets 1, so it is left as it is).
func moments(x [][]float64, w []float64) (mean, sd []float64) {
	d := len(x[0])
	mean, sd = make([]float64, d), make([]float64, d)
	total := 0.0
	for i, row := range x {
		total += w[i]
		for k, v := range row {
			mean[k] += w[i] * v
		}
	}
	for k := range mean {
		mean[k] /= total
	}
	for i, row := range x {
		for k, v := range row {
			sd[k] += w[i] * (v - mean[k]) * (v - mean[k])
		}
	}
	for k := range sd {
		sd[k] = math.Sqrt(sd[k] / total)
		if sd[k] < 1e-9 {
			sd[k], mean[k] = 1, 0
		}
	}
	return mean, sd
}

// standardise returns (x − mean)/sd, row by row.
func standardise(x [][]float64, mean, sd []float64) [][]float64 {
	out := make([][]float64, len(x))
	for i, row := range x {
		out[i] = make([]float64, len(row))
		for k, v := range row {
			out[i][k] = (v - mean[k]) / sd[k]
		}
	}
	return out
}

// logisticRaw fits logistic regression by Newton's method on x as given.
func logisticRaw(x [][]float64, y, w []float64, l2 float64) (float64, []float64) {
	if len(x) == 0 {
		return 0, nil
	}
	d := len(x[0]) + 1 // intercept last
	beta := make([]float64, d)
	total := 0.0
	for _, v := range w {
		total += v
	}
	row := make([]float64, d)
	for step := 0; step < fitSteps; step++ {
		grad := make([]float64, d)
		hess := make([][]float64, d)
		for k := range hess {
			hess[k] = make([]float64, d)
		}
		for i, xi := range x {
			copy(row, xi)
			row[d-1] = 1
			z := 0.0
			for k, v := range row {
				z += beta[k] * v
			}
			p := 1 / (1 + math.Exp(-z))
			e, h := w[i]*(p-y[i])/total, w[i]*p*(1-p)/total
			for a, va := range row {
				grad[a] += e * va
				for b := a; b < d; b++ {
					hess[a][b] += h * va * row[b]
				}
			}
		}
		for a := 0; a < d; a++ {
			for b := 0; b < a; b++ {
				hess[a][b] = hess[b][a]
			}
			if a < d-1 {
				grad[a] += l2 * beta[a]
				hess[a][a] += l2
			}
			hess[a][a] += 1e-9
		}
		delta := solve(hess, grad)
		change := 0.0
		for k := range beta {
			beta[k] -= delta[k]
			change = max(change, math.Abs(delta[k]))
		}
		if change < 1e-8 {
			break
		}
	}
	return beta[d-1], beta[:d-1]
}

// solve solves a·x = b by Gaussian elimination with partial pivoting (a
// is small and positive definite).
func solve(a [][]float64, b []float64) []float64 {
	n := len(b)
	m := make([][]float64, n)
	for i := range a {
		m[i] = append(append([]float64(nil), a[i]...), b[i])
	}
	for c := 0; c < n; c++ {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[p][c]) {
				p = r
			}
		}
		m[c], m[p] = m[p], m[c]
		if m[c][c] == 0 {
			continue
		}
		for r := c + 1; r < n; r++ {
			f := m[r][c] / m[c][c]
			for k := c; k <= n; k++ {
				m[r][k] -= f * m[c][k]
			}
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		v := m[r][n]
		for k := r + 1; k < n; k++ {
			v -= m[r][k] * x[k]
		}
		if m[r][r] != 0 {
			x[r] = v / m[r][r]
		}
	}
	return x
}

func round4(f float64) float64 { return math.Round(f*1e4) / 1e4 }

// WriteConfig writes the fitted rule as the config block that sets it.
func (f Fit) WriteConfig(w io.Writer) error {
	var b strings.Builder
	b.WriteString("answerer:\n")
	if p := f.Passage; p != nil {
		fmt.Fprintf(&b, "  passage:\n    bias: %g\n    weights:\n", p.Bias)
		for _, name := range p.Names {
			fmt.Fprintf(&b, "      %s: %g\n", name, p.Weights[name])
		}
	}
	b.WriteString("  decision:\n")
	fmt.Fprintf(&b, "    bias: %g\n    weights:\n", f.Rule.Bias)
	for _, name := range answer.FeatureNames {
		fmt.Fprintf(&b, "      %s: %g\n", name, f.Rule.Weights[name])
	}
	fmt.Fprintf(&b, "    answer_at: %g\n    not_found_at: %g\n", f.Rule.AnswerAt, f.Rule.NotFoundAt)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteTable writes what the fitted rule gives, set by set, beside the
// rule in force, then the config block.
func (f Fit) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "set\trule\tanswered correctly\tanswered wrong\tdeclined\tnot found (answerable)\t")
	line := func(label string, o Outcome) {
		fmt.Fprintf(tw, "%s\t%s\t%d/%d (%s)\t%d\t%d/%d (%s)\t%d\t\n", orDash(o.Set), label,
			o.AnsweredCorrect, o.Answerable, pct(o.CorrectRate()), o.AnsweredWrong,
			o.Declined, o.Unanswerable, pct(o.DeclinedRate()), o.NotFound)
	}
	for i, o := range f.BySet {
		line("fitted", o)
		if i < len(f.Current) {
			line("in force", f.Current[i])
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !f.Feasible {
		fmt.Fprintf(w, "\nnote: no cut declines %s of every set's unanswerable questions; the rule declines the most\n", pct(f.MinDeclined))
	}
	if err := f.writeSeparation(w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return f.WriteConfig(w)
}

// writeSeparation prints Separation as a table, a measure per line and a
// set per column.
func (f Fit) writeSeparation(w io.Writer) error {
	if len(f.Separation) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nanswerable against unanswerable questions, AUC (0.5 is chance; near 1, or 0, a cut separates them):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "measure\t")
	for _, s := range f.Separation {
		fmt.Fprintf(tw, "%s\t", cmp.Or(s.Set, "all"))
	}
	fmt.Fprintln(tw)
	line := func(name string, v func(Separation) float64) {
		fmt.Fprintf(tw, "%s\t", name)
		for _, s := range f.Separation {
			fmt.Fprintf(tw, "%.2f\t", v(s))
		}
		fmt.Fprintln(tw)
	}
	line("fitted rule", func(s Separation) float64 { return s.Rule })
	for _, name := range answer.FeatureNames {
		line(name, func(s Separation) float64 { return s.Features[name] })
	}
	return tw.Flush()
}
