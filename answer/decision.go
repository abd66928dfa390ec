package answer

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/docent-hq/docent"
)

// Features are the evidence a Gate measured for the closest page's best
// passage, each in [0, 1]. A Rule decides on them; `docent eval
// --calibrate` fits a Logistic rule over them on a question set.
type Features struct {
	// Passage is the probability, by the offline answerer's passage
	// model, that the best passage answers the question; Runner the same
	// for the best passage of another page (0 when there is none).
	Passage float64 `json:"passage"`
	Runner  float64 `json:"runner"`
	// Coverage is the IDF-weighted share of the question's terms that the
	// best passage holds (its section headings and page title counting
	// less than its own words).
	Coverage float64 `json:"coverage"`
	// Chunk is the share the passage's whole chunk holds; Page the share
	// the closest page's candidate chunks hold together.
	Chunk float64 `json:"chunk"`
	Page  float64 `json:"page"`
	// Cosine is the vector similarity of the passage's chunk to the
	// question, clamped to [0, 1].
	Cosine float64 `json:"cosine"`
	// Keyword is 1/rank of the passage's chunk in the keyword (BM25)
	// ranking, 0 when keyword search did not return it.
	Keyword float64 `json:"keyword"`
	// Agreement is the share of the first five candidates that are on
	// the closest page: how much the retrievers agree on it.
	Agreement float64 `json:"agreement"`
	// Asks is 1 when the question asks for a kind of answer (an amount,
	// a time, a person or team, a place, the steps of a procedure), and
	// Kind is 1 when it does and the passage holds that kind of thing.
	Asks float64 `json:"asks"`
	Kind float64 `json:"kind"`
	// Missing is the IDF-weighted share of the question's specific
	// details (names, codes) that no source holds.
	Missing float64 `json:"missing"`
	// Unknown is the IDF-weighted share of the question's terms that no
	// indexed chunk holds at all.
	Unknown float64 `json:"unknown"`
	// Gap is the share of the question's weight that its weightiest term
	// absent from the closest page carries (0 when the page holds them
	// all): a near miss is usually one specific word the page lacks.
	Gap float64 `json:"gap"`
	// Length is the number of the question's content terms over 30
	// (at most 1): long, pasted questions cover less of themselves.
	Length float64 `json:"length"`
	// Precision is the share of the best passage's own content terms
	// that the question holds: a passage about what the question is about
	// shares most of its words with it, one that merely mentions a word
	// of a long question does not. It reads the passage's side, so it does
	// not fall with the question's length as Coverage does.
	Precision float64 `json:"precision"`
}

// FeatureNames are the names of the features, in the order Values
// returns them: the keys of a Logistic rule's weights.
var FeatureNames = []string{"passage", "runner", "coverage", "chunk", "page", "cosine", "keyword", "agreement", "asks", "kind", "missing", "unknown", "gap", "length", "precision"}

// Values returns the features in the order of FeatureNames.
func (f Features) Values() []float64 {
	out := make([]float64, 0, len(FeatureNames))
	for _, v := range f.fields() {
		out = append(out, *v)
	}
	return out
}

// fields points at the features in the order of FeatureNames.
func (f *Features) fields() []*float64 {
	return []*float64{&f.Passage, &f.Runner, &f.Coverage, &f.Chunk, &f.Page, &f.Cosine, &f.Keyword, &f.Agreement,
		&f.Asks, &f.Kind, &f.Missing, &f.Unknown, &f.Gap, &f.Length, &f.Precision}
}

// Inputs returns what a Logistic rule weighs, in the order of
// FeatureNames: the features, with the two probabilities (Passage and
// Runner) on the log-odds scale, divided by oddsScale and clipped to
// [-1, 1]. A probability saturates near 1 — a passage that answers beyond
// doubt and one that merely answers both read 0.999... — so a linear rule
// over it can only tell them apart with a weight in the tens; on the
// log-odds scale the passage model's own margin carries through.
func (f Features) Inputs() []float64 {
	v := f.Values()
	v[0], v[1] = odds(f.Passage), odds(f.Runner)
	return v
}

// oddsScale is the log-odds that Inputs maps to 1: a probability of
// 1 - 4.5e-5.
const oddsScale = 10

func odds(p float64) float64 {
	if p <= 0 {
		return -1
	}
	if p >= 1 {
		return 1
	}
	return max(-1, min(1, math.Log(p/(1-p))/oddsScale))
}

// Map returns the features by name, for traces and calibration rows;
// the probabilities keep six digits (their log-odds matter near 1).
func (f Features) Map() map[string]float64 {
	m := make(map[string]float64, len(FeatureNames))
	for i, v := range f.Values() {
		if i < 2 {
			m[FeatureNames[i]] = math.Round(v*1e6) / 1e6
			continue
		}
		m[FeatureNames[i]] = round4(v)
	}
	return m
}

// FeaturesFromMap is the inverse of Map; unknown names are ignored.
func FeaturesFromMap(m map[string]float64) Features {
	var f Features
	for i, v := range f.fields() {
		*v = m[FeatureNames[i]]
	}
	return f
}

// Logistic is the calibrated rule of the offline answerer: the
// probability that an answer quoting the measured passage is right,
// σ(Bias + Σ Weights[name]·feature), compared with two cut points. At
// AnswerAt or above the question is answered; under NotFoundAt it is not
// found; in between it is uncertain (the closest pages linked, nothing
// asserted). `docent eval --calibrate` fits it on a question set and
// prints the config that sets it (answerer.decision).
type Logistic struct {
	// Bias is the intercept.
	Bias float64 `json:"bias" yaml:"bias"`
	// Weights weigh the features by name (FeatureNames); a missing name
	// weighs 0.
	Weights map[string]float64 `json:"weights" yaml:"weights"`
	// AnswerAt is the smallest probability that answers; NotFoundAt the
	// smallest that is uncertain rather than not found.
	AnswerAt   float64 `json:"answer_at" yaml:"answer_at"`
	NotFoundAt float64 `json:"not_found_at" yaml:"not_found_at"`
}

var _ Rule = Logistic{}

// Score returns the rule's probability for f.
func (l Logistic) Score(f Features) float64 {
	z := l.Bias
	for i, v := range f.Inputs() {
		z += l.Weights[FeatureNames[i]] * v
	}
	return 1 / (1 + math.Exp(-z))
}

// Decide compares the probability with the cut points.
func (l Logistic) Decide(f Features) Verdict {
	p := l.Score(f)
	v := Verdict{Score: round4(p), Threshold: l.AnswerAt}
	switch {
	case p >= l.AnswerAt:
		v.Status = docent.StatusAnswered
		v.Reason = fmt.Sprintf("answer: p %.2f >= %.2f", p, l.AnswerAt)
	case p >= l.NotFoundAt:
		v.Status = docent.StatusUncertain
		v.Reason = fmt.Sprintf("uncertain: p %.2f < %.2f", p, l.AnswerAt)
	default:
		v.Status = docent.StatusNotFound
		v.Reason = fmt.Sprintf("not found: p %.2f < %.2f", p, l.NotFoundAt)
	}
	return v
}

// Validate reports a rule that cannot decide: an unknown feature name or
// cut points outside [0, 1] or out of order.
func (l Logistic) Validate() error {
	known := map[string]bool{}
	for _, n := range FeatureNames {
		known[n] = true
	}
	var unknown []string
	for n := range l.Weights {
		if !known[n] {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("answer: decision: unknown feature %s (want one of %s)",
			strings.Join(unknown, ", "), strings.Join(FeatureNames, ", "))
	}
	if l.AnswerAt < 0 || l.AnswerAt > 1 || l.NotFoundAt < 0 || l.NotFoundAt > l.AnswerAt {
		return fmt.Errorf("answer: decision: want 0 <= not_found_at (%g) <= answer_at (%g) <= 1", l.NotFoundAt, l.AnswerAt)
	}
	return nil
}

// Always answers every question that has any evidence: the rule of a
// calibration run, which must see what the generator would answer.
type Always struct{}

var _ Rule = Always{}

// Decide answers.
func (Always) Decide(Features) Verdict {
	return Verdict{Status: docent.StatusAnswered, Score: 1, Reason: "calibration run: every question answered"}
}

// Plausible is the gate and the rule of the model answerers: the model
// reads the numbered sources and decides coverage itself (NOT_FOUND), so
// the question is refused before the model only when retrieval found no
// plausible evidence at all: no candidate from keyword search and every
// cosine under MinCosine. The sources are the first candidates in rank
// order, at most PerPage chunks of one page, up to MaxSources.
type Plausible struct {
	// MaxSources is how many sources the model sees; default 8.
	MaxSources int
	// PerPage is the most chunks of one page among them; default 2.
	PerPage int
	// MinCosine is the cosine under which a candidate that keyword
	// search did not return is no evidence; default 0.2.
	MinCosine float64
}

var (
	_ Gate = Plausible{}
	_ Rule = Plausible{}
)

func (p Plausible) withDefaults() Plausible {
	if p.MaxSources <= 0 {
		p.MaxSources = 8
	}
	if p.PerPage <= 0 {
		p.PerPage = 2
	}
	if p.MinCosine <= 0 {
		p.MinCosine = 0.2
	}
	return p
}

// Gate measures whether any candidate is plausible evidence (Keyword is
// 1 when keyword search returned one, Cosine the best cosine) and picks
// the sources.
func (p Plausible) Gate(_ context.Context, req GateRequest) (Evidence, error) {
	p = p.withDefaults()
	ev := Evidence{Omitted: map[string]string{}}
	perPage := map[string]int{}
	pages := map[string]bool{}
	for _, h := range req.Hits {
		if h.KeywordRank > 0 {
			ev.Features.Keyword = 1
		}
		ev.Features.Cosine = max(ev.Features.Cosine, min(1, max(0, h.VectorScore)))
		key := h.Chunk.DocID
		if len(ev.Sources) < p.MaxSources && perPage[key] < p.PerPage {
			perPage[key]++
			ev.Sources = append(ev.Sources, Source{N: len(ev.Sources) + 1, Hit: h, Relevance: h.Relevance})
		} else if len(ev.Sources) == p.MaxSources {
			ev.Omitted[h.Chunk.ID] = fmt.Sprintf("cut by the source limit (%d sources)", p.MaxSources)
		} else {
			ev.Omitted[h.Chunk.ID] = fmt.Sprintf("%d chunks of its page were already sent (at most %d a page)", p.PerPage, p.PerPage)
		}
		if !pages[key] && len(ev.Pages) < MaxPages {
			pages[key] = true
			ev.Pages = append(ev.Pages, Page{Hit: h})
		}
	}
	ev.Detail = fmt.Sprintf("%d sources from %d candidates (keyword %v, best cosine %.2f)",
		len(ev.Sources), len(req.Hits), ev.Features.Keyword > 0, ev.Features.Cosine)
	return ev, nil
}

// Decide lets the model answer unless nothing is plausible.
func (p Plausible) Decide(f Features) Verdict {
	p = p.withDefaults()
	if f.Keyword > 0 || f.Cosine >= p.MinCosine {
		return Verdict{Status: docent.StatusAnswered, Score: f.Cosine, Threshold: p.MinCosine,
			Reason: "the model reads the sources and decides"}
	}
	return Verdict{Status: docent.StatusNotFound, Score: f.Cosine, Threshold: p.MinCosine,
		Reason: fmt.Sprintf("not asked: no keyword match and best cosine %.2f < %.2f", f.Cosine, p.MinCosine)}
}

func round4(f float64) float64 {
	return math.Round(f*10000) / 10000
}
