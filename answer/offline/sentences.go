package offline

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// unitKind says what markdown construct a unit came from.
type unitKind int

const (
	kindSentence unitKind = iota
	kindItem              // list item
	kindRow               // table row
)

// unit is the smallest quotable piece of a chunk: a sentence, a list
// item or a table row.
type unit struct {
	// Text is the rendered text (markdown emphasis and links removed).
	Text string
	Kind unitKind
	// Ord is the unit's position in its chunk.
	Ord int
	// Terms are the unit's analyzed terms; Context the terms of the
	// headings above it (section path, in-chunk headings, table header);
	// Title the terms of the document title.
	Terms, Context, Title map[string]bool
	// Group numbers the table or list a row or item belongs to within its
	// chunk, from 1; 0 for a sentence.
	Group int
	// Para numbers the paragraph a sentence belongs to within its chunk,
	// from 1; 0 for a row or item. Sub is set for a list item nested
	// under another (indented).
	Para int
	Sub  bool
	// Key names what a row or item is about: a row's first cell, or the
	// words of an item before its first colon or dash (when short).
	Key string
	// Code holds the lines of a short code block the unit introduces
	// (its text ends in ":"); their words are among Terms.
	Code []string
	// kinds caches the answer types the unit holds when a caller has
	// computed them (see unitKinds); zero means not computed, and holds
	// matches the one type asked for: most units are asked about one type
	// once, and classifying every unit of every candidate dominated the
	// answer's time on long documents. meta: the unit speaks about the
	// page itself (metaRE).
	kinds uint16
	meta  bool
}

// display is the unit as quoted: its text, then its code lines as code.
func (u unit) display() string {
	if len(u.Code) == 0 {
		return u.Text
	}
	quoted := make([]string, len(u.Code))
	for i, l := range u.Code {
		quoted[i] = "`" + l + "`"
	}
	return u.Text + " " + strings.Join(quoted, "; ")
}

var (
	listRE   = regexp.MustCompile(`^\s*(?:[-*+]|\d{1,3}[.)])\s+`)
	tableSep = regexp.MustCompile(`^\|?[\s:\-|]+\|?$`)
	linkRE   = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	emphRE   = regexp.MustCompile(`\*\*|__`)
	italicRE = regexp.MustCompile(`(^|\s)[*_]([^*_\s][^*_]*)[*_]`)
	// htmlRE is an HTML element's tag. A placeholder written like one
	// ("services.<service_name>.port", "<your-token>") is text: only
	// tags of HTML's elements go, and nothing inside inline code.
	blockTagRE = regexp.MustCompile(`(?i)^</?(?:br|hr|p|div|li|tr|td|th|h[1-6]|blockquote|pre|table|ul|ol|dl|dt|dd|section|details|summary|figure|figcaption)\b`)
	htmlRE     = regexp.MustCompile(`(?i)</?(?:a|abbr|b|big|blockquote|br|center|cite|code|dd|del|details|dfn|div|dl|dt|em|figcaption|figure|font|h[1-6]|hr|i|img|ins|kbd|li|mark|nobr|ol|p|picture|pre|q|s|samp|section|small|source|span|strike|strong|sub|summary|sup|table|tbody|td|th|thead|tr|tt|u|ul|var|video|wbr)\b(?:[^>"']|"[^"]*"|'[^']*')*/?>`)
	headingRE  = regexp.MustCompile(`^#{1,6}\s+`)
	// labelRE is a paragraph that is one bold span and no sentence: a
	// label over what follows ("**Example**", "**Docker**", "**Note:**"),
	// as authors write pseudo-headings and as docent writes an
	// admonition's or a content tab's title (connectors' normaliser).
	labelRE = regexp.MustCompile(`^(?:\*\*|__)([^*_]*[^*_.!?])(?:\*\*|__):?$`)
)

// maxCodeLines is the longest code block that is quoted after the
// sentence introducing it; longer blocks are left out of answers.
const maxCodeLines = 3

// splitUnits splits a chunk's text into quotable units. It skips the
// "Title > Section" prefix line, headings and bold label lines (their
// words become context),
// turns table rows into "cell: cell" units and list items into units, and
// attaches a short code block to the sentence before it that ends in ":".
func splitUnits(c docent.Chunk) []unit {
	var (
		units    []unit
		para     []string
		headCtx  = strings.Join(c.Section, " ")
		title    = search.TermSet(c.Title)
		inner    string // in-chunk heading
		label    string // bold label line under it (labelRE)
		header   []string
		group    int      // current table or list number
		inGroup  bool     // the last unit was a row or an item
		lastKind unitKind // of the last unit
		inCode   bool
		code     []string
		item     []string
		sub      bool // the current item is indented
		paras    int  // paragraphs so far
		// leadIn is set when a code block has just closed after a unit
		// that introduces it (ends in ":"): a paragraph that then opens
		// in lower case finishes that unit's sentence ("If a push is
		// blocked: <block> remove the secret and push again.").
		leadIn bool
		block  []string // the lines of the code block just closed
	)
	ctx := func(extra string) map[string]bool {
		return search.TermSet(headCtx + " " + inner + " " + label + " " + extra)
	}
	add := func(text string, kind unitKind, extra, key string) {
		text = cleanInline(text)
		if text == "" || !hasLetterOrDigit(text) {
			return
		}
		u := unit{Text: text, Kind: kind, Ord: len(units), Terms: search.TermSet(text), Context: ctx(extra), Title: title}
		if kind != kindSentence {
			if !inGroup || kind != lastKind {
				group++
			}
			u.Group, u.Key = group, cleanInline(key)
			u.Sub = kind == kindItem && sub
		} else {
			u.Para = paras
		}
		inGroup, lastKind = kind != kindSentence, kind
		units = append(units, u)
	}
	flushPara := func() {
		if len(para) == 1 {
			if m := labelRE.FindStringSubmatch(para[0]); m != nil {
				// A label is a heading over what follows: its words are
				// the context of the units under it, and it is no unit.
				label, inGroup, leadIn, para = cleanInline(m[1]), false, false, nil
				return
			}
		}
		if len(para) > 0 {
			sentences := search.SplitSentences(strings.Join(para, " "))
			if leadIn && len(sentences) > 0 && opensLower(sentences[0]) {
				last := &units[len(units)-1]
				if len(last.Code) == 0 && len(block) <= maxCodeLines {
					last.Code = block // the sentence runs through the block
				}
				rest := cleanInline(sentences[0])
				last.Text, last.Code = last.display()+" "+rest, nil
				for t := range search.TermSet(rest) {
					last.Terms[t] = true
				}
				sentences = sentences[1:]
			}
			leadIn = false
			paras++
			for _, s := range sentences {
				add(s, kindSentence, "", "")
			}
			para = nil
		}
	}
	flushItem := func() {
		if len(item) > 0 {
			text := strings.Join(item, " ")
			add(text, kindItem, "", itemKey(text))
			item = nil
		}
	}
	flushAll := func() {
		flushPara()
		flushItem()
		header = nil
	}
	lines := strings.Split(c.Text, "\n")
	for i, raw := range lines {
		line := strings.TrimSpace(raw)
		if i == 0 && c.Title != "" && (line == c.Title || strings.HasPrefix(line, c.Title+" > ")) {
			continue
		}
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			if !inCode {
				flushPara()
				flushItem()
				inCode, code = true, nil
				continue
			}
			inCode = false
			attachCode(units, code)
			leadIn = len(units) > 0 && units[len(units)-1].Kind == kindSentence && introducesCode(units[len(units)-1])
			block = code
			continue
		}
		if inCode {
			if line != "" {
				code = append(code, line)
			}
			continue
		}
		switch {
		case line == "":
			flushAll()
		case headingRE.MatchString(line):
			flushAll()
			leadIn = false
			inner, label, inGroup = headingRE.ReplaceAllString(line, ""), "", false
		case strings.HasPrefix(line, "|"):
			flushPara()
			flushItem()
			leadIn = false
			if tableSep.MatchString(line) {
				continue
			}
			cells := tableCells(line)
			if header == nil {
				header, inGroup = cells, false
				continue
			}
			add(renderRow(header, cells), kindRow, strings.Join(header, " "), cells[0])
		case listRE.MatchString(line):
			flushPara()
			flushItem()
			leadIn = false
			item = []string{listRE.ReplaceAllString(line, "")}
			sub = raw != line && strings.TrimLeft(raw, " \t") != raw
		case item != nil:
			// A line right under an item continues it, indented or not
			// (CommonMark's lazy continuation: "1. If a label defines a
			// router\nand a label defines a service,\nthen ...").
			item = append(item, line)
		default:
			flushItem()
			para = append(para, strings.TrimSpace(strings.TrimPrefix(line, ">")))
		}
	}
	flushAll()
	for i := range units {
		units[i].meta = metaRE.MatchString(units[i].Text)
	}
	return units
}

// itemKeyRE matches the lead words of a list item: up to five words
// before a colon or a dash.
var itemKeyRE = regexp.MustCompile(`^\**([^:–—*]{1,60}?)\**\s*(?::|\s[–—-]\s)`)

// itemKey returns what a list item is about, when it starts with a short
// label ("Public: anything on the website"), or "".
func itemKey(text string) string {
	m := itemKeyRE.FindStringSubmatch(text)
	if m == nil || len(strings.Fields(m[1])) > 5 {
		return ""
	}
	return strings.TrimSpace(m[1])
}

// attachCode appends a short code block to the last unit when that unit
// introduces it (ends in ":").
func attachCode(units []unit, code []string) {
	if len(units) == 0 || len(code) == 0 || len(code) > maxCodeLines {
		return
	}
	last := &units[len(units)-1]
	if !strings.HasSuffix(last.Text, ":") {
		return
	}
	last.Code = append([]string(nil), code...)
	for t := range search.TermSet(strings.Join(code, " ")) {
		last.Terms[t] = true
	}
}

// introducesCode reports whether u may lead into the code block after
// it: it ends in ":" ("Install it with:"), or it is a sentence left
// unfinished ("For example", "as --bwlimit UP:DOWN, so"). Text after the
// block that opens in lower case then finishes it, the block inside.
func introducesCode(u unit) bool {
	t := strings.TrimSpace(u.Text)
	if strings.HasSuffix(t, ":") {
		return true
	}
	return u.Kind == kindSentence && t != "" && !strings.ContainsAny(t[len(t)-1:], ".!?")
}

func tableCells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	line = strings.TrimSuffix(line, "|")
	cells := strings.Split(line, "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

// renderRow renders a table row as "a: b" for two columns and as
// "a — H2: b; H3: c" for more.
func renderRow(header, cells []string) string {
	if len(cells) == 1 {
		return cells[0]
	}
	if len(cells) == 2 {
		return cells[0] + ": " + cells[1]
	}
	var b strings.Builder
	b.WriteString(cells[0])
	for i := 1; i < len(cells); i++ {
		if cells[i] == "" {
			continue
		}
		if i == 1 {
			b.WriteString(" — ")
		} else {
			b.WriteString("; ")
		}
		if i < len(header) && header[i] != "" {
			b.WriteString(header[i] + ": ")
		}
		b.WriteString(cells[i])
	}
	return b.String()
}

// cleanInline turns a line of markdown into plain text: links become
// their text, images and HTML tags go, emphasis and inline-code marks
// are removed.
func cleanInline(s string) string {
	s = linkRE.ReplaceAllString(s, "$1")
	s = outsideCode(s, func(t string) string {
		return htmlRE.ReplaceAllStringFunc(t, func(tag string) string {
			if blockTagRE.MatchString(tag) {
				return " " // a break or a block parts words
			}
			return ""
		})
	})
	s = emphRE.ReplaceAllString(s, "")
	s = italicRE.ReplaceAllString(s, "$1$2")
	s = strings.ReplaceAll(s, "`", "")
	return strings.Join(strings.Fields(s), " ")
}

// outsideCode applies f to the parts of s outside inline code spans
// (between backticks) and keeps the spans as written.
func outsideCode(s string, f func(string) string) string {
	if !strings.Contains(s, "`") {
		return f(s)
	}
	parts := strings.Split(s, "`")
	for i := 0; i < len(parts); i += 2 { // even parts are outside code
		if i == len(parts)-1 && len(parts)%2 == 0 {
			break // an unclosed backtick: the rest is as written
		}
		parts[i] = f(parts[i])
	}
	return strings.Join(parts, "`")
}

// opensLower reports whether s starts with a lower-case letter (after
// any markup): it continues a sentence rather than starting one.
func opensLower(s string) bool {
	for _, r := range cleanInline(s) {
		if unicode.IsLetter(r) {
			return unicode.IsLower(r)
		}
		if !unicode.IsPunct(r) && !unicode.IsSpace(r) {
			return false
		}
	}
	return false
}

func hasLetterOrDigit(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}
