package search

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/docent-hq/docent"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// visibleMarkdown is the text a reader of the rendered markdown sees:
// text, code spans and blocks, raw HTML and autolinks (link destinations
// are not visible text). Text that is contiguous in the source stays
// joined, as the chunker, which cuts the source, sees it; other pieces
// are separated by spaces.
func visibleMarkdown(src string) string {
	b := []byte(src)
	root := mdParser.Parser().Parse(text.NewReader(b))
	var out strings.Builder
	last := -1 // source offset where the last text segment ended
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		if t, ok := n.(*ast.Text); ok {
			if t.Segment.Start != last {
				out.WriteByte(' ')
			}
			out.Write(t.Segment.Value(b))
			last = t.Segment.Stop
			return ast.WalkContinue, nil
		}
		last = -1
		out.WriteByte(' ')
		switch n := n.(type) {
		case *ast.String:
			out.Write(n.Value)
		case *ast.AutoLink:
			out.Write(n.Label(b))
		case *ast.RawHTML:
			for i := 0; i < n.Segments.Len(); i++ {
				s := n.Segments.At(i)
				out.Write(s.Value(b))
			}
		case *ast.FencedCodeBlock, *ast.CodeBlock, *ast.HTMLBlock:
			lines := n.Lines()
			for i := 0; i < lines.Len(); i++ {
				s := lines.At(i)
				out.Write(s.Value(b))
			}
		}
		out.WriteByte(' ')
		return ast.WalkContinue, nil
	})
	return out.String()
}

// FuzzChunk chunks arbitrary markdown (seeded with the golden documents):
// no panic, no hang, and every word of the visible text in some chunk
// (or the title, which the index holds with every chunk).
func FuzzChunk(f *testing.F) {
	for _, tc := range chunkCases {
		f.Add(mustDoc(f, tc.file).Body, tc.chunker.TargetTokens, tc.chunker.OverlapTokens)
	}
	f.Add("# T\n\n## Empty\n\n### Leaf\n", 0, 0)
	f.Fuzz(func(t *testing.T, body string, target, overlap int) {
		c := Chunker{TargetTokens: target % 2000, OverlapTokens: overlap % 500}
		size, _ := c.sizes()
		doc := docent.Document{ID: "fuzz:1", Source: "fuzz", Title: "T", Path: "doc.md", Body: body}
		done := make(chan []docent.Chunk, 1)
		go func() {
			chunks, err := c.Chunk(doc)
			if err != nil {
				t.Error(err)
			}
			done <- chunks
		}()
		var chunks []docent.Chunk
		select {
		case chunks = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("Chunk did not return within 10s")
		}
		var all strings.Builder
		all.WriteString(doc.Title)
		for _, ch := range chunks {
			all.WriteByte(0)
			all.WriteString(ch.Text)
		}
		got := strings.ToLower(all.String())
		// The chunker cuts a run without spaces of half a chunk or more
		// as written, markup included ("[a](b)word" is one run), so a word
		// inside such a run may be cut wherever the run is.
		var long []string
		for _, run := range strings.Fields(body) {
			if EstimateTokens(run) > size/2 {
				long = append(long, strings.ToLower(run))
			}
		}
		inLong := func(w string) bool {
			return slices.ContainsFunc(long, func(run string) bool { return strings.Contains(run, strings.ToLower(w)) })
		}
		for _, tok := range strings.Fields(visibleMarkdown(body)) {
			if EstimateTokens(tok) > size/2 {
				// A run without spaces of half a chunk or more (a minified
				// line): the chunker may cut it at rune boundaries, so only
				// its start is sure to stay whole.
				tok = tok[:byteIndexOfRune(tok, size)]
			}
			for _, w := range strings.FieldsFunc(tok, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
				if !strings.Contains(got, strings.ToLower(w)) && !inLong(w) {
					t.Fatalf("word %q reaches no chunk (target %d, overlap %d)\nbody:\n%s", w, c.TargetTokens, c.OverlapTokens, body)
				}
			}
		}
	})
}
