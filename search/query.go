package search

import (
	"context"
	"math"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// TermStats is an Index that knows its keyword statistics: how many
// chunks hold each analyzed term (AnalyzeKeywords). The Retriever uses it
// to weigh a query's terms by IDF: to keep the salient terms of a long or
// pasted query, and to measure which section of a page a query is about.
// Without it, the Retriever weighs terms by their rarity among the
// candidates it found.
type TermStats interface {
	// DocFreq returns, for each of terms that the index holds, how many
	// chunks hold it, and how many chunks the index holds in all.
	DocFreq(ctx context.Context, terms []string) (df map[string]int, n int, err error)
}

// Log noise: the parts of a pasted log line or stack trace that name one
// event rather than the problem (when, which request, which process, which
// frame). CleanQuery drops them before retrieval; they match nothing
// useful, and a long hex id or a timestamp can outweigh the words of the
// question in a keyword ranking.
var (
	// A stack frame line: Java/JS "at pkg.Func(File.java:12)", Python
	// 'File "x.py", line 3, in f', Go's "goroutine 7 [running]:" and
	// "/src/app/main.go:42 +0x1d", and bare "path/file.ext:123" lines.
	stackLineRE = regexp.MustCompile(`(?m)^[ \t]*(?:at [\w$.<>\[\]/:-]+\(.*\)|at [\w$.<>/-]+ \(.*\)|File "[^"]*", line \d+.*|goroutine \d+ \[.*|(?:[\w.-]*/)+[\w.-]+\.\w+:\d+(?::\d+)?(?: \+0x[0-9a-fA-F]+)?|\.\.\. \d+ more|Traceback \(most recent call last\):)[ \t]*$`)
	// noiseREs are the other kinds of noise, each with a cheap test that
	// a text must pass for the expression to match anywhere in it (most
	// need a digit): a question with none of them skips the expression.
	noiseREs = []struct {
		re  *regexp.Regexp
		may func(string) bool
	}{
		// Timestamps: ISO 8601 and its log variants, Apache/nginx
		// common log format, syslog, bare times and dates.
		{regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b`), digitsAnd("-")},
		{regexp.MustCompile(`\b\d{1,2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2}(?: [+-]\d{4})?`), digitsAnd("/:")},
		{regexp.MustCompile(`\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d{2}:\d{2}:\d{2}\b`), digitsAnd(":")},
		{regexp.MustCompile(`\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b`), digitsAnd(":")},
		{regexp.MustCompile(`\b\d{4}/\d{2}/\d{2}\b`), digitsAnd("/")},
		// UUIDs (which may be written without a digit), then IPv4
		// addresses with their port.
		{regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`), func(s string) bool { return strings.Count(s, "-") >= 4 }},
		{regexp.MustCompile(`\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b`), digitsAnd(".")},
		// 0x addresses.
		{regexp.MustCompile(`\b0x[0-9a-fA-F]+\b`), digitsAnd("x")},
	}
	// idTokenRE is a run that may be an opaque id (see opaqueID).
	idTokenRE = regexp.MustCompile(`[A-Za-z0-9_+/=-]{8,}`)
)

// CleanQuery drops log noise from a query: stack frame lines, timestamps,
// UUIDs, IP addresses, hex addresses and opaque ids (hashes, request and
// trace ids: long runs mixing letters and digits with no word shape).
// Error codes (404, E1234, ERR_CONN_REFUSED, ORA-00942) and the words of
// the message are kept. A query with no noise is returned as it is.
//
// Each expression runs only on a text that could hold what it matches
// (see noiseREs; a stack line needs a digit, "at " or "Traceback", an
// opaque id a digit), so a question in words costs a few byte scans.
func CleanQuery(text string) string { return cleanQuery(text, false) }

// cleanQuery is CleanQuery; every runs each expression on every text (the
// tests' oracle for the skipping).
func cleanQuery(text string, every bool) string {
	out := text
	if every || hasDigit(out) || strings.Contains(out, "at ") || strings.Contains(out, "Traceback") {
		out = stackLineRE.ReplaceAllString(out, " ")
	}
	for _, n := range noiseREs {
		if every || n.may(out) {
			out = n.re.ReplaceAllString(out, " ")
		}
	}
	if every || hasDigit(out) {
		out = idTokenRE.ReplaceAllStringFunc(out, func(tok string) string {
			if opaqueID(tok) {
				return " "
			}
			return tok
		})
	}
	if out == text {
		return text
	}
	return strings.Join(strings.Fields(out), " ")
}

// hasDigit reports whether s holds an ASCII digit.
func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

// digitsAnd returns a test that s holds a digit and each byte of also.
func digitsAnd(also string) func(string) bool {
	return func(s string) bool {
		if !hasDigit(s) {
			return false
		}
		for i := range len(also) {
			if strings.IndexByte(s, also[i]) < 0 {
				return false
			}
		}
		return true
	}
}

// opaqueID reports whether tok looks like a generated id rather than a
// word, a name or a code: hex of 8 or more with a digit, or 16 or more
// letters and digits (base64 too) with at least three digits. Codes such
// as "E1234", "ORA-00942" or "HTTP_502" are shorter or mostly letters.
func opaqueID(tok string) bool {
	var letters, digits, hex, other int
	for _, r := range tok {
		switch {
		case r >= '0' && r <= '9':
			digits++
			hex++
		case r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F':
			letters++
			hex++
		case unicode.IsLetter(r):
			letters++
		default:
			other++
		}
	}
	n := len(tok)
	if hex == n && n >= 8 && digits > 0 && letters > 0 {
		return true
	}
	return n-other >= 16 && digits >= 3 && letters > 0
}

// salientWords returns the words of text whose keyword terms are among the
// max most salient of the query (highest IDF; a term the index does not
// hold is left out, since it can match nothing), in text order, joined by
// spaces; text as it is when it has at most max terms.
func salientWords(text string, max int, idf func(terms []string) map[string]float64) string {
	type word struct {
		w    string
		term string
	}
	var words []word
	seen := map[string]bool{}
	var terms []string
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		AnalyzeKeywordQuery(w, func(t string) {
			words = append(words, word{w, t})
			if !seen[t] {
				seen[t] = true
				terms = append(terms, t)
			}
		})
	}
	if len(terms) <= max {
		return text
	}
	weights := idf(terms)
	held := terms[:0:0]
	for _, t := range terms {
		if _, ok := weights[t]; ok {
			held = append(held, t)
		}
	}
	sort.SliceStable(held, func(i, j int) bool { return weights[held[i]] > weights[held[j]] })
	keep := map[string]bool{}
	for _, t := range held[:min(max, len(held))] {
		keep[t] = true
	}
	var b strings.Builder
	done := map[string]bool{}
	for _, w := range words {
		if keep[w.term] && !done[w.w] {
			done[w.w] = true
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(w.w)
		}
	}
	return b.String()
}

// idfWeights returns Lucene's idf of each term the index holds, from the
// index's statistics.
func idfWeights(ctx context.Context, ts TermStats, terms []string) (map[string]float64, error) {
	df, n, err := ts.DocFreq(ctx, terms)
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64, len(df))
	for t, f := range df {
		if f > 0 {
			out[t] = math.Log(1 + (float64(n)-float64(f)+0.5)/(float64(f)+0.5))
		}
	}
	return out, nil
}

// joinedWords returns, for each two neighbouring words of text (letters
// and digits, apart by spaces, a hyphen or an underscore) whose
// concatenation is a term the index holds, that concatenation, once: "health check" finds "healthcheck", "rate-limit"
// finds "rateLimit" (indexed whole as well as in its parts). People write
// apart what documentation writes as one identifier; the reverse, an
// identifier in the query, is split by the analyzer already. Numbers and
// stopwords are not joined ("http 2", "to do"). holds reports which of the
// candidate terms the index holds.
func joinedWords(text string, holds func(terms []string) map[string]bool) []string {
	type word struct {
		w          string
		start, end int
	}
	var ws []word
	start := -1
	for i, r := range text + " " {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			ws = append(ws, word{text[start:i], start, i})
			start = -1
		}
	}
	var cands, joined []string
	seen := map[string]bool{}
	for i := 1; i < len(ws); i++ {
		gap := text[ws[i-1].end:ws[i].start]
		if strings.Trim(gap, " -_") != "" || len(gap) > 1 {
			continue
		}
		a, b := ws[i-1].w, ws[i].w
		if isDigitWord(a) || isDigitWord(b) || keywordStopwords[strings.ToLower(a)] || keywordStopwords[strings.ToLower(b)] {
			continue
		}
		w := a + b
		var term string
		AnalyzeKeywordQuery(w, func(t string) {
			if term == "" {
				term = t
			}
		})
		if term == "" || seen[term] {
			continue
		}
		seen[term] = true
		cands = append(cands, term)
		joined = append(joined, w)
	}
	if len(cands) == 0 {
		return nil
	}
	held := holds(cands)
	var out []string
	for i, t := range cands {
		if held[t] {
			out = append(out, joined[i])
		}
	}
	return out
}
