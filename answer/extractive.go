package answer

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"

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
func NewExtractive() *Extractive { return &Extractive{MaxUnits: 4, MaxSources: 3} }

// Extractive scoring: a unit scores its IDF-weighted coverage of the
// question terms (terms found only in the headings above it count
// contextWeight), times its source's relevance relative to the most
// relevant source, plus rankBonus/(1+source index). Units scoring below
// keepRatio of the best unit are not quoted, so a further source is
// quoted only when one of its units matches nearly as well as the best.
// When the question names a code (GK-409, AMR-12, v1) and some unit holds
// it, only units that hold one of the question's codes are quoted.
const (
	quantityBoost = 1.5
	contextWeight = 0.5
	rankBonus     = 0.1
	keepRatio     = 0.6
)

// scoredUnit is a unit of one source with its score.
type scoredUnit struct {
	unit
	src   int // index into the request's sources
	score float64
	cov   float64
}

// Generate quotes 1 to MaxUnits units from at most MaxSources sources, in
// source order and, within a source, document order; each unit is followed
// by its source's [n]. With a conflict it quotes the newer source first
// and the older second and says that they differ. When the question
// names a code that some unit holds, units without one of its codes are
// not quoted. It returns empty text when no unit shares a term with the
// question.
func (e *Extractive) Generate(_ context.Context, req GenerateRequest) (GenerateResult, error) {
	maxUnits, maxSources := e.MaxUnits, e.MaxSources
	if maxUnits <= 0 {
		maxUnits = 4
	}
	if maxSources <= 0 {
		maxSources = 3
	}
	sc := requestScorer(req)
	weight := sourceWeights(req.Sources)
	// A question about an amount, or two sources that differ in amounts,
	// is answered by the units that state one.
	quantity := req.Conflict != nil || asksQuantity(req.Question)
	perSource := make([][]scoredUnit, len(req.Sources))
	var all []scoredUnit
	for i, s := range req.Sources {
		for _, u := range splitUnits(s.Hit.Chunk) {
			cov := sc.coverage(u.Terms, u.Context, contextWeight)
			if cov == 0 {
				continue
			}
			score := cov*weight[i] + rankBonus/float64(1+i)
			if quantity && len(amounts(u.Text)) > 0 {
				score *= quantityBoost
			}
			su := scoredUnit{unit: u, src: i, cov: cov, score: score}
			perSource[i] = append(perSource[i], su)
			all = append(all, su)
		}
	}
	byScore := func(us []scoredUnit) {
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
	if c := req.Conflict; c != nil {
		newer, older := indexOfSource(req.Sources, c.Newer), indexOfSource(req.Sources, c.Older)
		if newer >= 0 && older >= 0 && len(perSource[newer]) > 0 && len(perSource[older]) > 0 {
			byScore(perSource[newer])
			byScore(perSource[older])
			nu := differing(perSource[newer], req.Sources[older].Hit.Chunk.Text, nil)
			ou := differing(perSource[older], req.Sources[newer].Hit.Chunk.Text, nu.Terms)
			return GenerateResult{Text: conflictText(req, nu, ou)}, nil
		}
	}
	all = matchCodes(all, questionCodes(req.Question))
	if len(all) == 0 {
		return GenerateResult{}, nil
	}
	byScore(all)
	cut := all[0].score * keepRatio
	var picked []scoredUnit
	srcOrder := []int{}
	seenText := map[string]bool{}
	for _, u := range all {
		if len(picked) == maxUnits || u.score < cut {
			break
		}
		if seenText[u.Text] {
			continue
		}
		if !containsInt(srcOrder, u.src) {
			if len(srcOrder) == maxSources {
				continue
			}
			srcOrder = append(srcOrder, u.src)
		}
		seenText[u.Text] = true
		picked = append(picked, u)
	}
	// Readable order: sources in order of their best unit, units in
	// document order within a source.
	rank := map[int]int{}
	for i, s := range srcOrder {
		rank[s] = i
	}
	sort.SliceStable(picked, func(a, b int) bool {
		if picked[a].src != picked[b].src {
			return rank[picked[a].src] < rank[picked[b].src]
		}
		return picked[a].Ord < picked[b].Ord
	})
	parts := make([]string, len(picked))
	for i, u := range picked {
		parts[i] = cite(u.Text, req.Sources[u.src].N)
	}
	return GenerateResult{Text: strings.Join(parts, " ")}, nil
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
		describe(n), trimEnd(newer.Text), n.N, describe(o), trimEnd(older.Text), o.N)
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
func cite(text string, n int) string {
	return trimEnd(text) + " [" + strconv.Itoa(n) + "]."
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

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
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
				if !u.Terms[t] && !u.Context[t] {
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

// sourceWeights scales each source by its fused retrieval score relative
// to the best source's, so that a well-matching sentence in a weakly
// retrieved chunk does not outrank the chunks retrieval trusts most.
// Sources without scores (all zero) weigh 1.
func sourceWeights(srcs []Source) []float64 {
	best := 0.0
	for _, s := range srcs {
		best = max(best, s.Hit.Score)
	}
	w := make([]float64, len(srcs))
	for i, s := range srcs {
		w[i] = 1
		if best > 0 {
			w[i] = max(s.Hit.Score, 0) / best
		}
	}
	return w
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
var quantityRE = regexp.MustCompile(`(?i)\b(how (much|many|long|often|far|soon|big|large)|what (is|are|'s) the (limit|maximum|max|minimum|min|amount|rate|price|cost|fee|deadline|allowance|per diem|threshold))\b`)

// asksQuantity reports whether the question asks for an amount.
func asksQuantity(question string) bool { return quantityRE.MatchString(question) }
