package search

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
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
	Words(text, func(word string) {
		if len(word) > maxTermLen {
			cut := maxTermLen
			for cut > 0 && !utf8.RuneStart(word[cut]) {
				cut--
			}
			word = word[:cut]
		}
		if !isDigitWord(word) {
			word = english.Stem(word, true)
		}
		if word != "" {
			fn(word)
		}
	})
}

// Words calls fn with each word of text that Analyze keeps, lower-cased,
// before it is cut and stemmed: a query's terms for an engine that stems
// on its own (the Typesense backend).
func Words(text string, fn func(word string)) {
	start := -1
	emit := func(end int) {
		word := strings.ToLower(text[start:end])
		start = -1
		if len(word) < 2 && !isDigitWord(word) {
			return
		}
		if english.IsStopWord(word) {
			return
		}
		fn(word)
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
