package answer

import (
	"context"
	"regexp"
	"strings"
	"unicode"

	asks "github.com/docent-hq/docent/internal/question"
)

// Standalone is the offline Rewriter. It makes the question a standalone
// query in the docs' own spelling, and splits a question with several asks
// into parts:
//
//   - A follow-up ("and for contractors?", "what about Germany") — a
//     question that starts with a continuation word or has fewer than two
//     content terms — is prefixed with the previous question.
//   - A word that no chunk holds is replaced by the docs' spelling of it,
//     when the Corpus knows one (Corpus.Variant): "wifi" becomes "wi-fi",
//     "PTO" becomes "paid time off".
//   - Asks are split where a new one opens: after a question mark, full
//     stop, colon or dash, at a wh-word or an auxiliary verb ("how",
//     "are v1 limits"); after a comma, semicolon or "and", at a wh-word or
//     an auxiliary and a pronoun ("can i", "do we", "and is it"). A
//     leading clause that asks nothing ("lost my phone - how do I ...")
//     is context, added to every part; a part that refers back ("who
//     approves it") or has fewer than two content terms gets the content
//     words of the part before it. A question with one ask has no
//     SubQueries.
type Standalone struct {
	// Corpus gives the docs' spellings; nil leaves words as written.
	Corpus *CorpusStats
}

var _ Rewriter = Standalone{}

// Rewrite returns the standalone query and the parts. It fails only when
// the corpus statistics cannot be loaded.
func (r Standalone) Rewrite(ctx context.Context, req RewriteRequest) (Rewrite, error) {
	corp, err := r.Corpus.Get(ctx)
	if err != nil {
		return Rewrite{}, err
	}
	q := strings.TrimSpace(req.Question)
	if len(req.History) > 0 && isFollowUp(q) {
		q = strings.TrimSpace(req.History[len(req.History)-1].Question) + " " + q
	}
	q = respell(q, corp)
	rw := Rewrite{Query: q}
	if parts, asks := splitAsks(q); len(parts) > 1 {
		rw.SubQueries, rw.Asks = parts, asks
	}
	return rw, nil
}

// continuationRE matches the start of a question that continues the one
// before it.
var continuationRE = regexp.MustCompile(`(?i)^(and|also|or|but|what about|how about|same for|same question for|and what about)\b`)

// isFollowUp reports whether q reads as a continuation of an earlier
// question rather than a question of its own.
func isFollowUp(q string) bool {
	return continuationRE.MatchString(q) || len(queryTerms(q)) < 2
}

// wordRE matches a word: a run of letters and digits.
var wordRE = regexp.MustCompile(`[\pL\pN]+`)

// respell replaces the words of q that no chunk holds with the docs'
// spelling of them.
func respell(q string, corp *Corpus) string {
	if corp == nil {
		return q
	}
	q = rephrase(q, corp)
	var b strings.Builder
	last := 0
	for _, m := range wordRE.FindAllStringIndex(q, -1) {
		w := q[m[0]:m[1]]
		// A channel, a handle or a path ("#exec", "@ops", "/inc") is a
		// name, not a spelling.
		if m[0] > 0 && strings.ContainsRune("#@/", rune(q[m[0]-1])) {
			continue
		}
		v, ok := corp.Variant(w)
		if !ok {
			v, ok = corp.synonym(w)
		}
		if ok {
			b.WriteString(q[last:m[0]])
			b.WriteString(v)
			last = m[1]
		}
	}
	b.WriteString(q[last:])
	return b.String()
}

// Interrogative openers: a wh-word, or an auxiliary verb (after a comma
// or "and", an auxiliary followed by a pronoun or determiner, so that
// "X and is Y" joins an ask only as "and is it ...").
var (
	whWords  = asks.WhWords
	auxWords = asks.AuxWords
	pronouns = `i|we|you|they|it|that|this|there|he|she|my|our|the|a|an|those|these|someone|anyone|i'm|im`
	lead     = `(?:(?:and|but|so|also)\s+)?`
	// askRE matches the start of an ask after a strong break (a question
	// mark, a full stop, a colon or a dash).
	askRE = regexp.MustCompile(`(?i)^` + lead + `(?:` + whWords + `|` + auxWords + `)\b`)
	// weakAskRE matches the start of an ask after a comma, a semicolon or "and".
	weakAskRE = regexp.MustCompile(`(?i)^` + lead + `(?:(?:` + whWords + `)\b|(?:` + auxWords + `)\s+(?:` + pronouns + `)\b)`)
	// breakRE matches the places a question may be cut: strong breaks
	// first in the alternation, then weak ones.
	breakRE   = regexp.MustCompile(`(?i)[?.!]+\s+|\s*:\s+|\s+[-–—]+\s+|\s*[,;]\s*|\s+and\s+`)
	leadRE    = regexp.MustCompile(`(?i)^` + lead)
	quotedRE  = regexp.MustCompile(`"[^"]*"|“[^”]*”`)
	referRE   = regexp.MustCompile(`(?i)\b(it|its|they|them|their|that|those|these|this|there|he|she|one)\b`)
	trailPunc = ".!?,;:-–— "
)

// splitAsks splits a question into its asks (see Standalone): the parts
// to retrieve, and the same parts as written. It returns one element,
// the question, when it has a single ask.
func splitAsks(q string) (parts, written []string) {
	// Cut at every break, then glue back the pieces that do not open a
	// new ask.
	quoted := quotedRE.FindAllStringIndex(q, -1)
	inQuote := func(i int) bool {
		for _, r := range quoted {
			if i > r[0] && i < r[1] {
				return true
			}
		}
		return false
	}
	var pieces, seps []string
	prev := 0
	for _, l := range breakRE.FindAllStringIndex(q, -1) {
		if inQuote(l[0]) {
			continue
		}
		pieces = append(pieces, q[prev:l[0]])
		seps = append(seps, q[l[0]:l[1]])
		prev = l[1]
	}
	pieces = append(pieces, q[prev:])
	var asks []string
	cur := pieces[0]
	for i := 1; i < len(pieces); i++ {
		next := strings.TrimSpace(pieces[i])
		sep := strings.TrimSpace(seps[i-1])
		strong := sep != "" && !strings.EqualFold(sep, "and") && sep != "," && sep != ";"
		if next != "" && ((strong && askRE.MatchString(next)) || weakAskRE.MatchString(next)) {
			asks = append(asks, cur)
			cur = pieces[i]
			continue
		}
		cur += seps[i-1] + pieces[i]
	}
	asks = append(asks, cur)
	for i := range asks {
		asks[i] = leadRE.ReplaceAllString(strings.Trim(asks[i], trailPunc), "")
	}
	// A leading clause that asks nothing is context for the others.
	var context string
	if len(asks) > 1 && !askRE.MatchString(asks[0]) && !strings.HasSuffix(strings.TrimSpace(pieces[0]), "?") {
		context = asks[0]
		asks = asks[1:]
	}
	for i, a := range asks {
		if len(queryTerms(a)) == 0 {
			continue
		}
		written = append(written, a)
		if i > 0 && (referRE.MatchString(a) || len(queryTerms(a)) < 2) {
			a += " " + strings.Join(queryWords(asks[i-1]), " ")
		}
		if context != "" {
			a = context + " " + a
		}
		parts = append(parts, a)
	}
	if len(parts) < 2 {
		return []string{q}, []string{q}
	}
	return parts, written
}

// queryWords returns the words of s that carry content terms, as written.
func queryWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' }) {
		if len(queryTerms(w)) > 0 {
			out = append(out, w)
		}
	}
	return out
}
