package connectors

import (
	"regexp"
	"strings"
)

// Footnotes (GitHub, MkDocs' footnotes extension, Goldmark in Hugo, PHP
// Markdown Extra, remark-gfm in Docusaurus): a definition "[^id]: text",
// its further lines indented, anywhere in the page; a reference "[^id]" in
// the text. A reader sees the note beside the word that calls it, so the
// note's text goes there, in brackets, at its first reference, and the
// definition leaves the page's end, where it would be a passage without
// its context. A reference with no definition is left as written (it may
// be a character class in code).

var (
	footnoteDefRE = regexp.MustCompile(`^ {0,3}\[\^([^\]\s]+)\]:[ \t]?(.*)$`)
	footnoteRefRE = regexp.MustCompile(`\[\^([^\]\s]+)\]`)
)

// footnotes moves each footnote's text to its first reference, outside
// fenced code, and drops the definitions.
func footnotes(lines []string) []string {
	code := fencedLines(lines)
	notes := map[string]string{}
	var kept []string
	var keptCode []bool
	for i := 0; i < len(lines); i++ {
		m := footnoteDefRE.FindStringSubmatch(lines[i])
		if code[i] || m == nil {
			kept, keptCode = append(kept, lines[i]), append(keptCode, code[i])
			continue
		}
		text := []string{strings.TrimSpace(m[2])}
		for i+1 < len(lines) && !code[i+1] && indented(lines[i+1]) {
			i++
			text = append(text, strings.TrimSpace(lines[i]))
		}
		notes[m[1]] = strings.Join(strings.Fields(strings.Join(text, " ")), " ")
	}
	if len(notes) == 0 {
		return lines
	}
	placed := map[string]bool{}
	for i, l := range kept {
		if keptCode[i] || !strings.Contains(l, "[^") {
			continue
		}
		row := strings.HasPrefix(strings.TrimSpace(l), "|")
		var b strings.Builder
		last := 0
		for _, m := range footnoteRefRE.FindAllStringSubmatchIndex(l, -1) {
			id := l[m[2]:m[3]]
			note, ok := notes[id]
			if !ok {
				continue
			}
			b.WriteString(l[last:m[0]])
			last = m[1]
			if placed[id] || note == "" {
				continue
			}
			placed[id] = true
			if row {
				note = strings.ReplaceAll(note, "|", "/") // a table cell holds no pipe
			}
			if m[0] > 0 && l[m[0]-1] != ' ' && l[m[0]-1] != '\t' {
				b.WriteByte(' ')
			}
			b.WriteString("(" + note + ")")
		}
		kept[i] = b.String() + l[last:]
	}
	return kept
}

// indented reports whether l is a non-blank line indented by at least two
// spaces or a tab: a footnote's further line.
func indented(l string) bool {
	return strings.TrimSpace(l) != "" && (strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "\t"))
}
