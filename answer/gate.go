package answer

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// GateOptions tune the Relevance gate. Zero values take the defaults.
type GateOptions struct {
	// MaxSources is how many sources (one chunk per document) the
	// generator sees; default 4. A conflicting near-duplicate may add one.
	MaxSources int
	// MinScore is the answer threshold: the share of the question (IDF
	// weighted) that one unit of the closest page must cover for an
	// answer; 0 means DefaultMinScore.
	MinScore float64
	// Weights combine the per-candidate relevance components recorded in
	// Hit.Relevance; zero means DefaultWeights.
	Weights Weights
	// IDF, when set, gives corpus IDF for a term (search.Analyze form);
	// terms it does not know are estimated from the candidates.
	IDF func(term string) (float64, bool)
	// Corpus, when set, gives the corpus statistics: IDF for every term
	// (IDF then is not used) and which terms the docs hold at all.
	Corpus *CorpusStats
}

// Relevance is the offline Gate: it finds the closest page and the unit
// (sentence, list item, table row) on it that best covers the question,
// and decides between answered, uncertain and not found (see the package
// doc). Multi-part questions are judged part by part.
type Relevance struct {
	opts GateOptions
	log  *slog.Logger
}

var _ Gate = (*Relevance)(nil)

// NewRelevance returns the gate; log nil discards its debug logs.
func NewRelevance(opts GateOptions, log *slog.Logger) *Relevance {
	if opts.MaxSources <= 0 {
		opts.MaxSources = 4
	}
	if opts.MinScore == 0 {
		opts.MinScore = DefaultMinScore
	}
	if opts.Weights == (Weights{}) {
		opts.Weights = DefaultWeights
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Relevance{opts: opts, log: log}
}

// Gate parameters (see the package doc).
const (
	// evidencePages is how many pages, in rank order, may be the
	// closest page.
	evidencePages = 3
	// chunksPerPage is how many chunks of the closest page may be
	// sources.
	chunksPerPage = 3
	// overtake is how much better (in unit coverage) a lower-ranked page
	// must be to be chosen over the first page that does not hold an
	// answer.
	overtake = 0.2
	// sourceShare is the smallest best-unit coverage, relative to the
	// closest page's, of a further source.
	sourceShare = 0.6
	// maxCovered is the most names Decision.Covered lists.
	maxCovered = 8
)

// Gate judges the question (and each part of a multi-part question),
// setting Hit.Relevance on req.Hits.
func (g *Relevance) Gate(ctx context.Context, req GateRequest) (Decision, error) {
	corp, err := g.opts.Corpus.Get(ctx)
	if err != nil {
		return Decision{Status: docent.StatusNotFound}, err
	}
	query := req.Query
	if query == "" {
		query = req.Question
	}
	whole := g.judge(query, req.Hits, corp)
	g.setRelevance(req.Hits, whole.q)
	d := g.decide(whole)
	if len(req.SubQueries) > 1 && len(req.PartHits) == len(req.SubQueries) {
		parts := make([]verdict, len(req.SubQueries))
		for i, sq := range req.SubQueries {
			parts[i] = g.judge(sq, req.PartHits[i], corp)
			// The whole question carries context a part lacks ("how do
			// promotions work" alone finds build promotions): when the
			// whole question's candidates answer the part as well (the
			// same outcome, as much evidence), they are preferred.
			w := g.judge(sq, req.Hits, corp)
			better := outcomeRank(w.status) > outcomeRank(parts[i].status)
			if better || (outcomeRank(w.status) == outcomeRank(parts[i].status) && w.evidence >= parts[i].evidence) {
				parts[i] = w
			}
		}
		asks := req.Asks
		if len(asks) != len(req.SubQueries) {
			asks = req.SubQueries
		}
		if pd, ok := g.combine(whole, parts, asks); ok {
			d = pd
		}
	}
	g.log.DebugContext(ctx, "gate", slog.String("status", string(d.Status)), slog.String("detail", d.Detail))
	return d, nil
}

// setRelevance records each hit's absolute relevance (see the package doc).
func (g *Relevance) setRelevance(hits []docent.Hit, q *question) {
	sc := q.scorer(g.opts.Weights)
	for i, h := range hits {
		hits[i].Relevance = round4(sc.score(h, termsOf(h.Chunk)).Score)
	}
}

// unitHit is a unit of a candidate with its coverage of the question and
// the score that ranks it (coverage, raised when the question asks for
// an amount and the unit states one, lowered for a sentence about the
// page itself).
type unitHit struct {
	hit   int // index into the hits
	u     unit
	cov   float64
	score float64
}

// page is the evidence one document gives among the candidates.
type page struct {
	key   string
	hits  []int           // its candidates, best first
	terms map[string]bool // union of their terms
	cov   float64         // coverage of the question by terms
	mass  float64         // matched weight, in rare words
	best  unitHit         // its unit that covers the question best
}

// verdict is the judgment of one question (or part) on its candidates.
type verdict struct {
	text    string
	q       *question
	hits    []docent.Hit
	pages   []*page
	primary *page
	status  docent.Status
	missing []qterm
	covered string
	detail  string
	want    answerType
	// evidence is what the answer threshold is compared with (see judge).
	evidence float64
	// referral is the page the closest page's best unit says to follow,
	// cited before it; nil when there is none.
	referral *page
	// codeEntry is set when the closest page's best unit is a row or
	// item keyed by a code the question names (see codeEntry).
	codeEntry bool
}

// judge finds the closest page for text among hits and decides whether it
// answers (see the package doc).
func (g *Relevance) judge(text string, hits []docent.Hit, corp *Corpus) verdict {
	sets := make([]map[string]bool, len(hits))
	for i, h := range hits {
		sets[i] = termsOf(h.Chunk)
	}
	v := verdict{text: text, q: newQuestion(text, corp, g.opts.IDF, sets), hits: hits, status: docent.StatusNotFound}
	if len(hits) == 0 {
		v.detail = "no candidates"
		return v
	}
	if len(v.q.terms) == 0 {
		v.detail = "no content terms"
		return v
	}
	v.want = expectedType(text)
	v.pages = pages(hits, sets, v.q, v.want)
	v.primary = v.pages[0]
	// A page that holds every code of the question goes before a
	// higher-ranked one that lacks one ("GK-409" on the error codes page
	// rather than on the page that mentions GK-403).
	if lacksCode(v.q, v.primary) > 0 {
		for i, p := range v.pages {
			if i > 0 && i < evidencePages && lacksCode(v.q, p) < lacksCode(v.q, v.primary) {
				v.primary = p
			}
		}
	}
	for i, p := range v.pages {
		if i >= evidencePages {
			break
		}
		if v.primary.best.cov >= DefaultMinScore && v.q.answers(v.primary.best.u, v.want) {
			break
		}
		// A page whose best unit covers much more, or one that says
		// what was asked (a procedure, a time) when the first does not
		// and covers enough (sourceShare of the first's best unit).
		more := p.best.cov >= DefaultMinScore && p.best.cov >= v.primary.best.cov+overtake
		kind := !v.q.answers(v.primary.best.u, v.want) && v.q.answers(p.best.u, v.want) &&
			p.best.cov >= DefaultMinScore && p.best.cov >= sourceShare*v.primary.best.cov
		if more || kind {
			v.primary = p
		}
	}
	// A procedure that says to follow another page ("Set up your laptop
	// following Laptop Setup for New Hires") cites that page first when
	// it is among the candidates.
	if v.want == procedureType {
		v.referral = referred(v)
	}
	weak := true
	for i, p := range v.pages {
		if i < evidencePages && (p.cov >= notFoundCoverage || p.mass >= notFoundMass) {
			weak = false
		}
	}
	if weak && focused(v) {
		weak = false
	}
	if weak {
		v.detail = fmt.Sprintf("not found: closest page covers %.2f of the question", v.primary.cov)
		return v
	}
	if v.q.role != "" && !saysWho(v) {
		v.detail = fmt.Sprintf("not found: no candidate says who the %s is", v.q.role)
		return v
	}
	// A row or item about the code the question names ("FLT-423 —
	// Meaning: …") is the entry asked about, however much else the
	// question pastes around the code, when the best unit lacks the code
	// (a "how do I handle" question keeps its steps).
	if u, i, ok := codeEntry(v.q, v.primary, hits); ok && v.want != procedureType && !holdsCodes(v.q, v.primary.best.u) {
		v.primary.best = unitHit{hit: i, u: u, cov: v.q.unitCoverage(u), score: v.primary.best.score}
		v.codeEntry = true
	}
	v.missing, v.covered = gaps(v.q, v.primary, hits, v.want == amountType || asksQuantity(text))
	rel := g.chunkRelevance(v, sets)
	v.evidence = max(v.primary.best.cov, rel-chunkMargin)
	if v.codeEntry {
		v.evidence = max(v.evidence, g.opts.MinScore)
	}
	switch {
	case len(v.missing) > 0:
		v.status = docent.StatusUncertain
		v.detail = fmt.Sprintf("uncertain: the closest page lacks %s", wordsOf(v.missing))
	case !v.q.answers(v.primary.best.u, v.want) && lacksHead(v) != "":
		v.detail = fmt.Sprintf("not found: the closest page lacks %q and says nothing of the kind asked for", lacksHead(v))
	case !v.q.answers(v.primary.best.u, v.want):
		v.status = docent.StatusUncertain
		v.detail = fmt.Sprintf("uncertain: no unit says what was asked (%.2f, page %.2f)", v.primary.best.cov, v.primary.cov)
	case v.evidence < scantEvidence && v.primary.cov >= notFoundCoverage:
		v.detail = fmt.Sprintf("not found: evidence %.2f < %.2f (best unit covers %.2f, its chunk's relevance %.2f)",
			v.evidence, scantEvidence, v.primary.best.cov, rel)
	case v.evidence < g.opts.MinScore-typedMargin(v):
		v.status = docent.StatusUncertain
		v.detail = fmt.Sprintf("uncertain: evidence %.2f < %.2f (best unit covers %.2f, its chunk's relevance %.2f)",
			v.evidence, g.opts.MinScore-typedMargin(v), v.primary.best.cov, rel)
	default:
		v.status = docent.StatusAnswered
		v.detail = fmt.Sprintf("answer: evidence %.2f >= %.2f (best unit covers %.2f, its chunk's relevance %.2f)",
			v.evidence, g.opts.MinScore-typedMargin(v), v.primary.best.cov, rel)
	}
	return v
}

// scantEvidence: a closest page that holds most of the question's words
// (notFoundCoverage) and lacks no detail of it, but whose best unit, and
// the chunk holding it, cover less than this share of the question,
// mentions what was asked about only apart ("AMR-7", "battery" and
// "hours" on an FAQ that never says how long a battery lasts): not
// found. A page that covers little of the question passed the not-found
// rule on a few rare words and stays the closest page (uncertain): the
// asker used other words than the docs.
const scantEvidence = 0.25

// saysWho reports whether a unit of the first evidencePages pages says
// who holds the role a "who is the <role>" question asks about: docs
// that name the role ("needs CEO approval") but never its holder do not
// answer the question.
func saysWho(v verdict) bool {
	for i, p := range v.pages {
		if i >= evidencePages {
			break
		}
		for _, h := range p.hits {
			for _, u := range unitsOf(v.hits[h].Chunk) {
				if v.q.namesHolder(u) {
					return true
				}
			}
		}
	}
	return false
}

// lacksHead returns the word of a compound of the question ("holiday
// party") that the closest page lacks while holding the word that
// qualifies it ("holiday"), when that word is rare and the docs use it
// elsewhere, but none of the first evidencePages pages holds the two:
// the docs speak of the qualifier, not of the thing asked about. ""
// when there is none.
func lacksHead(v verdict) string {
	q, p := v.q, v.primary
	for _, t := range q.terms {
		h := q.next[t.Term]
		if h == "" || !p.terms[t.Term] || p.terms[h] {
			continue
		}
		both := false
		for i, o := range v.pages {
			if i < evidencePages && o.terms[t.Term] && o.terms[h] {
				both = true
			}
		}
		if both {
			continue
		}
		for _, o := range q.terms {
			if o.Term == h && o.DF > 0 && o.IDF >= rareShare*q.maxIDF {
				return o.Word
			}
		}
	}
	return ""
}

// Focus (see focused).
const (
	focusTop   = 5
	focusHits  = 4
	focusCover = 1.0 / 3
)

// focused reports whether retrieval agrees on the first page although it
// covers little of the question in words: it holds focusHits of the
// first focusTop candidates and focusCover of the question, and the
// question's words that no chunk holds weigh less than the words it
// matches. Such a question is asked in words other than the page's ("the
// vpn thing on my mac"), and the page is linked as the closest one
// instead of answering not found.
func focused(v verdict) bool {
	p := v.pages[0]
	n := 0
	for _, i := range p.hits {
		if i < focusTop {
			n++
		}
	}
	if n < focusHits || p.cov < focusCover {
		return false
	}
	unknown, matched := 0.0, 0.0
	for _, t := range v.q.terms {
		switch {
		case p.terms[t.Term]:
			matched += t.IDF
		case t.DF == 0:
			unknown += t.IDF
		}
	}
	return unknown < matched
}

// referred returns the page among v's candidates whose title the
// closest page's best unit names, when that page covers at least
// sourceShare of what the best unit does; nil otherwise.
func referred(v verdict) *page {
	text := strings.ToLower(v.primary.best.u.Text)
	for _, p := range v.pages {
		if p == v.primary {
			continue
		}
		title := strings.ToLower(v.hits[p.hits[0]].Chunk.Title)
		if len(strings.Fields(title)) < 2 || !strings.Contains(text, title) {
			continue
		}
		if p.best.cov >= sourceShare*v.primary.best.cov {
			return p
		}
	}
	return nil
}

// lacksCode counts the terms of q's codes (words mixing letters and
// digits) that page p does not hold.
func lacksCode(q *question, p *page) int {
	n := 0
	for _, t := range q.terms {
		if t.Code && !p.terms[t.Term] {
			n++
		}
	}
	return n
}

// chunkMargin is how much more than the answer threshold the relevance of
// the best unit's chunk must reach to count as evidence: the chunk as a
// whole answers when its relevance reaches MinScore + chunkMargin (0.5 at
// the default threshold) although no single unit covers enough.
const chunkMargin = DefaultChunkRelevance - DefaultMinScore

// chunkRelevance is the relevance of the chunk holding the closest page's
// best unit: the package doc's per-candidate signal (coverage, cosine,
// keyword), with IDF estimated over the candidates, so that a question
// word that no candidate holds weighs most.
func (g *Relevance) chunkRelevance(v verdict, sets []map[string]bool) float64 {
	terms := make([]string, len(v.q.terms))
	for i, t := range v.q.terms {
		terms[i] = t.Term
	}
	sc := newScorer(terms, sets, nil, g.opts.Weights)
	i := v.primary.best.hit
	return sc.score(v.hits[i], sets[i]).Score
}

// pages groups hits by document, in rank order, with each page's
// evidence. want is what the question asks for.
func pages(hits []docent.Hit, sets []map[string]bool, q *question, want answerType) []*page {
	var out []*page
	byKey := map[string]*page{}
	for i, h := range hits {
		k := docKey(h.Chunk)
		p := byKey[k]
		if p == nil {
			p = &page{key: k, terms: map[string]bool{}, best: unitHit{hit: i, cov: -1, score: -1}}
			byKey[k] = p
			out = append(out, p)
		}
		p.hits = append(p.hits, i)
		for t := range sets[i] {
			p.terms[t] = true
		}
		headCov := q.coverage(sectionTerms(h.Chunk)) + earlyBonus(h.Chunk)
		for _, u := range unitsOf(h.Chunk) {
			c := q.unitCoverage(u)
			if sc := q.unitScore(u, c, want) + headingLift*headCov; sc > p.best.score {
				p.best = unitHit{hit: i, u: u, cov: c, score: sc}
			}
		}
	}
	for _, p := range out {
		p.cov = q.coverage(p.terms)
		p.mass = q.mass(p.terms)
		if p.best.cov < 0 {
			p.best.cov = 0
		}
	}
	return out
}

// unitScore is the package unitScore for q's ask: a unit that opens with
// the verb of "how do I <verb>" holds a procedure.
func (q *question) unitScore(u unit, cov float64, want answerType) float64 {
	switch {
	case want == procedureType && opensWith(u, q.verb):
		want = anyType
	case want == whoType && !q.namesSomeone(u):
		return unitScore(u, cov*typeMissPenalty, anyType)
	}
	if q.list && u.Group > 0 {
		cov *= listBoost
	}
	return unitScore(u, cov, want)
}

// A question about money ("what's the extra pay", "how much does it
// cost") is answered by a unit that states a sum of money over one that
// states another quantity (hours, days) with the same words.
var (
	moneyAskRE = regexp.MustCompile(`(?i)[$€£¥]|\b(pay|paid|cost|costs|price|prices|fee|fees|spend|spent|stipend|salary|wage|budget|allowance|reimburse\w*|charge|charged|money|cash|dollars?|euros?|pounds?)\b`)
	moneyRE    = regexp.MustCompile(`(?i)[$€£¥]\s?\d|\d\s?(usd|eur|gbp|dollars?|euros?|pounds?|cents)\b`)
)

// moneyBoost raises, in the extractive answer, a unit stating a sum of
// money for a money question.
const moneyBoost = 2

// listBoost raises a row or item for a question that asks for a list.
const listBoost = 1.2

// unitScore ranks a unit with coverage cov for a question asking for
// want (see unitHit): a unit that states an asked amount is raised, one
// that lacks the asked kind of answer is lowered.
func unitScore(u unit, cov float64, want answerType) float64 {
	switch {
	case want == amountType && unitStatesAmount(u):
		cov *= quantityBoost
	case !want.holds(u):
		cov *= typeMissPenalty
	}
	if u.meta {
		cov *= metaPenalty
	}
	return cov
}

// Unit ranking (see the package doc).
const (
	// notFoundCoverage and notFoundMass: a page whose chunks cover less
	// than notFoundCoverage of the question and whose matched terms weigh
	// less than notFoundMass words that no chunk holds is not about the
	// question.
	notFoundCoverage = 0.5
	notFoundMass     = 1.3
	// headingLift weighs, in a unit's score, the coverage of the question
	// by the headings of its section (title words left out), so that units
	// of the section about the question outrank units that share words
	// with it elsewhere.
	headingLift = 1.0
	// earlyPrior favours the earlier sections of a page, where pages put
	// what they are mostly about, over reference and troubleshooting
	// sections further down: a chunk adds earlyPrior/(1+Ord) to the
	// heading coverage of its units.
	earlyPrior = 0.2
)

// earlyBonus is a chunk's share of earlyPrior.
func earlyBonus(c docent.Chunk) float64 { return earlyPrior / float64(1+c.Ord) }

// sectionTerms are the analyzed words of a chunk's section path that its
// title does not hold: what the section is about within its page ("VPN
// error codes" on the VPN page is about error codes).
func sectionTerms(c docent.Chunk) map[string]bool {
	set := termSet(strings.Join(c.Section, " "))
	for t := range termSet(c.Title) {
		delete(set, t)
	}
	return set
}

// typeMissPenalty scales the score of a unit that lacks the kind of
// answer the question asks for.
const typeMissPenalty = 0.6

// metaRE matches sentences about the document itself ("This page
// describes ...", "see below"), which share words with many questions
// and answer none.
var metaRE = regexp.MustCompile(`(?i)\b(this|the following) (page|document|doc|section|guide|policy|runbook|article)\b|\b(described|listed|explained|shown) below\b|\bsee below\b`)

// metaPenalty scales the score of a sentence about the page itself.
const metaPenalty = 0.5

// gaps returns the question's specific details that the closest page
// lacks, and, when the page answers with a table or list of named
// entries, those names. A term the page lacks is a detail when it is
// salient (a name or a code), or when no chunk holds it and the page's
// best unit is one named entry of a table or list: a city, country or
// plan not listed ("in france"), or a property the entries do not list
// ("does the PPO cover acupuncture").
func gaps(q *question, p *page, hits []docent.Hit, amount bool) (missing []qterm, covered string) {
	keyed := p.best.u.Group > 0 && p.best.u.Key != ""
	var page []unit
	for _, i := range p.hits {
		page = append(page, unitsOf(hits[i].Chunk)...)
	}
	// A place named in passing ("a flight to Tokyo") matters only when
	// the answer depends on it: an amount asked for, the answer an entry
	// of a table or list of named entries, or the page naming another
	// of the thing it qualifies ("the Munich office" on a page about
	// "the Oakland office").
	// A name the question itself widens ("work from Portugal … from
	// another country") is one instance of what the best unit covers
	// ("from another country for up to 30 days").
	general := generalizes(q, p.best.u)
	incidental := func(t qterm) bool {
		if t.Salient && t.Named && !t.Code && general {
			return true
		}
		return t.Salient && t.Named && !t.Code && !amount && !keyed && !q.qualifiesOther(page, t.Term)
	}
	for _, t := range q.terms {
		if p.terms[t.Term] {
			continue
		}
		switch {
		case incidental(t):
			continue
		case t.Salient:
		case t.DF == 0 && keyed && !t.Own:
		default:
			continue
		}
		missing = append(missing, t)
	}
	if len(missing) == 0 {
		if t, ok := soleMiss(q, p.best.u); ok && !incidental(t) && (t.Named || q.qualifiesOther([]unit{p.best.u}, t.Term)) {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 && keyed {
		covered = siblings(hits[p.best.hit], p.best.u)
	}
	return missing, covered
}

// soleMiss finds the detail a unit does not cover when it covers all the
// rest: the one term of the question that the corpus holds, that is
// rare (IDF at least rareShare of the largest), or that the question
// names after a preposition, and that the unit (with its headings) lacks,
// while the unit covers at least soleCover of the other
// terms' weight. "When is the company holiday party" over a list of public
// holidays lacks only "party".
func soleMiss(q *question, u unit) (qterm, bool) {
	var miss []qterm
	got, rest := 0.0, 0.0
	for _, t := range q.terms {
		w := unitWeight(u, t.Term)
		if w == 0 && (t.DF > 0 || t.Named) {
			miss = append(miss, t)
			continue
		}
		got += w * t.IDF
		rest += t.IDF
	}
	// The parts of one word ("wi-fi") miss together.
	if len(miss) > 1 && len(miss) == miss[0].Share && uniqueWords(miss)[0] == miss[0].Word && len(uniqueWords(miss)) == 1 {
		miss = miss[:1]
	}
	if len(miss) != 1 || miss[0].IDF*float64(miss[0].Share) < rareShare*q.maxIDF || rest == 0 || got/rest < soleCover {
		return qterm{}, false
	}
	return miss[0], true
}

// rareShare and soleCover tune soleMiss.
const (
	rareShare = 0.6
	soleCover = 0.8
)

// siblings lists the keys of the table or list that u belongs to, in
// document order ("United States, Germany, Canada"), "" when there are
// fewer than two.
func siblings(h docent.Hit, u unit) string {
	var keys []string
	seen := map[string]bool{}
	for _, o := range unitsOf(h.Chunk) {
		if o.Group != u.Group || o.Key == "" || seen[o.Key] {
			continue
		}
		seen[o.Key] = true
		keys = append(keys, o.Key)
	}
	if len(keys) < 2 {
		return ""
	}
	if len(keys) > maxCovered {
		keys = append(keys[:maxCovered], "others")
	}
	return joinAnd(keys)
}

// uniqueWords returns the words of terms as written, each once.
func uniqueWords(terms []qterm) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range terms {
		if !seen[t.Word] {
			seen[t.Word] = true
			out = append(out, t.Word)
		}
	}
	return out
}

// wordsOf returns the words of terms as written, joined for a reply.
func wordsOf(terms []qterm) string { return joinAnd(uniqueWords(terms)) }

// decide turns the whole question's verdict into a Decision.
func (g *Relevance) decide(v verdict) Decision {
	d := Decision{Status: v.status, Threshold: g.opts.MinScore, Detail: v.detail}
	if v.q != nil {
		d.Terms = v.q.weights()
	}
	if v.primary != nil {
		d.TopScore = round4(v.evidence)
	}
	switch v.status {
	case docent.StatusAnswered:
		d.Sources = g.sources(v)
		sc := v.q.scorer(g.opts.Weights)
		d.Conflict, d.ConflictNote = detectConflict(d.Sources, sc, map[int]bool{1: true})
		d.Detail += fmt.Sprintf(", %d sources", len(d.Sources))
	case docent.StatusUncertain:
		closest := v.primary
		if v.referral != nil {
			closest = v.referral
		}
		h := v.hits[closest.best.hit]
		d.Sources = []Source{{N: 1, Hit: h, Relevance: h.Relevance}}
		d.Missing = uniqueWords(v.missing)
		d.Covered = v.covered
	}
	return d
}

// sources picks the answer's sources: the closest page's best chunk
// first, then, in rank order, one chunk of every further page whose best
// unit covers at least sourceShare of what the closest page's does, or
// whose relevance is at least sourceShare of the best candidate's, up to
// MaxSources; and a near-duplicate version of a source that disagrees
// with it.
func (g *Relevance) sources(v verdict) []Source {
	var srcs []Source
	seen := map[string]bool{}
	add := func(i int) {
		h := v.hits[i]
		seen[docKey(h.Chunk)] = true
		srcs = append(srcs, Source{N: len(srcs) + 1, Hit: h, Relevance: h.Relevance})
	}
	if v.referral != nil {
		add(v.referral.best.hit)
	}
	add(v.primary.best.hit)
	// More chunks of the closest page that answer nearly as well: a
	// question often spans two sections of one page.
	for _, i := range v.primary.hits[:min(len(v.primary.hits), chunksPerPage)] {
		if len(srcs) == g.opts.MaxSources || i == v.primary.best.hit {
			continue
		}
		if best := bestUnit(v.hits[i], v.q, v.want); best.score > 0 && best.score >= sourceShare*v.primary.best.score {
			add(i)
		}
	}
	top := 0.0
	for _, h := range v.hits {
		top = max(top, h.Relevance)
	}
	for _, p := range v.pages {
		if len(srcs) == g.opts.MaxSources {
			break
		}
		answers := p.best.cov >= sourceShare*v.primary.best.cov
		relevant := v.hits[p.best.hit].Relevance >= sourceShare*top
		if seen[p.key] || p.best.cov <= 0 || !(answers || relevant) || superseded(p, v) {
			continue
		}
		add(p.best.hit)
	}
	sc := v.q.scorer(g.opts.Weights)
	for i, h := range v.hits {
		if seen[docKey(h.Chunk)] {
			continue
		}
		for _, s := range srcs {
			if ok, _, _ := conflicts(s.Hit.Chunk, h.Chunk, sc); ok {
				add(i)
				return srcs
			}
		}
	}
	return srcs
}

// bestUnit returns the unit of h that ranks best for q.
func bestUnit(h docent.Hit, q *question, want answerType) unitHit {
	best := unitHit{score: -1}
	headCov := q.coverage(sectionTerms(h.Chunk)) + earlyBonus(h.Chunk)
	for _, u := range unitsOf(h.Chunk) {
		c := q.unitCoverage(u)
		if sc := q.unitScore(u, c, want) + headingLift*headCov; sc > best.score {
			best = unitHit{u: u, cov: c, score: sc}
		}
	}
	return best
}

// superseded reports whether a newer version of page p (a document with
// the same title words, updated later) is among the candidates.
func superseded(p *page, v verdict) bool {
	c := v.hits[p.hits[0]].Chunk
	for _, o := range v.pages {
		oc := v.hits[o.hits[0]].Chunk
		if o.key != p.key && oc.UpdatedAt.After(c.UpdatedAt) && jaccard(titleTerms(c.Title), titleTerms(oc.Title)) >= minHeadingJaccard {
			return true
		}
	}
	return false
}

// combine judges a multi-part question from its parts' verdicts: each
// part that the docs answer brings its own sources (up to
// sourcesPerPart), an uncertain part its closest page. It reports false
// when no part finds anything, and the whole question is judged instead.
func (g *Relevance) combine(whole verdict, parts []verdict, asks []string) (Decision, bool) {
	status := docent.StatusNotFound
	for _, p := range parts {
		if outcomeRank(p.status) > outcomeRank(status) {
			status = p.status
		}
	}
	if status == docent.StatusNotFound {
		return Decision{}, false
	}
	d := Decision{Status: status, Threshold: g.opts.MinScore, Terms: whole.q.weights(), Detail: describeParts(parts)}
	byChunk := map[string]int{}
	add := func(h docent.Hit) int {
		if n, ok := byChunk[h.Chunk.ID]; ok {
			return n
		}
		n := len(d.Sources) + 1
		byChunk[h.Chunk.ID] = n
		d.Sources = append(d.Sources, Source{N: n, Hit: h, Relevance: h.Relevance})
		return n
	}
	for i, p := range parts {
		part := Part{Ask: asks[i], Status: p.status, Terms: p.q.weights()}
		switch p.status {
		case docent.StatusAnswered:
			for k, s := range g.sources(p) {
				if k == sourcesPerPart {
					break
				}
				part.Sources = append(part.Sources, add(s.Hit))
			}
		case docent.StatusUncertain:
			part.Sources = []int{add(p.hits[p.primary.best.hit])}
			part.Missing = uniqueWords(p.missing)
			if status == docent.StatusUncertain {
				d.Missing = append(d.Missing, part.Missing...)
				if d.Covered == "" {
					d.Covered = p.covered
				}
			}
		}
		if p.primary != nil {
			d.TopScore = max(d.TopScore, round4(p.evidence))
		}
		d.Parts = append(d.Parts, part)
	}
	if status == docent.StatusAnswered {
		lead := map[int]bool{}
		for _, p := range d.Parts {
			if len(p.Sources) > 0 {
				lead[p.Sources[0]] = true
			}
		}
		d.Conflict, d.ConflictNote = detectConflict(d.Sources, whole.q.scorer(g.opts.Weights), lead)
	}
	return d, true
}

// sourcesPerPart is the most sources an answered part brings.
const sourcesPerPart = 2

// outcomeRank orders outcomes: answered over uncertain over not found.
func outcomeRank(s docent.Status) int {
	switch s {
	case docent.StatusAnswered:
		return 2
	case docent.StatusUncertain:
		return 1
	}
	return 0
}

// describeParts is a short trace line for part statuses.
func describeParts(parts []verdict) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "part %d %s", i+1, p.status)
	}
	return b.String()
}

// typedMargin is how far under MinScore the evidence may fall when the
// question asks for a typed answer (an amount, a time, a condition, a
// person, a place) and the closest page's best unit states one: the
// sentence that says "Receipts are due within 10 days" answers "how many
// days do I have to send in the receipt" although it shares few of its
// words.
func typedMargin(v verdict) float64 {
	if v.want == anyType && whatToDoRE.MatchString(v.text) && instructs(v.hits[v.primary.best.hit].Chunk) {
		return procedureSlack
	}
	if v.want == anyType || !v.q.answers(v.primary.best.u, v.want) {
		return 0
	}
	if v.want == procedureType {
		return procedureSlack
	}
	return typedSlack
}

const typedSlack = 0.1

// procedureSlack is typedSlack for a "what do I do" question whose best
// unit is an instruction: smaller, as most units of a how-to page are.
const procedureSlack = 0.05

// instructs reports whether some unit of chunk c is an instruction.
func instructs(c docent.Chunk) bool {
	for _, u := range unitsOf(c) {
		if procedureType.holds(u) {
			return true
		}
	}
	return false
}

// whatToDoRE matches "what do I do", which asks for steps as "how do I"
// does.
var whatToDoRE = regexp.MustCompile(`(?i)\bwhat (?:do|can|should|must) (?:i|we|you) do\b`)

// codeEntry finds, on page p, a table row or list item whose key holds a
// code of the question (every term of "FLT-423"), and the candidate
// holding it.
func codeEntry(q *question, p *page, hits []docent.Hit) (unit, int, bool) {
	codes := map[string]bool{}
	for _, t := range q.terms {
		if t.Code {
			codes[t.Term] = true
		}
	}
	if len(codes) == 0 {
		return unit{}, 0, false
	}
	for _, i := range p.hits {
		for _, u := range unitsOf(hits[i].Chunk) {
			if u.Group == 0 || u.Key == "" {
				continue
			}
			key := search.Analyze(u.Key)
			hit := len(key) > 0
			for _, k := range key {
				hit = hit && codes[k]
			}
			if hit {
				return u, i, true
			}
		}
	}
	return unit{}, 0, false
}

// holdsCodes reports whether u holds every code term of the question.
func holdsCodes(q *question, u unit) bool {
	for _, t := range q.terms {
		if t.Code && unitWeight(u, t.Term) == 0 {
			return false
		}
	}
	return true
}

// otherRE finds a noun the question widens: "another country", "other
// offices", "a different city".
var otherRE = regexp.MustCompile(`(?i)\b(?:another|other|any|a different|a foreign)\s+(\w+)`)

// generalizes reports whether the question widens a noun ("another
// country") that unit u holds.
func generalizes(q *question, u unit) bool {
	for _, m := range otherRE.FindAllStringSubmatch(q.text, -1) {
		for _, t := range search.Analyze(m[1]) {
			if unitWeight(u, t) > 0 {
				return true
			}
		}
	}
	return false
}
