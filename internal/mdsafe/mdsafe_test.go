package mdsafe_test

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"

	"github.com/docent-hq/docent/internal/mdsafe"
)

// TestTablesStillRender: ordinary tables are tables, rendered as
// goldmark renders them.
func TestTablesStillRender(t *testing.T) {
	md := goldmark.New(goldmark.WithExtensions(mdsafe.GFM))
	var out bytes.Buffer
	src := "| Plan | Price |\n|:-----|------:|\n| Basic | $5 |\n| Pro | $20 |\n\n~~old~~ www.example.com\n"
	if err := md.Convert([]byte(src), &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<th style="text-align:left">Plan</th>`, `<td style="text-align:right">$20</td>`,
		"<del>old</del>", `<a href="http://www.example.com">`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("rendered %s, missing %s", out.String(), want)
		}
	}
}

// TestWideTableBounded: a 29 KB page whose delimiter row has 5,000
// columns over 5,000 one-cell rows is 25 million cells with goldmark's
// own extension (4 GB, 90 s); here it stays a paragraph, parsed in a few
// megabytes, its text kept.
func TestWideTableBounded(t *testing.T) {
	src := "|" + strings.Repeat("a|", 5000) + "\n|" + strings.Repeat("-|", 5000) + "\n" + strings.Repeat("|\n", 5000)
	p := goldmark.New(goldmark.WithExtensions(mdsafe.Table)).Parser()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	doc := p.Parse(text.NewReader([]byte(src)))
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("parsing a %d KB wide table allocated %d MB", len(src)>>10, alloc>>20)
	}
	tables := 0
	_ = gast.Walk(doc, func(n gast.Node, entering bool) (gast.WalkStatus, error) {
		if _, ok := n.(*east.Table); ok && entering {
			tables++
		}
		return gast.WalkContinue, nil
	})
	if tables != 0 {
		t.Errorf("%d tables parsed, want the over-budget table left a paragraph", tables)
	}
	// Just within the budget is still a table.
	ok := "|" + strings.Repeat("a|", 9) + "\n|" + strings.Repeat("-|", 9) + "\n" + strings.Repeat("|b|\n", 4000)
	doc = p.Parse(text.NewReader([]byte(ok)))
	if _, isTable := doc.FirstChild().(*east.Table); !isTable {
		t.Errorf("a 10 × 4,002 table is %T, want a table", doc.FirstChild())
	}
}
