package eval

import (
	"bytes"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
)

// calibrationFixture is a golden run made with the gate open: each row's
// top relevance, and what the answerer did with the question.
func calibrationFixture() GoldenReport {
	ans := func(id string, top float64, pass bool) GoldenRow {
		return GoldenRow{ID: id, Kind: docent.KindExact, Status: docent.StatusAnswered, TopScore: top, Pass: pass}
	}
	un := func(id string, top float64, status docent.Status) GoldenRow {
		return GoldenRow{ID: id, Kind: docent.KindUnanswerable, Status: status, TopScore: top, Pass: status != docent.StatusAnswered}
	}
	return GoldenReport{Rows: []GoldenRow{
		ans("a1", 0.8, true), ans("a2", 0.7, true), ans("a3", 0.6, true), ans("a4", 0.53, true),
		ans("a5", 0.51, true), ans("a6", 0.45, true), ans("a7", 0.55, false),
		{ID: "a8", Kind: docent.KindParaphrase, Status: docent.StatusNotFound, TopScore: 0.9}, // the model declined it
		un("u1", 0.2, docent.StatusAnswered), un("u2", 0.25, docent.StatusAnswered), un("u3", 0.3, docent.StatusAnswered),
		un("u4", 0.35, docent.StatusAnswered), un("u5", 0.4, docent.StatusAnswered), un("u6", 0.45, docent.StatusAnswered),
		un("u7", 0.5, docent.StatusAnswered), un("u8", 0.52, docent.StatusAnswered), un("u9", 0.65, docent.StatusAnswered),
		un("u10", 0.62, docent.StatusNotFound),                                         // the model said the sources do not say
		{ID: "e1", Kind: docent.KindExact, Status: docent.StatusError, TopScore: 0.99}, // errors do not count
	}}
}

func TestCalibrate(t *testing.T) {
	c := Calibrate(calibrationFixture(), DefaultMinDeclined, 0.5)
	// At 0.525 every unanswerable question but u9 (0.65) is declined: 9/10.
	// Any lower threshold lets u8 (0.52) through: 8/10. Above it, a4 (0.53)
	// would be lost.
	want := CalibrationPoint{Threshold: 0.525, AnsweredCorrect: 4, AnsweredWrong: 1, Declined: 9, DeclinedRate: 0.9}
	if c.Proposed != want || !c.Feasible {
		t.Errorf("proposed %+v (feasible %v), want %+v", c.Proposed, c.Feasible, want)
	}
	if c.Answerable != 8 || c.Unanswerable != 10 {
		t.Errorf("counted %d answerable, %d unanswerable", c.Answerable, c.Unanswerable)
	}
	cur := CalibrationPoint{Threshold: 0.5, AnsweredCorrect: 5, AnsweredWrong: 1, Declined: 7, DeclinedRate: 0.7}
	if c.Current != cur {
		t.Errorf("current %+v, want %+v", c.Current, cur)
	}
	if first, last := c.Sweep[0], c.Sweep[len(c.Sweep)-1]; first.Threshold != 0.1 || last.Threshold != 0.91 || last.AnsweredCorrect != 0 {
		t.Errorf("sweep from %+v to %+v", first, last)
	}
	for i := 1; i < len(c.Sweep); i++ {
		if c.Sweep[i].Threshold <= c.Sweep[i-1].Threshold {
			t.Errorf("sweep not increasing at %d", i)
		}
	}

	// A looser constraint moves the proposal down to keep a5 (0.51).
	if c := Calibrate(calibrationFixture(), 0.7, 0.5); c.Proposed.Threshold != 0.505 || c.Proposed.AnsweredCorrect != 5 {
		t.Errorf("at 70%%: %+v", c.Proposed)
	}
	// Declining every unanswerable question costs the answers that score
	// like them.
	rep := calibrationFixture()
	rep.Rows = append(rep.Rows, un99())
	if c := Calibrate(rep, 1, 0.5); !c.Feasible || c.Proposed.Declined != 11 || c.Proposed.Threshold != 0.91 {
		t.Errorf("all declined: %+v feasible %v", c.Proposed, c.Feasible)
	}
	// Without unanswerable questions no threshold can show declines: the
	// proposal is flagged and keeps every correct answer.
	rep.Rows = rep.Rows[:8]
	if c := Calibrate(rep, 0.9, 0.5); c.Feasible || c.Proposed.AnsweredCorrect != 6 || c.Proposed.Threshold != 0.225 {
		t.Errorf("no unanswerable: %+v feasible %v", c.Proposed, c.Feasible)
	}

	var b bytes.Buffer
	if err := c.WriteTable(&b, "llm.gemini.min_score"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"proposed llm.gemini.min_score", "0.525", "answered correctly 4/8, wrong 1, unanswerable declined 9/10 (90.0%)",
		"in force", "0.5 ", "threshold"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, b.String())
		}
	}
}

// un99 is an unanswerable question the answerer answers whenever it
// passes the gate, scoring like the best answerable one.
func un99() GoldenRow {
	return GoldenRow{ID: "u11", Kind: docent.KindUnanswerable, Status: docent.StatusAnswered, TopScore: 0.9}
}
