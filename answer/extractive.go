package answer

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/docent-hq/docent"
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

var _ Generator = (*Extractive)(nil)

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
	quantityBoost = 1.5
	siblingRatio  = 0.8
	maxList       = 6
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
}

// Generate quotes units of the sources (see the scoring above), in source
// order and, within a source, document order; each unit is followed by
// its source's [n]. With a conflict it quotes the newer source first and
// the older second and says that they differ. Code is quoted only when
// the question asks how to do something. It returns empty text when no
// unit shares a term with the question.
func (e *Extractive) Generate(_ context.Context, req GenerateRequest) (GenerateResult, error) {
	maxUnits, maxSources := e.MaxUnits, e.MaxSources
	if maxUnits <= 0 {
		maxUnits = 4
	}
	if maxSources <= 0 {
		maxSources = 3
	}
	if len(req.Parts) > 0 {
		return GenerateResult{Text: e.parts(req, maxUnits)}, nil
	}
	sc := requestScorer(req)
	weight := sourceWeights(req.Sources)
	// A question about an amount, or two sources that differ in amounts,
	// is answered by the units that state one; a unit that lacks the kind
	// of answer asked for (a time, a procedure) is scored down.
	want := expectedType(req.Question)
	if want == anyType && (req.Conflict != nil || asksQuantity(req.Question) || moneyAskRE.MatchString(req.Question)) {
		want = amountType
	}
	command := asksCommand(req.Question)
	list := asksList(req.Question)
	money := want == amountType && moneyAskRE.MatchString(req.Question)
	perSource := make([][]scoredUnit, len(req.Sources))
	var all, every []scoredUnit
	for i, s := range req.Sources {
		if s.Hit.Injection != "" || injection.Addresses(s.Hit.Chunk.Text) {
			continue // text addressed to the assistant is never quoted as an answer
		}
		headCov := sc.coverage(sectionTerms(s.Hit.Chunk), nil, 0) + earlyBonus(s.Hit.Chunk)
		for _, u := range unitsOf(s.Hit.Chunk) {
			dangling := false
			if !command && len(u.Code) > 0 {
				u.Code, u.Terms, dangling = nil, termSet(u.Text), true
				u.kinds = unitKinds(u)
			}
			cov := sc.unitCoverage(u)
			lc := cov
			if list && u.Group > 0 {
				lc *= listBoost
			}
			if money && moneyRE.MatchString(u.display()) {
				lc *= moneyBoost
			}
			score := (unitScore(u, lc, want) + headingLift*headCov) * weight[i]
			if dangling {
				// "Install it with:" without its command says little.
				score *= 0.5
			}
			su := scoredUnit{unit: u, src: i, cov: cov, score: score}
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
			return GenerateResult{Text: conflictText(req, nu, ou)}, nil
		}
	}
	all = matchCodes(all, questionCodes(req.Question))
	if len(all) == 0 {
		return GenerateResult{}, nil
	}
	picked := pickUnits(all, every, sc, maxUnits, maxSources, list)
	// Readable order: sources in request order, units in document order
	// within a source.
	sort.SliceStable(picked, func(a, b int) bool {
		if picked[a].src != picked[b].src {
			return picked[a].src < picked[b].src
		}
		return picked[a].Ord < picked[b].Ord
	})
	parts := make([]string, len(picked))
	for i, u := range picked {
		parts[i] = cite(u.display(), req.Sources[u.src].N)
	}
	return GenerateResult{Text: strings.Join(parts, " ")}, nil
}

// unitsPerPart is the most units quoted for one part of a multi-part
// question.
const unitsPerPart = 2

// parts answers a multi-part question part by part: an answered part with
// units of its own sources, an uncertain part by pointing at its closest
// page, a part the docs do not cover by saying so.
func (e *Extractive) parts(req GenerateRequest, maxUnits int) string {
	var out []string
	quoted := map[string]bool{}
	for _, p := range req.Parts {
		switch p.Status {
		case docent.StatusAnswered:
			var srcs []Source
			for _, n := range p.Sources {
				if i := indexOfSource(req.Sources, n); i >= 0 {
					srcs = append(srcs, req.Sources[i])
				}
			}
			sub := GenerateRequest{Question: p.Ask, Query: p.Ask, Sources: srcs, Terms: p.Terms}
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
		if us[a].score != us[b].score {
			return us[a].score > us[b].score
		}
		if us[a].src != us[b].src {
			return us[a].src < us[b].src
		}
		return us[a].Ord < us[b].Ord
	})
}

// pickUnits chooses the units to quote (see the scoring above). list
// says that the question asks for a list, so that the rows or items alike
// to the best one are quoted with it.
func pickUnits(all, every []scoredUnit, sc *scorer, maxUnits, maxSources int, list bool) []scoredUnit {
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
	var picked []scoredUnit
	covered := map[string]bool{}
	srcs := map[int]bool{}
	has := map[string]bool{}
	take := func(u scoredUnit) bool {
		key := strconv.Itoa(u.src) + "\x00" + u.Text
		if has[key] || (!srcs[u.src] && len(srcs) == maxSources) {
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
	// Units that cover what the quoted ones do not.
	for len(picked) < maxUnits {
		bestGain, bi := 0.0, -1
		for i, u := range all {
			if u.score < first.score*keepRatio {
				break
			}
			if gain := sc.gain(u.Terms, covered); gain > bestGain {
				bestGain, bi = gain, i
			}
		}
		if bi < 0 || bestGain < minGain || !take(all[bi]) {
			break
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

// requestScorer builds a scorer from the request's terms, or from the
// question with equal weights when the request carries none.
func requestScorer(req GenerateRequest) *scorer {
	sc := &scorer{idf: map[string]float64{}}
	if len(req.Terms) > 0 {
		for t, w := range req.Terms {
			sc.terms = append(sc.terms, t)
			sc.idf[t] = w
			sc.total += w
		}
		sort.Strings(sc.terms)
		return sc
	}
	for _, t := range queryTerms(req.Question) {
		sc.terms = append(sc.terms, t)
		sc.idf[t] = 1
		sc.total++
	}
	return sc
}

// conflictText says that two sources differ, quoting the newer first.
func conflictText(req GenerateRequest, newer, older scoredUnit) string {
	n, o := req.Sources[newer.src], req.Sources[older.src]
	return fmt.Sprintf("Note: these sources differ; the most recent (%s) says \"%s\" [%d]; an older version (%s) says \"%s\" [%d].",
		describe(n), trimEnd(plainMarkers(newer.Text)), n.N, describe(o), trimEnd(plainMarkers(older.Text)), o.N)
}

// describe names a source as "Title, updated 2006-01-02".
func describe(s Source) string {
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

func indexOfSource(srcs []Source, n int) int {
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

// sourceWeights weighs the first source 1 and each further source by its
// fused retrieval score relative to the first's (at most 1), so that a
// well-matching sentence in a weakly retrieved chunk does not outrank the
// chunk the gate chose. Sources without scores weigh 1.
func sourceWeights(srcs []Source) []float64 {
	w := make([]float64, len(srcs))
	for i, s := range srcs {
		w[i] = 1
		if i > 0 && srcs[0].Hit.Score > 0 {
			w[i] = min(1, max(s.Hit.Score, 0)/srcs[0].Hit.Score)
		}
	}
	return w
}

// alikePair returns the two sides of a conflict: the best-scored unit of
// the newer source that has a counterpart in the older one, and that
// counterpart, the older unit most alike to it (Jaccard similarity of
// their words at least minAlike) with different amounts. newer must be
// sorted by score.
func alikePair(newer, older []scoredUnit) (scoredUnit, scoredUnit, bool) {
	for _, a := range newer {
		aa := amounts(a.Text)
		if len(aa) == 0 {
			continue
		}
		best, bestSim := -1, minAlike
		for i, b := range older {
			ab := amounts(b.Text)
			sim := jaccard(wordsOnly(a.unit), wordsOnly(b.unit))
			if len(ab) == 0 || sim < bestSim || len(minus(aa, ab)) == 0 || len(minus(ab, aa)) == 0 {
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
	theirs := amounts(other)
	best, bestShared := -1, -1
	for i, u := range units {
		differs := false
		for a := range amounts(u.Text) {
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
