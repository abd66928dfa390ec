package answer

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
	// headings above it (section path, in-chunk headings, table header).
	Terms, Context map[string]bool
}

var (
	listRE    = regexp.MustCompile(`^\s*(?:[-*+]|\d{1,3}[.)])\s+`)
	tableSep  = regexp.MustCompile(`^\|?[\s:\-|]+\|?$`)
	linkRE    = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	emphRE    = regexp.MustCompile(`\*\*|__`)
	headingRE = regexp.MustCompile(`^#{1,6}\s+`)
)

// maxCodeLines is the longest code block that is quoted after the
// sentence introducing it; longer blocks are left out of answers.
const maxCodeLines = 3

// splitUnits splits a chunk's text into quotable units. It skips the
// "Title > Section" prefix line and headings (their words become context),
// turns table rows into "cell: cell" units and list items into units, and
// attaches a short code block to the sentence before it that ends in ":".
func splitUnits(c docent.Chunk) []unit {
	var (
		units   []unit
		para    []string
		headCtx = strings.Join(append([]string{c.Title}, c.Section...), " ")
		inner   string // in-chunk heading
		header  []string
		inCode  bool
		code    []string
		item    []string
	)
	ctx := func(extra string) map[string]bool { return termSet(headCtx + " " + inner + " " + extra) }
	add := func(text string, kind unitKind, extra string) {
		text = cleanInline(text)
		if text == "" || !hasLetterOrDigit(text) {
			return
		}
		units = append(units, unit{Text: text, Kind: kind, Ord: len(units), Terms: termSet(text), Context: ctx(extra)})
	}
	flushPara := func() {
		if len(para) > 0 {
			for _, s := range search.SplitSentences(strings.Join(para, " ")) {
				add(s, kindSentence, "")
			}
			para = nil
		}
	}
	flushItem := func() {
		if len(item) > 0 {
			add(strings.Join(item, " "), kindItem, "")
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
			inner = headingRE.ReplaceAllString(line, "")
		case strings.HasPrefix(line, "|"):
			flushPara()
			flushItem()
			if tableSep.MatchString(line) {
				continue
			}
			cells := tableCells(line)
			if header == nil {
				header = cells
				continue
			}
			add(renderRow(header, cells), kindRow, strings.Join(header, " "))
		case listRE.MatchString(line):
			flushPara()
			flushItem()
			item = []string{listRE.ReplaceAllString(line, "")}
		case item != nil && raw != line: // indented continuation of an item
			item = append(item, line)
		default:
			flushItem()
			para = append(para, strings.TrimSpace(strings.TrimPrefix(line, ">")))
		}
	}
	flushAll()
	return units
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
	quoted := make([]string, len(code))
	for i, l := range code {
		quoted[i] = "`" + l + "`"
	}
	last.Text += " " + strings.Join(quoted, "; ")
	for t := range termSet(strings.Join(code, " ")) {
		last.Terms[t] = true
	}
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

// cleanInline removes markdown emphasis and turns links into their text.
func cleanInline(s string) string {
	s = linkRE.ReplaceAllString(s, "$1")
	s = emphRE.ReplaceAllString(s, "")
	return strings.Join(strings.Fields(s), " ")
}

func hasLetterOrDigit(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}
