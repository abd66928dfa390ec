package search

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	gast "github.com/yuin/goldmark/ast"
)

// packSection packs a section's units into chunk bodies: whole units up to
// target, oversized units split first, and each chunk after the first
// starting with the overlap taken from the one before.
func packSection(units []chunkUnit, target, overlap int) []string {
	var pieces []chunkUnit
	for _, u := range units {
		pieces = append(pieces, splitUnit(u, target, overlap)...)
	}

	var (
		bodies []string
		cur    []chunkUnit
		curTok int
		fresh  bool // cur holds more than the overlap
	)
	for _, p := range pieces {
		pt := p.tokens()
		if fresh && curTok+pt > target {
			bodies = append(bodies, joinUnits(cur))
			last := cur[len(cur)-1]
			cur, curTok, fresh = nil, 0, false
			if ov, ok := overlapUnit(last, overlap); ok && ov.tokens()+pt <= target {
				cur, curTok = []chunkUnit{ov}, ov.tokens()
			}
		}
		cur = append(cur, p)
		curTok += pt
		fresh = true
	}
	if fresh {
		bodies = append(bodies, joinUnits(cur))
	}
	return bodies
}

// joinUnits concatenates units with the separators joiner picks.
func joinUnits(us []chunkUnit) string {
	var b strings.Builder
	for i, u := range us {
		if i > 0 {
			b.WriteString(joiner(us[i-1], u))
		}
		b.WriteString(u.text)
	}
	return b.String()
}

// overlapUnit is the tail of u to repeat at the start of the next chunk:
// its last whole atoms (sentences or items) totalling at most budget
// tokens. ok is false when there is nothing to repeat.
func overlapUnit(u chunkUnit, budget int) (chunkUnit, bool) {
	if budget <= 0 || len(u.atoms) == 0 {
		return chunkUnit{}, false
	}
	n, tok := 0, 0
	for i := len(u.atoms) - 1; i >= 0; i-- {
		t := EstimateTokens(u.atoms[i])
		if tok+t > budget {
			break
		}
		tok += t
		n++
	}
	if n == 0 {
		return chunkUnit{}, false
	}
	tail := u.atoms[len(u.atoms)-n:]
	sep := " "
	if u.kind == kindList {
		sep = "\n"
	}
	return chunkUnit{kind: u.kind, group: u.group, text: strings.Join(tail, sep), atoms: tail}, true
}

// splitUnit returns u whole when it fits in target, else its pieces.
func splitUnit(u chunkUnit, target, overlap int) []chunkUnit {
	if u.tokens() <= target {
		return []chunkUnit{u}
	}
	switch u.kind {
	case kindTable:
		return splitTable(u, target)
	case kindCode:
		return splitCode(u, target)
	case kindList:
		return splitList(u, target, overlap)
	case kindPara:
		return splitProse(u, target-overlap)
	default:
		return splitLines(u, target)
	}
}

// splitTable splits at row boundaries, repeating the header and delimiter
// rows. A header plus one row larger than target is an indivisible piece.
func splitTable(u chunkUnit, target int) []chunkUnit {
	lines := strings.Split(u.text, "\n")
	if len(lines) < 3 {
		return []chunkUnit{u}
	}
	header := lines[0] + "\n" + lines[1]
	var out []chunkUnit
	var rows []string
	tok := EstimateTokens(header)
	emit := func() {
		if len(rows) > 0 {
			out = append(out, chunkUnit{kind: kindTable, group: u.group, text: header + "\n" + strings.Join(rows, "\n")})
		}
		rows, tok = nil, EstimateTokens(header)
	}
	for _, r := range lines[2:] {
		rt := EstimateTokens(r)
		if len(rows) > 0 && tok+rt > target {
			emit()
		}
		rows = append(rows, r)
		tok += rt
	}
	emit()
	return out
}

// splitCode splits a code block at line boundaries. Fenced blocks keep
// their opening fence (with its info string) and closing fence in every
// piece. A single line larger than target is an indivisible piece.
func splitCode(u chunkUnit, target int) []chunkUnit {
	lines := strings.Split(u.text, "\n")
	open, close := "", ""
	if f := FenceOpen(lines[0]); f != "" {
		open = lines[0]
		lines = lines[1:]
		if n := len(lines); n > 0 && ClosesFence(lines[n-1], f) {
			close = lines[n-1]
			lines = lines[:n-1]
		} else {
			close = strings.TrimLeft(open, " ")[:len(f)]
		}
	}
	overhead := 0
	if open != "" {
		overhead = EstimateTokens(open) + EstimateTokens(close)
	}
	var out []chunkUnit
	var cur []string
	tok := overhead
	emit := func() {
		if len(cur) > 0 {
			body := strings.Join(cur, "\n")
			if open != "" {
				body = open + "\n" + body + "\n" + close
			}
			out = append(out, chunkUnit{kind: kindCode, group: u.group, text: body})
		}
		cur, tok = nil, overhead
	}
	for _, l := range lines {
		lt := EstimateTokens(l)
		if len(cur) > 0 && tok+lt > target {
			emit()
		}
		cur = append(cur, l)
		tok += lt
	}
	emit()
	return out
}

// FenceOpen returns the fence run (``` or ~~~, three or more, indented at
// most three spaces) that line opens a fenced code block with, "" if it
// opens none: a backtick fence's info string may not hold a backtick
// (CommonMark). The chunker and the markdown normaliser share it.
func FenceOpen(line string) string {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return ""
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 || (t[0] == '`' && strings.Contains(t[n:], "`")) {
		return ""
	}
	return t[:n]
}

// ClosesFence reports whether line closes a block opened by fence: a run
// of the same character at least as long, with nothing after it.
func ClosesFence(line, fence string) bool {
	f := FenceOpen(line)
	return f != "" && f[0] == fence[0] && len(f) >= len(fence) && strings.TrimSpace(line[strings.Index(line, f)+len(f):]) == ""
}

// splitList splits at item boundaries; an item larger than the target is
// split like a paragraph. Pieces of one list share a group, so overlap
// and adjacent pieces rejoin with a newline.
func splitList(u chunkUnit, target, overlap int) []chunkUnit {
	var out []chunkUnit
	var cur []string
	tok := 0
	emit := func() {
		if len(cur) > 0 {
			out = append(out, chunkUnit{kind: kindList, group: u.group, text: strings.Join(cur, "\n"), atoms: cur})
		}
		cur, tok = nil, 0
	}
	for _, it := range u.atoms {
		it := it
		t := EstimateTokens(it)
		if t > target-overlap {
			emit()
			for _, p := range splitProse(chunkUnit{kind: kindPara, group: u.group, text: it, atoms: SplitSentences(it)}, target-overlap) {
				// A piece of an item is prose, but rejoins the list with a newline.
				p.kind = kindList
				p.atoms = []string{p.text}
				out = append(out, p)
			}
			continue
		}
		if len(cur) > 0 && tok+t > target-overlap {
			emit()
		}
		cur = append(cur, it)
		tok += t
	}
	emit()
	return out
}

// splitProse splits a paragraph at sentence boundaries into pieces of at
// most budget tokens; a sentence larger than budget is split at words.
func splitProse(u chunkUnit, budget int) []chunkUnit {
	atoms := u.atoms
	if len(atoms) == 0 {
		atoms = SplitSentences(u.text)
	}
	var out []chunkUnit
	for _, g := range pack(atoms, max(budget, 1)) {
		out = append(out, chunkUnit{kind: u.kind, group: u.group, text: strings.Join(g, " "), atoms: g})
	}
	return out
}

// splitLines splits a quote or HTML block at line boundaries; a line
// larger than target is split at words.
func splitLines(u chunkUnit, target int) []chunkUnit {
	var out []chunkUnit
	for _, g := range pack(strings.Split(u.text, "\n"), target) {
		out = append(out, chunkUnit{kind: u.kind, group: u.group, text: strings.Join(g, "\n")})
	}
	return out
}

// pack groups items greedily, in order, into runs of at most budget
// tokens; an item larger than budget is cut at words into runs of its own.
func pack(items []string, budget int) [][]string {
	var out [][]string
	var cur []string
	tok := 0
	emit := func() {
		if len(cur) > 0 {
			out = append(out, cur)
		}
		cur, tok = nil, 0
	}
	for _, it := range items {
		t := EstimateTokens(it)
		if t > budget {
			emit()
			for _, w := range splitWords(it, budget) {
				out = append(out, []string{w})
			}
			continue
		}
		if len(cur) > 0 && tok+t > budget {
			emit()
		}
		cur = append(cur, it)
		tok += t
	}
	emit()
	return out
}

// splitWords cuts s at spaces into pieces of at most budget tokens. A
// single word larger than budget is cut at rune boundaries.
func splitWords(s string, budget int) []string {
	var out []string
	var cur []string
	tok := 0
	for _, w := range strings.Fields(s) {
		t := EstimateTokens(w)
		for t > budget {
			// A giant "word" (a minified line, a long URL): cut by runes.
			if len(cur) > 0 {
				out = append(out, strings.Join(cur, " "))
				cur, tok = nil, 0
			}
			cut := byteIndexOfRune(w, budget*4)
			out = append(out, w[:cut])
			w = w[cut:]
			t = EstimateTokens(w)
		}
		if len(cur) > 0 && tok+t+1 > budget {
			out = append(out, strings.Join(cur, " "))
			cur, tok = nil, 0
		}
		cur = append(cur, w)
		tok += t
	}
	if len(cur) > 0 {
		out = append(out, strings.Join(cur, " "))
	}
	return out
}

// byteIndexOfRune is the byte offset of the n-th rune of s (len(s) if fewer).
func byteIndexOfRune(s string, n int) int {
	i := 0
	for n > 0 && i < len(s) {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n--
	}
	return i
}

// sentenceAbbreviations end with a period without ending a sentence.
var sentenceAbbreviations = map[string]bool{
	"e.g.": true, "i.e.": true, "etc.": true, "vs.": true, "cf.": true, "mr.": true,
	"mrs.": true, "ms.": true, "dr.": true, "st.": true, "no.": true, "approx.": true,
	"fig.": true, "inc.": true, "ltd.": true, "jr.": true, "sr.": true,
}

// SplitSentences splits prose into sentences: after ., ! or ? (and any closing
// quotes or brackets) followed by whitespace and not by a lowercase
// letter, except after common abbreviations and single capitals ("J. Smith"). Whitespace inside a
// sentence is kept as written.
func SplitSentences(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '.' && c != '!' && c != '?' {
			continue
		}
		j := i + 1
		for j < len(s) && strings.IndexByte(`"')]*_`, s[j]) >= 0 {
			j++
		}
		if j < len(s) && !isASCIISpace(s[j]) {
			continue
		}
		if k := nextNonSpace(s, j); k < len(s) && unicode.IsLower(rune(s[k])) {
			continue // "like "this?" and more": the sentence goes on
		}
		if c == '.' {
			w := lastWord(s[start : i+1])
			if sentenceAbbreviations[strings.ToLower(w)] || (len(w) == 2 && unicode.IsUpper(rune(w[0]))) {
				continue
			}
		}
		if t := strings.TrimSpace(s[start:j]); t != "" {
			out = append(out, t)
		}
		start = j
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, t)
	}
	return out
}

// nextNonSpace is the index of the first non-space byte of s at or after i.
func nextNonSpace(s string, i int) int {
	for i < len(s) && isASCIISpace(s[i]) {
		i++
	}
	return i
}

func isASCIISpace(b byte) bool { return b == ' ' || b == '\n' || b == '\t' || b == '\r' }

// lastWord returns the text after the last whitespace in s.
func lastWord(s string) string {
	i := strings.LastIndexAny(s, " \n\t\r(")
	return s[i+1:]
}

// plainSections treats a plain-text body as one section of blank-line
// separated paragraphs.
func plainSections(body string) []mdSection {
	var s mdSection
	norm := strings.ReplaceAll(body, "\r\n", "\n")
	for i, p := range strings.Split(norm, "\n\n") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		s.units = append(s.units, chunkUnit{kind: kindPara, group: i + 1, text: p, atoms: SplitSentences(p)})
	}
	if len(s.units) == 0 {
		return nil
	}
	return []mdSection{s}
}

// inlineText is the plain text of a heading: markup dropped, code spans
// and link texts kept.
func inlineText(n gast.Node, src []byte) string {
	var b strings.Builder
	_ = gast.Walk(n, func(c gast.Node, entering bool) (gast.WalkStatus, error) {
		if !entering {
			return gast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *gast.Text:
			b.Write(c.Segment.Value(src))
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *gast.String:
			b.Write(c.Value)
		case *gast.AutoLink:
			b.Write(c.Label(src))
		}
		return gast.WalkContinue, nil
	})
	return strings.Join(strings.Fields(b.String()), " ")
}

// headingSlug is GitHub's heading anchor: lowercase, punctuation dropped (letters,
// digits, spaces, '-' and '_' kept), spaces turned into '-'. Repeated
// slugs in one document get -1, -2, ... as on GitHub.
func headingSlug(title string, seen map[string]int) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	s := b.String()
	n := seen[s]
	seen[s] = n + 1
	if n > 0 {
		s += "-" + strconv.Itoa(n)
	}
	return s
}

// SplitCode separates a chunk body's fenced code from its prose: prose is
// every line outside fences, code the lines inside them (the fence lines
// themselves in neither). The keyword index scores the two as fields of
// their own, so that a section's explanation is not drowned by examples.
func SplitCode(body string) (prose, code string) {
	if !strings.Contains(body, "```") && !strings.Contains(body, "~~~") {
		return body, ""
	}
	var p, c strings.Builder
	fence := ""
	for line := range strings.SplitSeq(body, "\n") {
		if fence != "" {
			if ClosesFence(line, fence) {
				fence = ""
				continue
			}
			c.WriteString(line)
			c.WriteByte('\n')
			continue
		}
		if f := FenceOpen(line); f != "" && !(f[0] == '`' && strings.Contains(strings.TrimLeft(line, " ")[len(f):], "`")) {
			fence = f
			continue
		}
		p.WriteString(line)
		p.WriteByte('\n')
	}
	return p.String(), c.String()
}
