package search

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
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
//     before the first heading has an empty Section. Sections are never
//     merged, however small: a chunk then cites one precise anchor, and a
//     small section is a good retrieval unit on its own. A heading with no
//     content of its own gives no chunk when a subsection follows (its
//     name is in the subsection's path); a heading with nothing under it
//     at all gives one chunk of its heading path alone, so that no word
//     of the document is lost.
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

	seen := map[string]int{}
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
				return chunks, len(texts) - j + len(sections) - i - 1, nil
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

// chunkPrefix is the "Title > Section > Subsection\n\n" line of a chunk.
func chunkPrefix(title string, sec []string) string {
	parts := make([]string, 0, len(sec)+1)
	if t := strings.TrimSpace(title); t != "" {
		parts = append(parts, t)
	}
	parts = append(parts, sec...)
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, " > ") + "\n\n"
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
		if off := firstOffset(n); off >= 0 {
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
			heading := inlineText(h, src)
			anchor := headingSlug(heading, slugs)
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
		off := firstOffset(it)
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
func firstOffset(n gast.Node) int {
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
