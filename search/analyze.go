package search

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// maxTermLen caps a term's length in bytes; longer runs (hashes, base64,
// URLs without separators) are cut rather than dropped.
const maxTermLen = 40

// Analyze splits text into the terms the offline retrieval components
// compare: lower-cased runs of letters and digits, English stopwords
// removed, the rest Snowball (Porter2) stemmed. One-letter words are
// dropped; numbers are kept. The result is deterministic and safe for
// concurrent use.
func Analyze(text string) []string {
	var terms []string
	AnalyzeFunc(text, func(term string) { terms = append(terms, term) })
	return terms
}

// AnalyzeFunc is Analyze without the slice: it calls fn with each term in
// text order.
func AnalyzeFunc(text string, fn func(term string)) {
	words(text, english.IsStopWord, false, false, func(word string) { emitTerm(word, fn) })
}

// Words calls fn with each word of text that Analyze keeps, lower-cased,
// before it is cut and stemmed: a query's terms for an engine that stems
// on its own (the Typesense backend). Camel-case words are not split:
// such an engine indexes them whole.
func Words(text string, fn func(word string)) {
	words(text, english.IsStopWord, false, false, fn)
}

// keywordStopwords are the words AnalyzeKeywords drops: articles,
// pronouns, auxiliaries, conjunctions and the commonest prepositions, the
// list docent's FTS5 queries dropped. Unlike Snowball's list it keeps
// negations, quantities and words of order ("not", "no", "more", "only",
// "after", "before"), which BM25's IDF weighs for itself.
var keywordStopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be but by can could did do does doing for from
		had has have how i if in into is it its me my of on or our should so than that the their them
		then there these they this those to was we were what when where which who whom why will with
		would you your s t d ll m re ve`) {
		keywordStopwords[w] = true
	}
}

// AnalyzeKeywords is AnalyzeFunc with a shorter stopword list, with
// diacritics removed ("Zürich" and "zurich" are one term, as in FTS5's
// remove_diacritics), and with camel-case compounds split: a word such as
// "excludedContentTypes" or "HTTPRouter" gives its whole form and then
// each of its parts ("excluded", "content", "types"; see camelParts), so
// that an option name matches the words a question uses for it. It is
// the analyzer of the keyword index and its queries. (The offline
// embedder's Analyze does not split: measured on SciFact, the split
// lowered the default pipeline's nDCG@10 from 0.7004 to 0.6929.)
func AnalyzeKeywords(text string, fn func(term string)) {
	words(text, func(w string) bool { return keywordStopwords[w] }, true, true, func(word string) { emitTerm(word, fn) })
}

// AnalyzeKeywordQuery is AnalyzeKeywords for a query: camel-case words
// stay whole. The index holds a compound's parts, so "content types"
// finds "excludedContentTypes"; a query that writes the compound itself
// ("BillingApiHighErrorRate") matches it whole, not every chunk that says
// "error" or "rate".
func AnalyzeKeywordQuery(text string, fn func(term string)) {
	words(text, func(w string) bool { return keywordStopwords[w] }, true, false, func(word string) { emitTerm(word, fn) })
}

// emitTerm cuts word to maxTermLen bytes, stems it unless it is a number,
// and passes it to fn.
func emitTerm(word string, fn func(term string)) {
	if len(word) > maxTermLen {
		cut := maxTermLen
		for cut > 0 && !utf8.RuneStart(word[cut]) {
			cut--
		}
		word = word[:cut]
	}
	if !isDigitWord(word) {
		word = stem(word)
	}
	if word != "" {
		fn(word)
	}
}

// words calls fn with the lower-cased runs of letters and digits of text,
// diacritics folded when fold is set, without one-letter words that are
// not numbers and without the words isStop reports. With split, a
// camel-case run is followed by its parts (see camelParts).
func words(text string, isStop func(string) bool, fold, split bool, fn func(word string)) {
	start := -1
	one := func(raw string) {
		word := strings.ToLower(raw)
		if fold {
			word = foldDiacritics(word)
		}
		if len(word) < 2 && !isDigitWord(word) {
			return
		}
		if isStop(word) {
			return
		}
		fn(word)
	}
	emit := func(end int) {
		raw := text[start:end]
		start = -1
		one(raw)
		if split {
			if parts := camelParts(raw); len(parts) > 1 {
				for _, p := range parts {
					one(p)
				}
			}
		}
	}
	for i, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			emit(i)
		}
	}
	if start >= 0 {
		emit(len(text))
	}
}

// camelParts splits a camel-case compound at its humps: before an upper-case
// letter that follows a lower-case one ("sslRedirect": ssl, Redirect) and
// before the last capital of a run of capitals followed by a lower-case
// letter or more ("HTTPRouter": HTTP, Router; "IPv4" stays whole). Digits
// stay with the letters before them. A word with no hump has no parts.
func camelParts(w string) []string {
	var parts []string
	start := 0
	rs := []rune(w)
	off := make([]int, len(rs)+1)
	i := 0
	for k := range w {
		off[i] = k
		i++
	}
	off[len(rs)] = len(w)
	for k := 1; k < len(rs); k++ {
		hump := unicode.IsUpper(rs[k]) && unicode.IsLower(rs[k-1])
		acronymEnd := unicode.IsUpper(rs[k]) && unicode.IsUpper(rs[k-1]) && k+2 < len(rs) &&
			unicode.IsLower(rs[k+1]) && unicode.IsLower(rs[k+2])
		if hump || acronymEnd {
			parts = append(parts, w[off[start]:off[k]])
			start = k
		}
	}
	if start == 0 {
		return nil
	}
	parts = append(parts, w[off[start]:])
	// A compound joins words: every part after the first is one of four
	// letters or more ("ipStrategy", "sslRedirect", "HTTPRouter"). A
	// short mixed-case name is one word ("mRNA", "IgG", "HeLa", "macOS").
	for _, p := range parts[1:] {
		if utf8.RuneCountInString(p) < 4 {
			return nil
		}
	}
	return parts
}

// foldDiacritics removes combining marks after canonical decomposition
// ("é" becomes "e"); words without non-ASCII letters are returned as is.
func foldDiacritics(w string) string {
	ascii := true
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return w
	}
	t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	out, _, err := transform.String(t, w)
	if err != nil || out == "" {
		return w
	}
	return out
}

// CountTokens returns how many runs of letters and digits text holds:
// the words AnalyzeFunc considers, stopwords and one-letter words
// included.
func CountTokens(text string) int {
	n, in := 0, false
	for _, r := range text {
		w := unicode.IsLetter(r) || unicode.IsDigit(r)
		if w && !in {
			n++
		}
		in = w
	}
	return n
}

// isDigitWord reports whether w is made of ASCII digits only.
func isDigitWord(w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return true
}

// maxCachedStems bounds the stem cache; when it is full it starts over.
const maxCachedStems = 1 << 17

// stems caches Snowball stems by lower-cased word. A corpus repeats a few
// tens of thousands of words millions of times, and stemming is most of
// what Analyze costs.
var stems = struct {
	sync.RWMutex
	m map[string]string
}{m: map[string]string{}}

// stem returns english.Stem(word, true), from the cache when it can.
func stem(word string) string {
	stems.RLock()
	s, ok := stems.m[word]
	stems.RUnlock()
	if ok {
		return s
	}
	s = english.Stem(word, true)
	stems.Lock()
	if len(stems.m) >= maxCachedStems {
		clear(stems.m)
	}
	stems.m[strings.Clone(word)] = s
	stems.Unlock()
	return s
}

// Jaccard is the Jaccard similarity of two term sets, |a ∩ b| / |a ∪ b|;
// 0 when either is empty. The answer stages (alike headings, conflicting
// units) and the stale report (near-duplicate documents) compare with it.
func Jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	inter := 0
	for t := range a {
		if b[t] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}
