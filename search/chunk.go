package search

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/internal/mdsafe"
	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// Default chunk sizes, in estimated tokens.
const (
	DefaultTargetTokens  = 512
	DefaultOverlapTokens = 40
)

// Chunker splits markdown documents into chunks by structure.
//
// Rules, in order:
//
//   - Sections. Top-level headings split the document; each chunk belongs
//     to exactly one section and carries its heading path in Section (an
//     H1 equal to the document title is left out of the path). Content
//     before the first heading has an empty Section. A heading's attribute
//     list ("## Options {#options}", as Hugo, kramdown, MkDocs and
//     Docusaurus write custom anchors) leaves its text, and its id is the
//     section's anchor; otherwise the anchor is GitHub's slug. A heading
//     with no content of its own gives no chunk when a subsection follows
//     (its name is in the subsection's path).
//   - Small sections. A section whose body is under MinSectionChars (a
//     lone "Required", one link, a heading with nothing under it) is too
//     small to answer from: it is merged with a neighbour under the same
//     parent heading (see mergeTiny), its heading kept as a heading line
//     of the chunk's text (BodyHeadings), so that no word of the document
//     is lost. A small section with no such
//     neighbour stays a chunk of its own.
//   - Repeats. A chunk whose body is exactly the body of an earlier chunk
//     of the same document (a note or an example repeated under several
//     headings) is left out: the first one stands for it.
//   - Blocks. Within a section, whole blocks (paragraphs, lists, tables,
//     code blocks, quotes) are packed greedily up to TargetTokens. A block
//     that does not fit in the space left starts a new chunk rather than
//     being cut.
//   - Splitting. A block larger than TargetTokens is split: tables at row
//     boundaries with the header and delimiter rows repeated in every piece;
//     lists at item boundaries (a single item too large is split like a
//     paragraph); fenced code at line boundaries, each piece re-fenced with
//     the original opening and closing fences; paragraphs at sentence
//     boundaries, and a single sentence too large at word boundaries.
//   - Overlap. When a section continues into another chunk, the new chunk
//     starts with the last whole sentences (or list items) of the previous
//     chunk, up to OverlapTokens. Table rows and code lines are not
//     repeated: split tables repeat their header instead. Overlap is capped
//     at TargetTokens/2 and dropped when it would push a whole block over
//     the target.
//
// Sizes are EstimateTokens of the chunk body (without the title prefix).
// No chunk body exceeds 1.5×TargetTokens except when it holds one
// indivisible unit: a table header plus a single row, or a single code
// line, that alone is larger than the target (or a single word, which
// cannot happen in practice).
//
// Plain-text documents (Path ending in .txt) are not parsed as markdown:
// blank-line separated paragraphs are the blocks. Other documents,
// including .rst, are parsed as CommonMark with GFM tables, so setext
// (underlined) headings split sections.
type Chunker struct {
	// TargetTokens is the chunk size aimed for; 0 means DefaultTargetTokens.
	TargetTokens int
	// OverlapTokens is how much of a chunk the next one in the same
	// section repeats; 0 means DefaultOverlapTokens, negative means none.
	OverlapTokens int
	// MinSectionChars is the body size under which a section is merged
	// with a neighbour (see mergeTiny); 0 means DefaultMinSectionChars,
	// negative never merges.
	MinSectionChars int
}

// EstimateTokens is a cheap, deterministic token estimate: the larger of
// words×4/3 (English prose averages about 0.75 words per token) and
// runes/4 (dense text such as code, URLs or CJK with few spaces), rounded
// up. Words are runs of non-space characters.
func EstimateTokens(s string) int {
	words := 0
	inWord := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			inWord = false
		} else if !inWord {
			inWord = true
			words++
		}
	}
	byWords := (words*4 + 2) / 3
	byRunes := (utf8.RuneCountInString(s) + 3) / 4
	return max(byWords, byRunes)
}

// sizes returns the effective target and overlap.
func (c Chunker) sizes() (target, overlap int) {
	target, overlap = c.TargetTokens, c.OverlapTokens
	if target <= 0 {
		target = DefaultTargetTokens
	}
	if overlap == 0 {
		overlap = DefaultOverlapTokens
	}
	overlap = max(0, min(overlap, target/2))
	return target, overlap
}

// Chunk splits doc into chunks in document order. An empty document gives
// no chunks. The error is always nil today; it is there for parsers that
// can fail.
func (c Chunker) Chunk(doc docent.Document) ([]docent.Chunk, error) {
	chunks, _, err := c.ChunkAtMost(doc, 0)
	return chunks, err
}

// ChunkAtMost is Chunk that stops making chunks once it has limit of them
// (limit <= 0: no limit), so that a document of a hundred thousand
// headings costs limit chunks, not a hundred thousand made and dropped.
// rest is how many more it would have made at least: the pieces left of
// the section it stopped in plus one per section after it (0 when the
// document fit).
func (c Chunker) ChunkAtMost(doc docent.Document, limit int) (chunks []docent.Chunk, rest int, err error) {
	if strings.TrimSpace(doc.Body) == "" {
		return nil, 0, nil
	}
	target, overlap := c.sizes()
	body := strings.ReplaceAll(doc.Body, "\r\n", "\n")
	var sections []mdSection
	if strings.EqualFold(path.Ext(doc.Path), ".txt") {
		sections = plainSections(body)
	} else {
		sections = markdownSections(body, doc.Title)
	}

	if minChars := c.MinSectionChars; minChars >= 0 {
		if minChars == 0 {
			minChars = DefaultMinSectionChars
		}
		sections = mergeTiny(sections, target, minChars)
	}

	seen := map[string]int{}
	bodies := map[string]bool{}
	for i, s := range sections {
		if limit > 0 && len(chunks) >= limit {
			return chunks, len(sections) - i, nil
		}
		texts := packSection(s.units, target, overlap)
		if len(s.units) == 0 {
			texts = []string{""} // an empty leaf section: its heading path alone
		}
		for j, text := range texts {
			if limit > 0 && len(chunks) >= limit {
				// The pieces left of this section that are not repeats,
				// and at least one per section after it.
				left := map[string]bool{}
				for _, t := range texts[j:] {
					if t == "" || !bodies[t] {
						left[t] = true
					}
				}
				return chunks, len(left) + len(sections) - i - 1, nil
			}
			if text != "" {
				if bodies[text] {
					// The same text again in this document (a repeated
					// note or example): the first one stands for it.
					continue
				}
				bodies[text] = true
			}
			ch := docent.Chunk{
				DocID:     doc.ID,
				Ord:       len(chunks),
				Source:    doc.Source,
				Space:     doc.Space,
				Labels:    doc.Labels,
				UpdatedAt: doc.UpdatedAt,
				Title:     doc.Title,
				Section:   s.path,
				URL:       doc.URL,
				Text:      chunkPrefix(doc.Title, s.path) + text,
			}
			if text == "" {
				ch.Text = strings.TrimRight(ch.Text, "\n")
			}
			if doc.URL != "" && s.anchor != "" {
				ch.URL = doc.URL + "#" + s.anchor
			}
			ch.ID = chunkID(doc.ID, s.path, ch.Text, seen)
			chunks = append(chunks, ch)
		}
	}
	return chunks, 0, nil
}

// DefaultMinSectionChars is the size under which a section's body is too
// small to stand alone: a fragment ("Required", one link, an empty
// heading) that the answerer would quote as an answer. Such a section is
// merged with a neighbour under the same parent heading (see mergeTiny).
const DefaultMinSectionChars = 120

// mergeTiny merges every section whose body is shorter than minChars
// into a neighbour under the same parent heading, when the
// two fit in target tokens: into the next section when that is its child
// (a parent's short intro), else into the previous sibling, else into the
// next sibling, else into the previous section when that is its parent.
// The merged section is named and linked by the section its text starts
// with; the heading of the other, when not in that path, stays a heading
// line before its text, so no word is lost.
func mergeTiny(sections []mdSection, target, minChars int) []mdSection {
	size := func(s mdSection) int { return len(joinUnits(s.units)) }
	fits := func(a, b mdSection, extra string) bool {
		return EstimateTokens(joinUnits(a.units))+EstimateTokens(joinUnits(b.units))+EstimateTokens(extra) <= target
	}
	var out []mdSection
	for i := 0; i < len(sections); i++ {
		t := sections[i]
		if size(t) >= minChars {
			out = append(out, t)
			continue
		}
		var prev, next *mdSection
		if len(out) > 0 {
			prev = &out[len(out)-1]
		}
		if i+1 < len(sections) {
			next = &sections[i+1]
		}
		line := ""
		if len(t.path) > 0 {
			line = headingLine(t.path)
		}
		switch {
		case prev != nil && slices.Equal(prev.path, t.path) && fits(*prev, t, ""):
			// The same section again (the text before and after a title
			// heading): one section.
			prev.units = append(prev.units, t.units...)
		case next != nil && hasPrefix(next.path, t.path) && fits(*next, t, ""):
			// A parent's intro: it leads its first child's text.
			next.units = append(slices.Clip(t.units), next.units...)
			next.lead += len(t.units)
		case prev != nil && siblings(prev.path, t.path) && fits(*prev, t, line):
			prev.units = append(prev.units, headed(line, t)...)
		case next != nil && siblings(next.path, t.path) && fits(*next, t, line+next.path[len(next.path)-1]):
			// The text then starts with the small section: the merged one
			// is named and linked by it, and the next section's heading
			// marks where its own text starts.
			next.units = append(slices.Clip(t.units), headed(headingLine(next.path), *next)...)
			next.path, next.anchor, next.lead = t.path, t.anchor, t.lead
		case prev != nil && hasPrefix(t.path, prev.path) && len(prev.path) > 0 && fits(*prev, t, line):
			prev.units = append(prev.units, headed(line, t)...)
		default:
			out = append(out, t)
		}
	}
	return out
}

// siblings reports whether two heading paths share their parent.
func siblings(a, b []string) bool {
	return len(a) == len(b) && len(a) > 0 && slices.Equal(a[:len(a)-1], b[:len(b)-1])
}

// headingLine is the markdown heading of the section at path, at the
// level its depth gives: a merged section's heading stays a heading in
// the text, where BodyHeadings finds it.
func headingLine(path []string) string {
	return strings.Repeat("#", min(6, len(path)+1)) + " " + path[len(path)-1]
}

// BodyHeadings returns the headings written in a chunk's body (outside
// fenced code): those of small sections merged into the chunk, which its
// Section path does not name.
func BodyHeadings(body string) []string {
	var out []string
	fence := ""
	for line := range strings.SplitSeq(body, "\n") {
		if fence != "" {
			if ClosesFence(line, fence) {
				fence = ""
			}
			continue
		}
		if f := FenceOpen(line); f != "" {
			fence = f
			continue
		}
		t := strings.TrimLeft(line, "#")
		if n := len(line) - len(t); n >= 1 && n <= 6 && strings.HasPrefix(t, " ") {
			if h := strings.TrimSpace(t); h != "" {
				out = append(out, h)
			}
		}
	}
	return out
}

// headed returns s's units with its heading line ("" for none)
// where its own text starts, after any intro of a parent it leads with.
func headed(line string, s mdSection) []chunkUnit {
	out := make([]chunkUnit, 0, len(s.units)+1)
	out = append(out, s.units[:s.lead]...)
	if line != "" {
		// A line of its own, never joined to the paragraph beside it.
		out = append(out, chunkUnit{kind: kindOther, group: -1, text: line})
	}
	return append(out, s.units[s.lead:]...)
}

// chunkPrefix is the "Title > Section > Subsection\n\n" line of a chunk
// (docent.ChunkHeading).
func chunkPrefix(title string, sec []string) string {
	if h := docent.ChunkHeading(title, sec); h != "" {
		return h + "\n\n"
	}
	return ""
}

// chunkID hashes the document ID, section path and text. A second chunk
// with the same three (a repeated section) gets its occurrence number
// mixed in, so IDs stay unique and still stable.
func chunkID(docID string, sec []string, txt string, seen map[string]int) string {
	h := sha256.New()
	h.Write([]byte(docID))
	h.Write([]byte{0})
	h.Write([]byte(strings.Join(sec, "\x1f")))
	h.Write([]byte{0})
	h.Write([]byte(txt))
	sum := h.Sum(nil)
	id := hex.EncodeToString(sum[:16])
	n := seen[id]
	seen[id] = n + 1
	if n == 0 {
		return id
	}
	h.Write([]byte{0})
	h.Write([]byte(strconv.Itoa(n)))
	sum = h.Sum(nil)
	return hex.EncodeToString(sum[:16])
}

// kind is the type of a block, which decides how it splits.
type blockKind int

const (
	kindPara  blockKind = iota // prose: splits at sentences
	kindList                   // splits at items
	kindTable                  // splits at rows, header repeated
	kindCode                   // splits at lines, fences repeated
	kindOther                  // quotes, HTML: splits at lines
)

// mdSection is a heading path and its blocks.
type mdSection struct {
	path   []string
	anchor string
	units  []chunkUnit
	// lead counts the units at the start that are a parent's short intro
	// merged in (see mergeTiny).
	lead int
}

// chunkUnit is a block, or a piece of a split block, as markdown source.
type chunkUnit struct {
	kind  blockKind
	group int    // pieces of one block share a group
	text  string // markdown source, trimmed
	// atoms are the sentences or items the chunkUnit ends with, in order; the
	// overlap of the next chunk is taken from them. Empty for tables and
	// code, which do not overlap.
	atoms []string
}

func (u chunkUnit) tokens() int { return EstimateTokens(u.text) }

// joiner returns the separator between two adjacent units.
func joiner(a, b chunkUnit) string {
	if a.group == b.group {
		switch a.kind {
		case kindPara:
			return " "
		case kindList:
			return "\n"
		}
	}
	return "\n\n"
}

// mdParser is the shared parser: CommonMark plus GFM tables. The other GFM
// extensions (autolinks, strikethrough, task lists) only change inline
// nodes, which the chunker never renders (it cuts source bytes), and
// autolinking alone costs a quarter of the chunking time. Tables are
// mdsafe's, whose cells are bounded: goldmark's own pads a wide table
// into gigabytes.
var mdParser = goldmark.New(goldmark.WithExtensions(mdsafe.Table))

// headingIDRE is an attribute list at the end of a heading's text:
// "Options {#options}" or "{ #options .wide }", the form Hugo, kramdown,
// MkDocs and Docusaurus write custom anchors in.
var headingIDRE = regexp.MustCompile(`\s*\{:?\s*#([\w-]+)[^{}]*\}\s*$`)

// headingID splits a heading's attribute list off its text: the text, and
// the id (the section's anchor), "" when there is none.
func headingID(text string) (string, string) {
	if !strings.HasSuffix(text, "}") {
		return text, ""
	}
	m := headingIDRE.FindStringSubmatchIndex(text)
	if m == nil {
		return text, ""
	}
	return strings.TrimSpace(text[:m[0]]), text[m[2]:m[3]]
}

// markdownSections parses body and groups its top-level blocks by
// heading. An H1 equal to title is not part of any heading path.
func markdownSections(body, title string) []mdSection {
	src := []byte(body)
	root := mdParser.Parser().Parse(text.NewReader(src))

	// Top-level blocks with a known start, in order.
	type block struct {
		node  gast.Node
		start int
	}
	var blocks []block
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		if off := firstOffset(n, src); off >= 0 {
			blocks = append(blocks, block{n, lineStart(src, off)})
		}
	}

	type level struct {
		depth int
		text  string
	}
	var (
		stack    []level
		sections = []mdSection{{}}
		slugs    = map[string]int{}
		group    int
		titleH1  = true // only the first H1 can be the title
	)
	for i, b := range blocks {
		end := len(src)
		if i+1 < len(blocks) {
			end = blocks[i+1].start
		}
		raw := string(src[b.start:end])
		if h, ok := b.node.(*gast.Heading); ok {
			heading, id := headingID(inlineText(h, src))
			anchor := headingSlug(heading, slugs)
			if id != "" {
				anchor = id
			}
			isTitle := h.Level == 1 && titleH1 && strings.EqualFold(heading, strings.TrimSpace(title))
			if h.Level == 1 {
				titleH1 = false
			}
			for len(stack) > 0 && stack[len(stack)-1].depth >= h.Level {
				stack = stack[:len(stack)-1]
			}
			p := make([]string, 0, len(stack)+1)
			for _, l := range stack {
				p = append(p, l.text)
			}
			if isTitle {
				// The title H1 starts the intro again: content under it
				// has an empty section and links to the document itself.
				anchor = ""
			} else {
				stack = append(stack, level{h.Level, heading})
				p = append(p, heading)
			}
			sections = append(sections, mdSection{path: p, anchor: anchor})
			continue
		}
		if strings.TrimSpace(raw) == "" {
			continue
		}
		s := &sections[len(sections)-1]
		group++
		s.units = append(s.units, blockUnit(b.node, src, b.start, end, group))
	}

	out := sections[:0]
	for i, s := range sections {
		if len(s.units) == 0 {
			// No content of its own: the intro or the title H1 gives
			// nothing; a heading whose subsection follows is named in
			// that subsection's path; an empty leaf heading is kept.
			if len(s.path) == 0 || (i+1 < len(sections) && hasPrefix(sections[i+1].path, s.path)) {
				continue
			}
		}
		if len(s.path) == 0 {
			s.path = nil
		}
		out = append(out, s)
	}
	return out
}

// hasPrefix reports whether path starts with the whole of prefix and is
// longer.
func hasPrefix(path, prefix []string) bool {
	if len(path) <= len(prefix) {
		return false
	}
	for i := range prefix {
		if path[i] != prefix[i] {
			return false
		}
	}
	return true
}

// blockUnit turns the top-level block n, whose source is src[start:end],
// into a chunkUnit.
func blockUnit(n gast.Node, src []byte, start, end, group int) chunkUnit {
	raw := string(src[start:end])
	u := chunkUnit{group: group, text: strings.TrimSpace(raw)}
	switch n := n.(type) {
	case *gast.Paragraph:
		u.kind = kindPara
		u.atoms = SplitSentences(u.text)
	case *gast.List:
		u.kind = kindList
		u.atoms = listItems(n, src, start, end)
	case *east.Table:
		u.kind = kindTable
	case *gast.FencedCodeBlock, *gast.CodeBlock:
		u.kind = kindCode
		// Keep the indentation of the first line (indented code).
		u.text = strings.TrimRight(strings.TrimLeft(raw, "\r\n"), " \t\r\n")
	default:
		u.kind = kindOther
	}
	return u
}

// listItems returns the source of each item of a list spanning
// src[start:end], trimmed. An item runs from its first line to the next
// item's first line.
func listItems(list *gast.List, src []byte, start, end int) []string {
	var starts []int
	for it := list.FirstChild(); it != nil; it = it.NextSibling() {
		off := firstOffset(it, src)
		if off < 0 {
			continue // an empty item stays with the one before it
		}
		off = lineStart(src, off)
		if len(starts) == 0 {
			off = start
		}
		if len(starts) == 0 || off > starts[len(starts)-1] {
			starts = append(starts, off)
		}
	}
	if len(starts) == 0 {
		return []string{strings.TrimSpace(string(src[start:end]))}
	}
	items := make([]string, 0, len(starts))
	for i, s := range starts {
		e := end
		if i+1 < len(starts) {
			e = starts[i+1]
		}
		if t := strings.TrimSpace(string(src[s:e])); t != "" {
			items = append(items, t)
		}
	}
	return items
}

// firstOffset is the smallest source offset of n or its descendants, -1
// when none has a position (an empty code fence, a thematic break).
func firstOffset(n gast.Node, src []byte) int {
	best := -1
	take := func(off int) {
		if best < 0 || off < best {
			best = off
		}
	}
	_ = gast.Walk(n, func(c gast.Node, entering bool) (gast.WalkStatus, error) {
		if !entering {
			return gast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *gast.Text:
			take(c.Segment.Start)
		case *gast.FencedCodeBlock:
			if c.Info != nil {
				take(c.Info.Segment.Start)
			} else if l := c.Lines(); l != nil && l.Len() > 0 {
				// A bare fence: the block starts on the line before its
				// first line of code, the opening fence.
				if ls := lineStart(src, l.At(0).Start); ls > 0 {
					take(lineStart(src, ls-1))
				}
			}
		}
		if c.Type() == gast.TypeBlock {
			if l := c.Lines(); l != nil && l.Len() > 0 {
				take(l.At(0).Start)
			}
		}
		return gast.WalkContinue, nil
	})
	return best
}

// lineStart is the offset of the start of the line holding off.
func lineStart(src []byte, off int) int {
	for off > 0 && src[off-1] != '\n' {
		off--
	}
	return off
}
