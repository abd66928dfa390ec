package offline

import (
	"math"
	"regexp"
	"strings"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// The passage model ranks the quotable passages (units: sentences, list
// items, table rows) of the first candidates by the probability that a
// passage answers the question: σ(Bias + Σ Weights[name]·feature) over
// the features below, each in [0, 1]. It is the one passage score of the
// offline answerer: the gate measures the best passage, the decision rule
// reads its probability, and the extractive answer opens with it and adds
// the next best. It is fitted, like the decision rule, by `docent eval
// --calibrate` on a question set whose questions name the facts or the
// sections that answer them.
type PassageModel struct {
	// Bias is the intercept.
	Bias float64 `json:"bias" yaml:"bias"`
	// Weights weigh the features by name (PassageFeatureNames).
	Weights map[string]float64 `json:"weights" yaml:"weights"`
}

// PassageFeatureNames are the names of the passage features, in the order
// passageFeatures returns them:
//
//	own      IDF share of the question's terms in the passage's own words
//	cover    the share with its headings (0.5, rows and items 0.8) and page title (1)
//	heading  the share its section headings hold, page title left out
//	chunk    the share its chunk holds
//	rank     1/(1 + the chunk's rank among the candidates), times chunk
//	fused    the chunk's fused retrieval score over the best candidate's,
//	         times chunk
//	keyword  1/(the chunk's keyword rank), 0 when keyword search missed
//	         it, times chunk
//	cosine   the chunk's vector similarity, times chunk
//	         (retrieval's signals count as far as the chunk holds the
//	         question's own words: a chunk ranked first for a word the
//	         question only uses in passing is no answer)
//	kind     the question asks for a kind of answer (an amount, a time, a
//	         person, a place, steps) and the passage holds it
//	lacks    the question asks for a kind of answer the passage lacks
//	entry    the passage is a table row or list item
//	keyed    a row or item keyed by a code the question names
//	codes    the question names a code the passage lacks
//	meta     the passage speaks of the page itself ("this page describes")
//	early    1/(1 + the chunk's position in its page)
//	lead     1/(1 + the passage's position in its chunk)
//	length   the passage's length over 300 characters (at most 1)
//	page     the share the candidates of its page hold together
//	pagerank 1/(1 + its page's rank among the candidates' pages)
//	listed   the question asks for a list and the passage is a row or item
//	steps    the question asks how to do something and the passage opens
//	         with the verb asked about or is an instruction
//	sim      the cosine of the passage's and the question's vectors, when
//	         the gate has a local embedder (0 otherwise)
//	score    the passage's ranking score by the rules of thumb of
//	         passageScore, halved (at most 1)
//	pairs    the IDF-weighted share of the question's adjacent content
//	         words ("open enrollment") the passage holds adjacent too
//	chunkpairs the same share for the passage's chunk
var PassageFeatureNames = []string{"own", "cover", "heading", "chunk", "rank", "fused", "keyword", "cosine",
	"kind", "lacks", "entry", "keyed", "codes", "meta", "early", "lead", "length",
	"page", "pagerank", "listed", "steps", "sim", "score", "pairs", "chunkpairs"}

// DefaultPassage is the passage model when answerer.passage is not set,
// fitted by `docent eval --calibrate --save-rows` and `--fit` on the
// development sets (examples/handbook asked.yaml, golden.yaml and
// heldout-dev.yaml, and the odd half of ../shared/eval/realdocs-dev; see
// docs/answerer.md).
var DefaultPassage = PassageModel{
	Weights: map[string]float64{
		"own": -1.2272, "cover": 0.7732, "heading": -0.903, "chunk": -1.5343, "rank": 1.8312,
		"fused": 3.8292, "keyword": -0.9391, "cosine": -2.8044, "kind": 0.6212, "lacks": -0.3922,
		"entry": 0.2638, "keyed": -19.5777, "codes": 0.525, "meta": -0.7241, "early": -1.3987,
		"lead": 0.5317, "length": 0.7082, "page": 1.5896, "pagerank": 1.2439, "listed": -0.3629,
		"steps": -0.9967, "sim": 1.8119, "score": 4.375, "pairs": 0.0809, "chunkpairs": 2.1713,
	},
}

// score is the model's probability for feature values in the order of
// PassageFeatureNames.
func (m PassageModel) score(x []float64) float64 {
	z := m.Bias
	for i, v := range x {
		z += m.Weights[PassageFeatureNames[i]] * v
	}
	return 1 / (1 + math.Exp(-z))
}

// candidateInfo is what the passage features read of one candidate: its
// rank, its retrieval scores relative to the best candidate's, its
// page's rank and coverage.
type candidateInfo struct {
	rank     int
	fused    float64 // score over the best score
	hit      docent.Hit
	set      map[string]bool
	pageRank int
	pageCov  float64
}

// passageFeatures measures unit u of candidate c for the question q,
// which asks for want.
func passageFeatures(q *question, c candidateInfo, u unit, want answerType, sim float64) []float64 {
	own := q.sc.coverage(u.Terms, nil, 0)
	chunk := q.coverage(c.set)
	f := []float64{
		own,
		q.unitCoverage(u),
		q.coverage(sectionTerms(c.hit.Chunk)),
		chunk,
		chunk / float64(1+c.rank),
		chunk * c.fused,
		0,
		chunk * min(1, max(0, c.hit.VectorScore)),
		0, 0,
		0, 0, 0,
		0,
		1 / float64(1+c.hit.Chunk.Ord),
		1 / float64(1+u.Ord),
		min(1, float64(len(u.Text))/300),
		c.pageCov,
		1 / float64(1+c.pageRank),
		0, 0,
		min(1, max(0, sim)),
		min(1, passageScore(q, c.hit.Chunk, u, want)/2),
		q.pairShare(pairsOf(u.display())),
		q.pairShare(chunkPairs(c.hit.Chunk)),
	}
	if q.list && u.Group > 0 {
		f[19] = 1
	}
	if want == procedureType && (opensWith(u, q.verb) || procedureType.holds(u)) {
		f[20] = 1
	}
	if c.hit.KeywordRank > 0 {
		f[6] = chunk / float64(c.hit.KeywordRank)
	}
	if want != anyType {
		// A question about money is answered by a sum of money, not by
		// another quantity (hours, days) in the same words.
		money := want == amountType && moneyAskRE.MatchString(q.text)
		if q.answers(u, want) && (!money || moneyRE.MatchString(u.display())) {
			f[8] = 1
		} else {
			f[9] = 1
		}
	}
	if u.Group > 0 {
		f[10] = 1
	}
	if hasCode(q) {
		if holdsCodes(q, u) {
			if u.Group > 0 && u.Key != "" && keyHoldsCode(q, u) {
				f[11] = 1
			}
		} else {
			f[12] = 1
		}
	}
	if u.meta {
		f[13] = 1
	}
	return f
}

// hasCode reports whether the question names a code.
func hasCode(q *question) bool {
	for _, t := range q.terms {
		if t.Code {
			return true
		}
	}
	return false
}

// sectionTerms are the analyzed words of a chunk's section path that its
// title does not hold: what the section is about within its page ("VPN
// error codes" on the VPN page is about error codes).
func sectionTerms(c docent.Chunk) map[string]bool {
	set := search.TermSet(strings.Join(c.Section, " "))
	for t := range search.TermSet(c.Title) {
		delete(set, t)
	}
	return set
}

// metaRE matches sentences about the document itself ("This page
// describes ...", "see below"), which share words with many questions
// and answer none.
var metaRE = regexp.MustCompile(`(?i)\b(this|the following) (page|document|doc|section|guide|policy|runbook|article)\b|\b(described|listed|explained|shown) below\b|\bsee below\b`)

// keyHoldsCode reports whether the key of row or item u is made of codes
// the question names ("FLT-423 — Meaning: …").
func keyHoldsCode(q *question, u unit) bool {
	codes := map[string]bool{}
	for _, t := range q.terms {
		if t.Code {
			codes[t.Term] = true
		}
	}
	key := search.Analyze(u.Key)
	for _, k := range key {
		if !codes[k] {
			return false
		}
	}
	return len(key) > 0
}

// PassageObservation is one scored passage of a question, as a
// calibration run records it: what it says, where it is, and its
// features.
type PassageObservation struct {
	// Question is the question (or part) the passage was scored for.
	Question string
	// Text is the passage as quoted; DocID and Section locate its chunk.
	Text    string
	DocID   string
	Section []string
	// Features are the passage features, in the order of
	// PassageFeatureNames.
	Features []float64
}

// observations returns every scored passage of ps.
func (ps *passages) observations(question string) []PassageObservation {
	var out []PassageObservation
	for i := range ps.p {
		if len(ps.p[i]) == 0 {
			continue
		}
		h := ps.hits[i]
		c := ps.info(i)
		for k, u := range unitsOf(h.Chunk) {
			out = append(out, PassageObservation{Question: question, Text: u.display(), DocID: h.Chunk.DocID,
				Section: h.Chunk.Section, Features: passageFeatures(ps.q, c, u, ps.want, ps.sim(i, k))})
		}
	}
	return out
}

// passageScore ranks a unit by rules of thumb, each a general reading of
// what a question asks: the unit's coverage of the question (with its
// headings), raised ×quantityBoost when the question asks for an amount
// and the unit states one, ×listBoost for a row or item when it asks for
// a list; lowered ×typeMissPenalty when the unit lacks the kind of answer
// asked for (a unit that opens with the verb of "how do I <verb>" holds
// steps; "who" wants someone the question does not name), ×metaPenalty
// for a sentence about the page itself; plus the coverage of the question
// by the unit's section headings and earlyPrior/(1 + the chunk's position
// in its page).
func passageScore(q *question, c docent.Chunk, u unit, want answerType) float64 {
	cov := q.unitCoverage(u)
	switch {
	case want == procedureType && opensWith(u, q.verb):
		want = anyType
	case want == whoType && !q.namesSomeone(u):
		cov *= typeMissPenalty
		want = anyType
	}
	if q.list && u.Group > 0 {
		cov *= listBoost
	}
	switch {
	case want == amountType && unitStatesAmount(u):
		cov *= quantityBoost
	case !want.holds(u):
		cov *= typeMissPenalty
	}
	if u.meta {
		cov *= metaPenalty
	}
	return cov + q.coverage(sectionTerms(c)) + earlyPrior/float64(1+c.Ord)
}

// Rules of thumb of passageScore.
const (
	quantityBoost   = 1.5
	listBoost       = 1.2
	typeMissPenalty = 0.6
	metaPenalty     = 0.5
	earlyPrior      = 0.2
)

// pair is two analysed terms written one after the other (stopwords
// between them left out).
type pair struct{ a, b string }

// pairsOf returns the adjacent term pairs of text.
func pairsOf(text string) map[pair]bool {
	terms := search.Analyze(text)
	out := make(map[pair]bool, len(terms))
	for i := 1; i < len(terms); i++ {
		out[pair{terms[i-1], terms[i]}] = true
	}
	return out
}

// chunkPairs returns the adjacent term pairs of a chunk (cached with it).
func chunkPairs(c docent.Chunk) map[pair]bool { return cached(c).pairsOf() }

// pairs returns the question's adjacent content-term pairs, each with
// its weight (the sum of its terms' IDF).
func (q *question) pairs() map[pair]float64 {
	if q.pairW != nil {
		return q.pairW
	}
	w := q.weights()
	q.pairW = map[pair]float64{}
	var prev string
	for _, t := range search.Analyze(q.text) {
		if _, ok := w[t]; !ok {
			continue
		}
		if prev != "" && prev != t {
			q.pairW[pair{prev, t}] = w[prev] + w[t]
		}
		prev = t
	}
	return q.pairW
}

// pairShare is the weighted share of the question's pairs that set holds.
func (q *question) pairShare(set map[pair]bool) float64 {
	total, got := 0.0, 0.0
	for p, w := range q.pairs() {
		total += w
		if set[p] {
			got += w
		}
	}
	if total == 0 {
		return 0
	}
	return got / total
}
