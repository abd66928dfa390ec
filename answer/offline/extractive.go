package offline

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/internal/injection"
	"github.com/docent-hq/docent/search"
)

// Extractive is the offline Generator: it quotes the sentences of the
// sources that best match the question and cites each one. It needs no
// network and no model, and it never writes a word that is not in a source.
type Extractive struct {
	// MaxUnits is the most sentences (list items, table rows) quoted; default 4.
	MaxUnits int
	// MaxSources is the most sources quoted from; default 3.
	MaxSources int
}

var _ answer.Generator = (*Extractive)(nil)

// NewExtractive returns an Extractive generator with the defaults.
func NewExtractive() *Extractive { return &Extractive{MaxUnits: 6, MaxSources: 3} }

// Extractive scoring: a unit scores its IDF-weighted coverage of the
// question terms (terms found only in the headings above it count
// sectionWeight, only in the title titleWeight), times its source's weight (1 for the first source, the
// others by their retrieval score relative to the first's), times
// quantityBoost when the question asks for an amount and the unit states
// one. The answer opens with the best unit of the first source that
// scores within keepRatio of the best unit overall; a unit that
// introduces a list (it ends in ":") brings the list, and a row or item
// brings the rows or items of its table or list that score as well
// (within siblingRatio). Further units are added while they cover
// question terms the quoted ones do not (at least minGain of the
// question's weight) and score within keepRatio of the opening unit.
// When the question names a code (GK-409, AMR-12, v1) and some unit holds
// it, only units that hold one of the question's codes are quoted.
const (
	siblingRatio = 0.8
	maxList      = 6
)

// keepRatio and minGain bound the further units quoted (see above).
const (
	keepRatio = 0.6
	minGain   = 0.15
)

// scoredUnit is a unit of one source with its score.
type scoredUnit struct {
	unit
	src   int // index into the request's sources
	score float64
	cov   float64
	// lead marks the passage the decision was made on.
	lead bool
}

// Generate quotes units of the sources (see the scoring above), in source
// order and, within a source, document order; each unit is followed by
// its source's [n]. When the request carries the offline gate's analysis
// (answer.Evidence.Basis), the question is not analysed again and the
// answer opens with the passage the decision was made on. With a conflict
// it quotes the newer source first and the older second and says that
// they differ. Code is quoted only when the question asks how to do
// something. It returns empty text when no unit shares a term with the
// question.
func (e *Extractive) Generate(_ context.Context, req answer.GenerateRequest) (answer.GenerateResult, error) {
	maxUnits, maxSources := e.MaxUnits, e.MaxSources
	if maxUnits <= 0 {
		maxUnits = 4
	}
	if maxSources <= 0 {
		maxSources = 3
	}
	if len(req.Parts) > 0 {
		return answer.GenerateResult{Text: e.parts(req, maxUnits)}, nil
	}
	q, lead := questionFor(req)
	// A question about an amount, or two sources that differ in amounts,
	// is answered by the units that state one.
	want := expectedType(q.text)
	if want == anyType && (req.Conflict != nil || asksQuantity(q.text) || moneyAskRE.MatchString(q.text)) {
		want = amountType
	}
	ps := sourcePassages(req, q, lead, want)
	command := asksCommand(q.text)
	perSource := make([][]scoredUnit, len(req.Sources))
	var all, every []scoredUnit
	for i, s := range req.Sources {
		if s.Hit.Injection != "" || injection.Addresses(s.Hit.Chunk.Text) {
			continue // text addressed to the assistant is never quoted as an answer
		}
		probs := ps.forChunk(i, s.Hit)
		for k, u := range unitsOf(s.Hit.Chunk) {
			score := probs[k]
			if !command && len(u.Code) > 0 {
				// "Install it with:" without its command says little.
				u.Code, u.Terms = nil, search.TermSet(u.Text)
				u.kinds = unitKinds(u)
				score *= 0.5
			}
			cov := q.unitCoverage(u)
			su := scoredUnit{unit: u, src: i, cov: cov, score: score}
			if lead != nil && i == 0 && s.Hit.Chunk.ID == lead.chunk && u.Ord == lead.best.u.Ord {
				su.lead = true
			}
			every = append(every, su)
			if cov == 0 {
				continue
			}
			perSource[i] = append(perSource[i], su)
			all = append(all, su)
		}
	}
	if c := req.Conflict; c != nil {
		newer, older := indexOfSource(req.Sources, c.Newer), indexOfSource(req.Sources, c.Older)
		if newer >= 0 && older >= 0 && len(perSource[newer]) > 0 && len(perSource[older]) > 0 {
			byScore(perSource[newer])
			byScore(perSource[older])
			nu, ou, ok := alikePair(perSource[newer], perSource[older])
			if !ok {
				nu = differing(perSource[newer], req.Sources[older].Hit.Chunk.Text, nil)
				ou = differing(perSource[older], req.Sources[newer].Hit.Chunk.Text, nu.Terms)
			}
			return answer.GenerateResult{Text: conflictText(req, nu, ou, c.Dated)}, nil
		}
	}
	all = matchCodes(all, questionCodes(q.text))
	if len(all) == 0 {
		return answer.GenerateResult{}, nil
	}
	picked := pickUnits(all, every, q, want, maxUnits, maxSources)
	// Readable order: the passage the decision was made on first, then
	// sources in request order, units in document order within a source.
	sort.SliceStable(picked, func(a, b int) bool {
		if picked[a].lead != picked[b].lead {
			return picked[a].lead
		}
		if picked[a].src != picked[b].src {
			return picked[a].src < picked[b].src
		}
		return picked[a].Ord < picked[b].Ord
	})
	parts := make([]string, len(picked))
	for i, u := range picked {
		parts[i] = cite(u.display(), req.Sources[u.src].N)
	}
	return answer.GenerateResult{Text: strings.Join(parts, " ")}, nil
}

// sourcePassages returns the passage probabilities the answer quotes by:
// the gate's, when the request carries them, else the default model's
// over the sources in their order.
func sourcePassages(req answer.GenerateRequest, q *question, lead *basis, want answerType) *sourceScores {
	ss := &sourceScores{q: q, want: want, model: DefaultPassage, srcs: req.Sources}
	if lead != nil && lead.ps != nil {
		ss.gate, ss.model = lead.ps, lead.ps.model
	}
	hits := make([]docent.Hit, len(req.Sources))
	sets := make([]map[string]bool, len(req.Sources))
	for i, s := range req.Sources {
		ss.top = max(ss.top, s.Hit.Score)
		hits[i], sets[i] = s.Hit, termsOf(s.Hit.Chunk)
	}
	ss.pageRank, ss.pageCov = pageStats(q, hits, sets)
	return ss
}

// sourceScores gives each source's unit probabilities.
type sourceScores struct {
	q     *question
	want  answerType
	model PassageModel
	gate  *passages
	srcs  []answer.Source
	top   float64
	// pageRank and pageCov describe each source's page among the sources.
	pageRank []int
	pageCov  []float64
}

// forChunk returns the probabilities of the units of source i, by unit
// order: the gate's when it scored the chunk, else scored now with the
// source's position as its rank.
func (ss *sourceScores) forChunk(i int, h docent.Hit) []float64 {
	units := unitsOf(h.Chunk)
	out := make([]float64, len(units))
	if ss.gate != nil {
		if _, ok := ss.gate.of(h.Chunk.ID, 0); ok {
			for k := range units {
				out[k], _ = ss.gate.of(h.Chunk.ID, k)
			}
			return out
		}
	}
	fused := 1.0
	if ss.top > 0 {
		fused = max(0, h.Score) / ss.top
	}
	c := candidateInfo{rank: i, fused: fused, hit: h, set: termsOf(h.Chunk), pageRank: ss.pageRank[i], pageCov: ss.pageCov[i]}
	for k, u := range units {
		out[k] = ss.model.score(passageFeatures(ss.q, c, u, ss.want, 0))
	}
	return out
}

// questionFor returns the analysed question of a request: the gate's,
// when the request carries it (with the passage the decision was made
// on), else the question analysed with the request's term weights.
func questionFor(req answer.GenerateRequest) (*question, *basis) {
	if b, ok := req.Basis.(*basis); ok && b != nil && b.q != nil {
		return b.q, b
	}
	text := req.Question
	if req.Query != "" {
		text = req.Query
	}
	q := newQuestion(text, nil, nil)
	if len(req.Terms) > 0 {
		q.terms, q.total = nil, 0
		for _, t := range slices.Sorted(maps.Keys(req.Terms)) {
			w := req.Terms[t]
			q.terms = append(q.terms, qterm{Term: t, Word: t, IDF: w, DF: -1, Share: 1})
			q.total += w
		}
		q.sc = q.scorer()
	}
	return q, nil
}

// unitsPerPart is the most units quoted for one part of a multi-part
// question.
const unitsPerPart = 2

// parts answers a multi-part question part by part: an answered part with
// units of its own sources, an uncertain part by pointing at its closest
// page, a part the docs do not cover by saying so.
func (e *Extractive) parts(req answer.GenerateRequest, maxUnits int) string {
	var out []string
	quoted := map[string]bool{}
	for _, p := range req.Parts {
		switch p.Status {
		case docent.StatusAnswered:
			var srcs []answer.Source
			for _, n := range p.Sources {
				if i := indexOfSource(req.Sources, n); i >= 0 {
					srcs = append(srcs, req.Sources[i])
				}
			}
			sub := answer.GenerateRequest{Question: p.Ask, Query: p.Ask, Sources: srcs, Terms: p.Terms}
			sub.Parts = nil
			res, _ := (&Extractive{MaxUnits: min(maxUnits, unitsPerPart), MaxSources: sourcesPerPart}).Generate(context.Background(), sub)
			for _, sentence := range splitCited(res.Text) {
				if !quoted[sentence] {
					quoted[sentence] = true
					out = append(out, sentence)
				}
			}
		case docent.StatusUncertain:
			out = append(out, fmt.Sprintf("I couldn't confirm %s in the docs; the closest page is [%d].", quote(p.Ask), p.Sources[0]))
		default:
			out = append(out, fmt.Sprintf("I couldn't find %s in the docs.", quote(p.Ask)))
		}
	}
	return strings.Join(out, " ")
}

// citedRE matches one quoted unit with its marker: "text [n]."
var citedRE = regexp.MustCompile(`[^\[]*?\[\d+\]\.`)

// splitCited splits generated text into its cited units.
func splitCited(text string) []string {
	var out []string
	for _, m := range citedRE.FindAllString(text, -1) {
		out = append(out, strings.TrimSpace(m))
	}
	return out
}

// quote puts a part of the question in quotes for a reply, without its
// final punctuation.
func quote(ask string) string {
	return "\"" + trimEnd(strings.ReplaceAll(ask, "\"", "'")) + "\""
}

// byScore sorts units best first; ties by source, then document order.
func byScore(us []scoredUnit) {
	sort.SliceStable(us, func(a, b int) bool {
		// Scores within scoreTie of each other are a tie: the entries of
		// one table or list score alike, and a question that names none of
		// them is answered in the order the page gives them.
		if d := us[a].score - us[b].score; d > scoreTie || d < -scoreTie {
			return us[a].score > us[b].score
		}
		if us[a].src != us[b].src {
			return us[a].src < us[b].src
		}
		return us[a].Ord < us[b].Ord
	})
}

// scoreTie is how close two passage scores are to count as equal.
const scoreTie = 0.005

// pickUnits chooses the units to quote (see the scoring above). list
// says that the question asks for a list, so that the rows or items alike
// to the best one are quoted with it.
func pickUnits(all, every []scoredUnit, q *question, want answerType, maxUnits, maxSources int) []scoredUnit {
	sc, list := q.sc, q.list
	byScore(all)
	best := all[0].score
	first := all[0]
	for _, u := range all {
		if u.src < first.src && u.score >= best*keepRatio {
			first = u
		}
		if u.src == 0 {
			break
		}
	}
	// The passage the decision was made on opens the answer.
	for _, u := range all {
		if u.lead {
			first = u
			break
		}
	}
	var picked []scoredUnit
	covered := map[string]bool{}
	srcs := map[int]bool{}
	has := map[string]bool{}
	take := func(u scoredUnit) bool {
		key := strconv.Itoa(u.src) + "\x00" + u.Text
		if has[key] || (!srcs[u.src] && len(srcs) == maxSources) {
			return false
		}
		// An instruction to approve, share or switch off a security
		// control is quoted only as the passage that answers, never as
		// context around it.
		if len(picked) > 0 && u.cov < sensitiveCover && sensitiveRE.MatchString(u.Text) {
			return false
		}
		has[key] = true
		srcs[u.src] = true
		picked = append(picked, u)
		for t := range u.Terms {
			covered[t] = true
		}
		return true
	}
	take(first)
	// An opening sentence that refers back ("Therefore, labels go in the
	// deploy part") brings the sentence before it, which it rests on.
	if first.Kind == kindSentence && refersBack(first.Text) {
		for _, u := range every {
			if u.src == first.src && u.Ord == first.Ord-1 && u.Kind == kindSentence && !u.meta {
				take(u)
				break
			}
		}
	}
	// The opening sentence's paragraph, when short: the sentences around
	// the best one carry its subject, its condition or its amount.
	if first.Kind == kindSentence && first.Para > 0 {
		var para []scoredUnit
		for _, u := range every {
			if u.src == first.src && u.Para == first.Para && !u.meta {
				para = append(para, u)
			}
		}
		if len(para) <= maxParagraph {
			for _, u := range para {
				take(u)
			}
		}
	}
	// A table or list keyed by name answers for every entry when the
	// question names none of them ("what's the rate limit" over a table of
	// plans); naming one ("for Growth") keeps the answer to its row.
	keyedAll := first.Group > 0 && first.Key != "" && !namesKey(all, first, sc)
	// The list a unit introduces, or the rows and items alike to it.
	limit := max(maxUnits, maxList)
	for _, u := range all {
		if len(picked) >= limit {
			break
		}
		if u.src != first.src || u.Group == 0 {
			continue
		}
		// Items of one list that score as well go together (the next
		// rule of a list of rules often finishes the first); rows only
		// when the question asks for a list or names none of the rows.
		alike := first.Group > 0 && u.Group == first.Group && u.score >= first.score*siblingRatio
		if alike && (list || keyedAll || (first.Kind == kindItem && u.Kind == kindItem)) {
			take(u)
		}
	}
	// Units that cover what the quoted ones do not; one that refers back
	// to what comes before it only after that ("The default for this
	// option is -1" is about the option its own section names, which the
	// answer may not be about).
	for len(picked) < maxUnits {
		bestGain, bi := 0.0, -1
		for i, u := range all {
			if u.score < first.score*keepRatio {
				break
			}
			if refersBack(u.Text) && !slices.ContainsFunc(picked, func(p scoredUnit) bool { return p.src == u.src && p.Ord == u.Ord-1 }) {
				continue
			}
			if gain := sc.gain(u.Terms, covered); gain > bestGain {
				bestGain, bi = gain, i
			}
		}
		if bi < 0 || bestGain < minGain || !take(all[bi]) {
			break
		}
	}
	// A question that asks for a kind of answer (an amount, a time, a
	// person) gets the unit of the opening passage's chunk that states
	// one, when nothing quoted does ("how many by default": "The default
	// is to run 4 file transfers in parallel" under the option's
	// description).
	if want != anyType && !slices.ContainsFunc(picked, func(p scoredUnit) bool { return q.answers(p.unit, want) }) {
		for _, u := range all { // best first
			if u.src == first.src && q.answers(u.unit, want) {
				take(u)
				break
			}
		}
	}
	// A unit that introduces a list ("Use one of:") brings the list, and
	// two items of one short list bring the rest of it: half a list
	// reads as the whole.
	for i := 0; i < len(picked); i++ {
		for _, u := range listOf(every, picked[i], picked) {
			take(u)
		}
	}
	return picked
}

// backRefRE matches a sentence that refers back to something named
// before it: a pronoun as its subject, a connective that draws on what
// came before ("Therefore", "In this case"), or a demonstrative among its
// first words ("It defaults to 10", "These are kept", "The default value
// for this option is -1").
var backRefRE = regexp.MustCompile(`^(?i)(?:(?:it|they|its|their|this|these|those|such|therefore|thus|hence|consequently|otherwise|as a result|in (?:this|that|which) case)\b|(?:\S+\s+){0,4}(?:this|these|those)\s+\pL)`)

// refersBack reports whether text opens by referring back (backRefRE).
func refersBack(text string) bool { return backRefRE.MatchString(text) }

// sensitiveRE matches an instruction to approve, accept, share, disable or
// bypass something: followed in the wrong situation (an unexpected
// sign-in prompt, a request for a code), it does harm.
var sensitiveRE = regexp.MustCompile(`(?i)\b(approve|accept|allow|confirm|share|forward|send|give|disable|turn off|switch off|deactivate|bypass|skip|ignore|whitelist|allowlist|grant)\b`)

// sensitiveCover is the share of the question a sensitive instruction
// must cover itself to be quoted beside the answering passage.
const sensitiveCover = 0.5

// maxParagraph is the most sentences a paragraph may have to be quoted
// whole around its best sentence.
const maxParagraph = 5

// listOf returns the list that u introduces (u ends in ":" and holds no
// code: the list, table or nested items right after it), or, when u is
// an item and another item of its list is picked too, the rest of that
// list; at most maxList units, nil when there is none or it is longer.
func listOf(every []scoredUnit, u scoredUnit, picked []scoredUnit) []scoredUnit {
	var chunk []scoredUnit
	for _, o := range every {
		if o.src == u.src {
			chunk = append(chunk, o)
		}
	}
	sort.SliceStable(chunk, func(a, b int) bool { return chunk[a].Ord < chunk[b].Ord })
	pos := -1
	for i, o := range chunk {
		if o.Ord == u.Ord {
			pos = i
		}
	}
	if pos < 0 {
		return nil
	}
	var out []scoredUnit
	if strings.HasSuffix(u.Text, ":") && len(u.Code) == 0 {
	list:
		for _, o := range chunk[pos+1:] {
			switch {
			case u.Kind == kindSentence && o.Group > 0 && (len(out) == 0 || o.Group == out[0].Group):
			case u.Kind == kindItem && !u.Sub && o.Kind == kindItem && o.Sub && o.Group == u.Group:
			default:
				break list
			}
			out = append(out, o)
		}
		if len(out) > maxList {
			return nil
		}
		return out
	}
	if u.Kind != kindItem {
		return nil
	}
	// The items at u's level: every top-level item of its list, or the
	// nested items of its parent.
	var run []scoredUnit
	if !u.Sub {
		for _, o := range chunk {
			if o.Kind == kindItem && o.Group == u.Group && !o.Sub {
				run = append(run, o)
			}
		}
	} else {
		lo, hi := pos, pos
		for lo > 0 && chunk[lo-1].Group == u.Group && chunk[lo-1].Sub {
			lo--
		}
		for hi+1 < len(chunk) && chunk[hi+1].Group == u.Group && chunk[hi+1].Sub {
			hi++
		}
		run = chunk[lo : hi+1]
	}
	if len(run) > maxList {
		return nil
	}
	n := 0
	for _, o := range run {
		for _, p := range picked {
			if p.src == o.src && p.Ord == o.Ord {
				n++
				break
			}
		}
	}
	if n < 2 {
		return nil
	}
	return run
}

// namesKey reports whether the question names one of the keys of u's
// table or list.
func namesKey(all []scoredUnit, u scoredUnit, sc *scorer) bool {
	for _, o := range all {
		if o.src != u.src || o.Group != u.Group || o.Key == "" {
			continue
		}
		terms := search.Analyze(o.Key)
		if len(terms) == 0 {
			continue
		}
		named := true
		for _, t := range terms {
			if _, ok := sc.idf[t]; !ok {
				named = false
				break
			}
		}
		if named {
			return true
		}
	}
	return false
}

// conflictText says that two sources differ, quoting the newer first;
// when neither is known to be newer (dated unset), the better ranked
// first, and neither is called the more recent.
func conflictText(req answer.GenerateRequest, newer, older scoredUnit, dated bool) string {
	n, o := req.Sources[newer.src], req.Sources[older.src]
	format := "Note: these sources differ, and neither is more recent than the other: one (%s) says \"%s\" [%d]; another (%s) says \"%s\" [%d]."
	if dated {
		format = "Note: these sources differ; the most recent (%s) says \"%s\" [%d]; an older version (%s) says \"%s\" [%d]."
	}
	return fmt.Sprintf(format, describe(n), trimEnd(plainMarkers(newer.Text)), n.N, describe(o), trimEnd(plainMarkers(older.Text)), o.N)
}

// describe names a source as "Title, updated 2006-01-02".
func describe(s answer.Source) string {
	c := s.Hit.Chunk
	if c.UpdatedAt.IsZero() {
		return c.Title
	}
	return c.Title + ", updated " + c.UpdatedAt.Format("2006-01-02")
}

// cite puts the marker before the unit's final punctuation: "text [n]."
// Bracketed numbers of the source's own ("[14]", a paper's reference or
// "61 [9] years") are quoted in parentheses, so that they are not read
// as markers naming the answer's sources.
func cite(text string, n int) string {
	return trimEnd(plainMarkers(text)) + " [" + strconv.Itoa(n) + "]."
}

// sourceMarkerRE is a bracketed number or group of numbers in a source's
// text that the Verifier would read as a marker: [14], [1, 2], [2-3].
var sourceMarkerRE = regexp.MustCompile(`\[(\s*\d+\s*(?:[,;–-]\s*\d+\s*)*)\]`)

// plainMarkers writes the bracketed numbers of quoted source text in
// parentheses ("[14]" becomes "(14)"); only the generator's own markers
// may name sources.
func plainMarkers(text string) string {
	return sourceMarkerRE.ReplaceAllString(text, "($1)")
}

// trimEnd removes final sentence punctuation.
func trimEnd(s string) string {
	return strings.TrimRight(strings.TrimSpace(s), ".!?:;,")
}

func indexOfSource(srcs []answer.Source, n int) int {
	for i, s := range srcs {
		if s.N == n {
			return i
		}
	}
	return -1
}

// questionCodes returns the identifiers a question names, as the analyzed
// terms of each: tokens (runs of letters, digits, '-', '_' and '.') that
// mix letters and digits, such as error codes, model numbers and versions.
// A question that names a code asks about that exact thing.
func questionCodes(question string) [][]string {
	var codes [][]string
	seen := map[string]bool{}
	for _, tok := range strings.FieldsFunc(question, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_' && r != '.'
	}) {
		tok = strings.Trim(tok, "-_.")
		if !strings.ContainsFunc(tok, unicode.IsLetter) || !strings.ContainsFunc(tok, unicode.IsDigit) {
			continue
		}
		terms := search.Analyze(tok)
		key := strings.Join(terms, " ")
		if len(terms) == 0 || seen[key] {
			continue
		}
		seen[key] = true
		codes = append(codes, terms)
	}
	return codes
}

// matchCodes keeps, when some unit holds every term of one of the
// question's codes (in its text or headings), only the units that do: a
// table row for GK-401 or another system's 409 shares words with a
// question about GK-409 but answers something else. Without codes, or
// when no unit holds one, units are returned unchanged.
func matchCodes(units []scoredUnit, codes [][]string) []scoredUnit {
	if len(codes) == 0 {
		return units
	}
	holds := func(u scoredUnit) bool {
		for _, code := range codes {
			ok := true
			for _, t := range code {
				if !u.Terms[t] && !u.Context[t] && !u.Title[t] {
					ok = false
					break
				}
			}
			if ok {
				return true
			}
		}
		return false
	}
	var kept []scoredUnit
	for _, u := range units {
		if holds(u) {
			kept = append(kept, u)
		}
	}
	if len(kept) == 0 {
		return units
	}
	return kept
}

// alikePair returns the two sides of a conflict: the best-scored unit of
// the newer source that has a counterpart in the older one, and that
// counterpart, the older unit most alike to it (Jaccard similarity of
// their words at least minAlike) with different amounts. newer must be
// sorted by score.
func alikePair(newer, older []scoredUnit) (scoredUnit, scoredUnit, bool) {
	for _, a := range newer {
		aa := search.Amounts(a.Text)
		if len(aa) == 0 {
			continue
		}
		best, bestSim := -1, minAlike
		for i, b := range older {
			ab := search.Amounts(b.Text)
			sim := jaccard(wordsOnly(a.unit), wordsOnly(b.unit))
			if a.Key != "" && b.Key != "" {
				// Two rows or items: alike when their keys are ("United
				// States (all cities)" and "United States").
				sim = max(sim, jaccard(search.TermSet(a.Key), search.TermSet(b.Key)))
			}
			if len(ab) == 0 || sim < bestSim || len(search.Minus(aa, ab)) == 0 || len(search.Minus(ab, aa)) == 0 {
				continue
			}
			best, bestSim = i, sim
		}
		if best >= 0 {
			return a, older[best], true
		}
	}
	return scoredUnit{}, scoredUnit{}, false
}

// differing returns the unit that states an amount the other source does
// not, so that a conflict is quoted where the sources differ: the
// best-scored such unit, or, given like (the other side's quoted unit's
// terms), the one sharing most terms with it, so both quotes speak of the
// same thing (the same table row, say). Without such a unit it returns the
// best unit. units must be sorted by score.
func differing(units []scoredUnit, other string, like map[string]bool) scoredUnit {
	theirs := search.Amounts(other)
	best, bestShared := -1, -1
	for i, u := range units {
		differs := false
		for a := range search.Amounts(u.Text) {
			if !theirs[a] {
				differs = true
				break
			}
		}
		if !differs {
			continue
		}
		shared := 0
		for t := range u.Terms {
			if like[t] {
				shared++
			}
		}
		if shared > bestShared {
			best, bestShared = i, shared
		}
		if like == nil {
			break
		}
	}
	if best < 0 {
		return units[0]
	}
	return units[best]
}

// quantityRE matches questions that ask for an amount, a count or a length.
var quantityRE = regexp.MustCompile(`(?i)\b(how (much|many|long|often|far|soon|big|large)|what(?:'s|s| is| are) the (\w+ )?(limit|maximum|max|minimum|min|amount|rate|price|cost|fee|deadline|allowance|per diem|threshold|cap))\b`)

// asksListRE matches questions that ask for a list of things.
var asksListRE = regexp.MustCompile(`(?i)\b(what|which) (are|were)\b|\blist\b|\bwhat are there\b|\b(what|which) (\w+ )?(kinds?|types?|levels?|tiers?|sections?|steps?|options?|plans?|categories|rules|requirements)\b|\bwhat \w+s (do|does|are|should|must|can)\b`)

// asksList reports whether the question asks for a list.
func asksList(question string) bool { return asksListRE.MatchString(question) }

// asksQuantity reports whether the question asks for an amount.
func asksQuantity(question string) bool {
	return quantityRE.MatchString(question) || expectedType(question) == amountType
}

// commandRE matches questions that ask how to do something, where a
// command is an answer.
var commandRE = regexp.MustCompile(`(?i)\b(how (do|can|should|would) (i|we|you)|how to|command|cli|script|install|run|restart|roll ?back|set ?up|configure|enable|disable|syntax)\b`)

// asksCommand reports whether a command may answer the question.
func asksCommand(question string) bool { return commandRE.MatchString(question) }

// A question about money ("what's the extra pay", "how much does it
// cost") is answered by a unit that states a sum of money over one that
// states another quantity (hours, days) with the same words.
var (
	moneyAskRE = regexp.MustCompile(`(?i)[$€£¥]|\b(pay|paid|cost|costs|price|prices|fee|fees|spend|spent|stipend|salary|wage|budget|allowance|reimburse\w*|charge|charged|money|cash|dollars?|euros?|pounds?)\b`)
	moneyRE    = regexp.MustCompile(`(?i)[$€£¥]\s?\d|\d\s?(usd|eur|gbp|dollars?|euros?|pounds?|cents)\b`)
)

// joinAnd joins words as "a", "a and b", "a, b and c".
func joinAnd(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
