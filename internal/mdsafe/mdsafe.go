// Package mdsafe holds goldmark extensions whose cost is bounded by the
// size of their input, for markdown docent did not write: synced pages
// are chunked and served under /docs, and a page of a few kilobytes must
// not make the parser allocate gigabytes.
//
// goldmark's GFM table extension pads every row to the width of its
// delimiter row, so a delimiter row of 5,000 columns over 5,000 one-cell
// rows (29 KB of text) becomes 25 million cells: 4 GB and a minute and a
// half of parsing. Table here is the same extension with a budget: a
// paragraph whose rows times columns exceed MaxTableCells is left a
// paragraph (its text is kept, as CommonMark without tables keeps it).
package mdsafe

import (
	"bytes"

	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// MaxTableCells is the most cells one table may have (rows × the widest
// row's columns); a paragraph that could make more is not a table.
const MaxTableCells = 50_000

// Table is extension.Table with at most MaxTableCells cells per table.
var Table goldmark.Extender = table{}

// GFM is extension.GFM with Table in place of extension.Table.
var GFM goldmark.Extender = gfm{}

type gfm struct{}

func (gfm) Extend(m goldmark.Markdown) {
	extension.Linkify.Extend(m)
	Table.Extend(m)
	extension.Strikethrough.Extend(m)
	extension.TaskList.Extend(m)
}

type table struct{}

// Extend registers the bounded paragraph transformer and goldmark's own
// table AST transformer and renderer, at goldmark's priorities.
func (table) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(
		parser.WithParagraphTransformers(util.Prioritized(boundedTables{extension.NewTableParagraphTransformer()}, 200)),
		parser.WithASTTransformers(util.Prioritized(extension.NewTableASTTransformer(), 0)),
	)
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(extension.NewTableHTMLRenderer(), 500)))
}

// boundedTables runs the table transformer on paragraphs whose cells fit
// the budget. A row has at most as many cells as it has pipes plus one,
// and every row is padded to the delimiter row's width, so lines × the
// most pipes on a line, plus one, bounds the cells.
type boundedTables struct{ inner parser.ParagraphTransformer }

func (b boundedTables) Transform(node *gast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	if lines.Len() < 2 {
		return
	}
	src := reader.Source()
	widest := 0
	for i := range lines.Len() {
		seg := lines.At(i)
		widest = max(widest, bytes.Count(seg.Value(src), []byte{'|'})+1)
	}
	if widest*lines.Len() > MaxTableCells {
		return
	}
	b.inner.Transform(node, reader, pc)
}
