package offline

import (
	"context"
	"regexp"
	"strings"
	"unicode"

	"github.com/docent-hq/docent/answer"
	asks "github.com/docent-hq/docent/internal/question"
	"github.com/docent-hq/docent/search"
)

// Standalone is the offline Rewriter. It makes the question a standalone
// query in the docs' own words, and splits a question with several asks
// into parts:
//
//   - A follow-up ("and for contractors?", "what about Germany") — a
//     question that starts with a continuation word or has fewer than two
//     content terms — is prefixed with the previous question.
//   - A phrase of the deployment's Synonyms is replaced by the first of
//     its meanings the docs hold when the docs never use the phrase, and
//     extended by it when they do.
//   - A word that no chunk holds is replaced by the docs' spelling of it
//     (Corpus.Variant: "wifi" becomes "wi-fi", "PTO" "paid time off" from
//     heading initials, "perf" "performance"), or else by the first word
//     general English relates to it as a noun (WordNet: a synonym of its
//     commonest senses, a derived form, the general kind of thing) that
//     the docs hold: "grandma" becomes "grandmother", "kids" "child". A
//     phrasal verb ("passed away", "turn off") is extended by the first
//     one-word WordNet verb it means that the docs hold ("die",
//     "disable"). Names, codes, handles and paths are never respelled.
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
	// Synonyms are the deployment's own; nil has none.
	Synonyms *Synonyms
	// Related gives general English words related to a word or phrasal
	// verb as a part of speech ("n" noun, "v" verb), best first
	// (wordnet.Related); nil uses none.
	Related func(word, pos string) []string
}

var _ answer.Rewriter = Standalone{}

// Rewrite returns the standalone query and the parts. It fails only when
// the corpus statistics cannot be loaded.
func (r Standalone) Rewrite(ctx context.Context, req answer.RewriteRequest) (answer.Rewrite, error) {
	corp, err := r.Corpus.Get(ctx)
	if err != nil {
		return answer.Rewrite{}, err
	}
	q := strings.TrimSpace(req.Question)
	if len(req.History) > 0 && isFollowUp(q) {
		q = strings.TrimSpace(req.History[len(req.History)-1].Question) + " " + q
	}
	q, changed := r.respell(q, corp)
	rw := answer.Rewrite{Query: q}
	if len(changed) > 0 {
		rw.Detail = "respelled " + strings.Join(changed, ", ")
	}
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

// wordRE matches a word: a run of letters and digits, with inner
// apostrophes and hyphens.
var wordRE = regexp.MustCompile(`[\pL\pN]+(?:['’-][\pL\pN]+)*`)

// particles end the phrasal verbs respell extends ("pass away", "log in").
var particles = map[string]bool{"away": true, "up": true, "off": true, "out": true, "in": true, "on": true,
	"down": true, "over": true, "back": true, "through": true}

// span is a word of the question with its byte offsets.
type span struct {
	w          string
	start, end int
}

// respell rewrites q into the docs' words (see Standalone) and returns the
// changes made, as "from → to".
func (r Standalone) respell(q string, corp *Corpus) (string, []string) {
	if corp == nil {
		return q, nil
	}
	var words []span
	for _, m := range wordRE.FindAllStringIndex(q, -1) {
		words = append(words, span{q[m[0]:m[1]], m[0], m[1]})
	}
	var b strings.Builder
	var changed []string
	last := 0
	emit := func(start, end int, repl string) {
		b.WriteString(q[last:start])
		b.WriteString(repl)
		last = end
		changed = append(changed, q[start:end]+" → "+repl)
	}
	longest := r.Synonyms.longest()
	for i := 0; i < len(words); i++ {
		w := words[i]
		// A channel, a handle or a path ("#exec", "@ops", "/inc") is a
		// name, not a spelling.
		if w.start > 0 && strings.ContainsRune("#@/", rune(q[w.start-1])) {
			continue
		}
		// The deployment's synonyms, longest phrase first.
		if n, repl, ok := r.synonym(words[i:], longest, corp); ok {
			emit(w.start, words[i+n-1].end, repl)
			i += n - 1
			continue
		}
		if isSalient(w.w, false) && !corp.holdsAll(w.w) {
			// A name or a code the docs lack is a detail, not a spelling,
			// but an acronym or a code they write otherwise ("PTO" for
			// their "paid time off" headings, "401k" for "401(k)") is
			// their spelling of it.
			if isSalient(w.w, true) {
				if v, ok := corp.Variant(w.w); ok {
					emit(w.start, w.end, v)
				}
			}
			continue
		}
		if v, ok := corp.Variant(w.w); ok {
			emit(w.start, w.end, v)
			continue
		}
		if r.Related == nil {
			continue
		}
		if i+1 < len(words) && particles[strings.ToLower(words[i+1].w)] {
			phrase := w.w + " " + words[i+1].w
			if v, ok := corp.firstHeld(singleWords(r.Related(phrase, "v"))); ok {
				emit(w.start, words[i+1].end, q[w.start:words[i+1].end]+" "+v)
				i++
				continue
			}
		}
		if terms := search.Analyze(w.w); len(terms) == 1 && corp.DF(terms[0]) == 0 && !fillers[terms[0]] {
			if v, ok := corp.firstHeld(r.Related(w.w, "n")); ok {
				if r.relatesBack(v, terms[0]) {
					emit(w.start, w.end, v)
				} else {
					// A broader word ("acupuncture" → "treatment") finds
					// the pages about the kind of thing, but the question
					// still asks about this one: the word stays, so that
					// the decision sees a detail the docs lack.
					emit(w.start, w.end, w.w+" "+v)
				}
			}
		}
	}
	b.WriteString(q[last:])
	return b.String(), changed
}

// relatesBack reports whether general English relates v back to the word
// whose analyzed form is term: a synonym or a derived form relates both
// ways ("kids" and "child"), the general kind of a thing does not
// ("treatment" lists no "acupuncture").
func (r Standalone) relatesBack(v, term string) bool {
	for _, l := range r.Related(v, "n") {
		if a := search.Analyze(l); len(a) == 1 && a[0] == term {
			return true
		}
	}
	return false
}

// singleWords keeps the one-word lemmas of ls.
func singleWords(ls []string) []string {
	var out []string
	for _, l := range ls {
		if !strings.ContainsAny(l, " -") {
			out = append(out, l)
		}
	}
	return out
}

// synonym matches the deployment's synonyms at the start of words (the
// longest phrase first) and returns how many words matched and what
// replaces them: the first meaning the docs hold, instead of the phrase
// when the docs never use it, after it when they do.
func (r Standalone) synonym(words []span, longest int, corp *Corpus) (int, string, bool) {
	for n := min(longest, len(words)); n >= 1; n-- {
		parts := make([]string, n)
		for k := range n {
			parts[k] = words[k].w
		}
		phrase := strings.Join(parts, " ")
		v, ok := corp.firstHeld(r.Synonyms.meanings(normPhrase(phrase)))
		if !ok {
			continue
		}
		if corp.holdsAll(phrase) {
			return n, phrase + " " + v, true
		}
		return n, v, true
	}
	return 0, "", false
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
