package mcp

import (
	"slices"
	"strings"
	"unicode"

	"github.com/docent-hq/docent"
)

// body is a chunk's text without the "Title > Section" line the chunker
// puts first (a passage shows its title and section apart).
func body(c docent.Chunk) string {
	parts := make([]string, 0, len(c.Section)+1)
	if t := strings.TrimSpace(c.Title); t != "" {
		parts = append(parts, t)
	}
	parts = append(parts, c.Section...)
	text := c.Text
	if prefix := strings.Join(parts, " > "); prefix != "" {
		if rest, ok := strings.CutPrefix(text, prefix+"\n\n"); ok {
			text = rest
		} else if text == prefix {
			text = ""
		}
	}
	return strings.TrimSpace(text)
}

// documentMarkdown puts a document back together from its chunks, in
// order: the title as "# Title", each section's heading path as headings
// one level deeper per step ("## Section", "### Subsection") where it
// changes, then the chunks' text. Where a section continues into the next
// chunk, the chunker repeated the previous chunk's last sentences at its
// start; that overlap is left out.
func documentMarkdown(title string, chunks []docent.Chunk) string {
	var b strings.Builder
	if title != "" {
		b.WriteString("# " + title + "\n")
	}
	var section []string
	prev := ""
	for i, c := range chunks {
		text := body(c)
		if i == 0 || !slices.Equal(c.Section, section) {
			for d, h := range c.Section {
				if d < len(section) && section[d] == h && slices.Equal(section[:d], c.Section[:d]) {
					continue // an enclosing heading already written
				}
				b.WriteString("\n" + strings.Repeat("#", d+2) + " " + h + "\n")
			}
			section, prev = c.Section, ""
		}
		if trimmed := trimOverlap(prev, text); trimmed != "" {
			b.WriteString("\n" + trimmed + "\n")
		}
		prev = text
	}
	return strings.TrimLeft(b.String(), "\n")
}

// trimOverlap drops from next the longest start that prev ends with and
// that begins at a word boundary of prev: the overlap the chunker copies
// into a section's next chunk. Text that repeats less than a few words is
// kept.
func trimOverlap(prev, next string) string {
	const probeLen = 24
	if len(prev) < probeLen || len(next) < probeLen {
		return next
	}
	probe := next[:probeLen]
	for i := 0; i < len(prev); {
		j := strings.Index(prev[i:], probe)
		if j < 0 {
			break
		}
		p := i + j
		if (p == 0 || unicode.IsSpace(rune(prev[p-1]))) && strings.HasPrefix(next, prev[p:]) {
			return strings.TrimSpace(next[len(prev)-p:])
		}
		i = p + 1
	}
	return next
}
