package search

import (
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/docent-hq/docent"
	"github.com/kljensen/snowball/english"
)

// The comparison of versions: whether two chunks of different documents
// are versions of the same content (alike headings) and which amounts
// each states that the other does not. The offline answerer uses it to
// say when its sources conflict, stale detection to flag the older of two
// conflicting documents.

// MinHeadingJaccard is how alike two chunks' headings must be (Jaccard
// similarity of their title and section words) to be versions of the same
// content.
const MinHeadingJaccard = 0.5

// TermSet returns the set of analyzed terms in text.
func TermSet(text string) map[string]bool {
	set := map[string]bool{}
	AnalyzeFunc(text, func(t string) { set[t] = true })
	// A compound written in parts also matches its joined spelling:
	// "break-glass" holds "breakglass", "401(k)" holds "401k".
	if strings.ContainsAny(text, "-(") {
		for _, w := range Compounds(text) {
			set[english.Stem(JoinCompound(w), true)] = true
		}
	}
	return set
}

// Compounds returns the lower-cased compound words of text: words
// written in parts joined by hyphens ("wi-fi", "on-call", "sign-on") or
// with a bracketed part ("401(k)").
func Compounds(text string) []string {
	var out []string
	rs := []rune(text)
	alnum := func(i int) bool { return i < len(rs) && (unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i])) }
	for i := 0; i < len(rs); {
		if !alnum(i) || (i > 0 && alnum(i-1)) {
			i++
			continue
		}
		start, j, parts := i, i, 0
		for {
			for alnum(j) {
				j++
			}
			parts++
			switch {
			case j+1 < len(rs) && rs[j] == '-' && alnum(j+1):
				j++
				continue
			case j+2 < len(rs) && rs[j] == '(' && alnum(j+1):
				k := j + 1
				for alnum(k) {
					k++
				}
				if k < len(rs) && rs[k] == ')' {
					j = k + 1
					parts++
				}
			}
			break
		}
		if parts > 1 {
			out = append(out, strings.ToLower(string(rs[start:j])))
		}
		i = j + 1
	}
	return out
}

// JoinCompound writes a compound word without its hyphens and brackets.
func JoinCompound(w string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '(' || r == ')' {
			return -1
		}
		return r
	}, w)
}

// HeadingTerms are the analyzed words of a chunk's title and section path,
// numbers left out (so "Expense policy (2021)" matches "Expense policy").
func HeadingTerms(c docent.Chunk) map[string]bool {
	set := TermSet(c.Title + " " + strings.Join(c.Section, " "))
	for t := range set {
		if IsNumber(t) {
			delete(set, t)
		}
	}
	return set
}

// SimilarHeadings reports whether two chunks from different documents have
// headings alike enough to be versions of the same content.
func SimilarHeadings(a, b docent.Chunk) bool {
	if ChunkDoc(a) == ChunkDoc(b) {
		return false
	}
	return Jaccard(HeadingTerms(a), HeadingTerms(b)) >= MinHeadingJaccard
}

// Newer reports whether a document updated at t is a newer version than
// one updated at than: t falls on a later calendar day (UTC), the
// resolution at which docent shows when a page was updated. Pages written
// the same day, such as the files of one checkout (a dir source's file
// times differ by microseconds) or the pages one edit touched, are of one
// time: neither replaces the other. An unknown time is older than any
// known one.
func Newer(t, than time.Time) bool {
	if t.IsZero() {
		return false
	}
	if than.IsZero() {
		return true
	}
	day := func(x time.Time) time.Time {
		y, m, d := x.UTC().Date()
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	}
	return day(t).After(day(than))
}

// ChunkDoc is a chunk's document, or the chunk itself without one.
func ChunkDoc(c docent.Chunk) string {
	if c.DocID != "" {
		return c.DocID
	}
	return c.ID
}

var amountRE = regexp.MustCompile(`(?i)([$€£])?\s?(\d[\d,]*(?:\.\d+)?)\s?(%|percent\b|k\b|(?:business |working |calendar )?days?\b|weeks?\b|months?\b|years?\b|hours?\b|nights?\b|minutes?\b|per [a-z]+\b)?`)

// Amounts returns the normalized amounts in text: numbers with their
// currency and unit ("$250", "30 day", "15%"). Numbers glued to letters or
// hyphens (error codes like VPN-E12, dates like 2026-01-05) and bare years
// (1900-2099 without a currency or unit) are left out.
func Amounts(text string) map[string]bool {
	set := map[string]bool{}
	for _, m := range amountRE.FindAllStringSubmatchIndex(text, -1) {
		numStart := m[4]
		if m[2] >= 0 {
			numStart = m[2]
		}
		if numStart > 0 {
			prev, _ := utf8.DecodeLastRuneInString(text[:numStart])
			if unicode.IsLetter(prev) || unicode.IsDigit(prev) || strings.ContainsRune("-_./:#", prev) {
				continue
			}
		}
		num := strings.ReplaceAll(text[m[4]:m[5]], ",", "")
		if next := m[5]; m[6] < 0 && next < len(text) {
			r, _ := utf8.DecodeRuneInString(text[next:])
			if unicode.IsLetter(r) || r == '-' {
				continue
			}
		}
		cur, unit := "", ""
		if m[2] >= 0 {
			cur = text[m[2]:m[3]]
		}
		if m[6] >= 0 {
			unit = strings.ToLower(text[m[6]:m[7]])
			unit = strings.TrimSuffix(unit, "s")
			if unit == "percent" {
				unit = "%"
			}
		}
		if cur == "" && unit == "" && len(num) == 4 && (strings.HasPrefix(num, "19") || strings.HasPrefix(num, "20")) {
			continue
		}
		a := cur + num
		if unit == "%" {
			a += "%"
		} else if unit != "" {
			a += " " + unit
		}
		set[a] = true
	}
	return set
}

// IsNumber reports whether t is all digits.
func IsNumber(t string) bool {
	for _, r := range t {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return t != ""
}

// Minus returns the members of a that b lacks, sorted.
func Minus(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
