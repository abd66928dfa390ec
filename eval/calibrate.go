package eval

import (
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"

	"github.com/docent-hq/docent"
)

// DefaultMinDeclined is the share of unanswerable questions a calibrated
// threshold must decline (answer not found or uncertain).
const DefaultMinDeclined = 0.9

// CalibrationPoint is what a golden set gives at one relevance threshold.
type CalibrationPoint struct {
	// Threshold is the relevance threshold.
	Threshold float64 `json:"threshold"`
	// AnsweredCorrect counts answerable questions answered correctly (the
	// row passed and its top relevance reaches the threshold);
	// AnsweredWrong those answered but not correctly.
	AnsweredCorrect int `json:"answered_correct"`
	AnsweredWrong   int `json:"answered_wrong"`
	// Declined counts unanswerable questions not answered as if covered:
	// under the threshold, or declined by the answerer anyway.
	Declined int `json:"declined"`
	// DeclinedRate is Declined over the unanswerable questions.
	DeclinedRate float64 `json:"declined_rate"`
}

// Calibration proposes the relevance threshold for the configured embedder
// from a golden run made with the gate open (every question answered as
// far as the answerer would): the threshold that answers the most
// answerable questions correctly while declining at least MinDeclined of
// the unanswerable ones.
type Calibration struct {
	// Proposed is the proposed threshold and what it gives.
	Proposed CalibrationPoint `json:"proposed"`
	// Feasible is false when no threshold declines MinDeclined of the
	// unanswerable questions — only when the set has none, since a
	// threshold above every score declines them all; Proposed then keeps
	// the most correct answers.
	Feasible bool `json:"feasible"`
	// Current is what the threshold in force gives.
	Current CalibrationPoint `json:"current"`
	// MinDeclined is the declined share required.
	MinDeclined float64 `json:"min_declined"`
	// Answerable and Unanswerable count the questions.
	Answerable   int `json:"answerable"`
	Unanswerable int `json:"unanswerable"`
	// Sweep holds every threshold tried, lowest first.
	Sweep []CalibrationPoint `json:"sweep"`
}

// Calibrate proposes a threshold from rep, a golden run made with the gate
// open, so that each row's status and pass say what the answerer does
// with a question that passes the gate, and TopScore how relevant its best
// candidate was. At a threshold t a question passes the gate when its
// TopScore is at least t; otherwise it is declined.
//
// The thresholds tried are the midpoints between consecutive distinct top
// scores (so a proposal sits between two observations, not on one), half
// the lowest and the highest plus 0.01. Among those that decline at least
// minDeclined of the unanswerable questions, the proposal answers the
// most answerable questions correctly; ties go to the one that declines
// more, then to the one with fewer wrong answers, then to the lowest.
// current is the threshold in force, for comparison.
func Calibrate(rep GoldenReport, minDeclined, current float64) Calibration {
	c := Calibration{MinDeclined: minDeclined}
	var scores []float64
	for _, r := range rep.Rows {
		if r.Status == docent.StatusError {
			continue
		}
		if r.Kind == docent.KindUnanswerable {
			c.Unanswerable++
		} else {
			c.Answerable++
		}
		scores = append(scores, r.TopScore)
	}
	slices.Sort(scores)
	scores = slices.Compact(scores)
	var ts []float64
	if len(scores) > 0 {
		if scores[0] > 0 {
			ts = append(ts, round5(scores[0]/2))
		}
		for i := 1; i < len(scores); i++ {
			ts = append(ts, round5((scores[i-1]+scores[i])/2))
		}
		ts = append(ts, round5(scores[len(scores)-1]+0.01))
	}
	best := -1
	for _, t := range ts {
		p := c.at(rep, t)
		c.Sweep = append(c.Sweep, p)
		i := len(c.Sweep) - 1
		feasible := p.DeclinedRate >= minDeclined
		switch {
		case best < 0:
			best = i
			c.Feasible = feasible
		case feasible && !c.Feasible:
			best, c.Feasible = i, true
		case feasible == c.Feasible && better(p, c.Sweep[best], feasible):
			best = i
		}
	}
	if best >= 0 {
		c.Proposed = c.Sweep[best]
	}
	c.Current = c.at(rep, current)
	return c
}

// better reports whether p beats q: among feasible points, more correct
// answers, then more declines, then fewer wrong answers; among infeasible
// ones, more declines first.
func better(p, q CalibrationPoint, feasible bool) bool {
	if !feasible && p.Declined != q.Declined {
		return p.Declined > q.Declined
	}
	if p.AnsweredCorrect != q.AnsweredCorrect {
		return p.AnsweredCorrect > q.AnsweredCorrect
	}
	if p.Declined != q.Declined {
		return p.Declined > q.Declined
	}
	return p.AnsweredWrong < q.AnsweredWrong
}

// at evaluates threshold t on rep.
func (c Calibration) at(rep GoldenReport, t float64) CalibrationPoint {
	p := CalibrationPoint{Threshold: t}
	for _, r := range rep.Rows {
		if r.Status == docent.StatusError {
			continue
		}
		passes := r.TopScore >= t && r.TopScore > 0
		switch {
		case r.Kind == docent.KindUnanswerable:
			if !passes || r.Status == docent.StatusNotFound || r.Status == docent.StatusUncertain {
				p.Declined++
			}
		case passes && r.Pass:
			p.AnsweredCorrect++
		case passes && r.Status == docent.StatusAnswered:
			p.AnsweredWrong++
		}
	}
	p.DeclinedRate = ratio(p.Declined, c.Unanswerable)
	return p
}

func round5(f float64) float64 { return math.Round(f*1e5) / 1e5 }

// WriteTable writes the proposal, the threshold in force and the sweep;
// key is the config key to set ("llm.gemini.min_score").
func (c Calibration) WriteTable(w io.Writer, key string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	line := func(label string, p CalibrationPoint) {
		fmt.Fprintf(tw, "%s\t%.4g\tanswered correctly %d/%d, wrong %d, unanswerable declined %d/%d (%s)\n",
			label, p.Threshold, p.AnsweredCorrect, c.Answerable, p.AnsweredWrong, p.Declined, c.Unanswerable, pct(p.DeclinedRate))
	}
	line("proposed "+key, c.Proposed)
	line("in force", c.Current)
	if !c.Feasible {
		fmt.Fprintf(tw, "note\tno threshold declines %s of the unanswerable questions; the proposal declines the most\n", pct(c.MinDeclined))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "threshold\tanswered correctly\tanswered wrong\tdeclined\t")
	for _, p := range c.Sweep {
		fmt.Fprintf(tw, "%.5g\t%d\t%d\t%s\t\n", p.Threshold, p.AnsweredCorrect, p.AnsweredWrong, pct(p.DeclinedRate))
	}
	return tw.Flush()
}
