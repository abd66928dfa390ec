package mcp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// TestDocumentMarkdown puts back together what the real chunker split,
// with small chunks and overlap: every sentence comes back exactly once,
// in order, under its headings.
func TestDocumentMarkdown(t *testing.T) {
	var src strings.Builder
	src.WriteString("# Travel\n\nBook early.\n\n## Flights\n\n")
	var sentences []string
	for i := range 40 {
		s := fmt.Sprintf("Flight rule number %d says to keep the receipt of trip %d.", i, i)
		sentences = append(sentences, s)
		src.WriteString(s + " ")
	}
	src.WriteString("\n\n### Baggage\n\nOne bag is covered.\n\n## Hotels\n\nStay near the office.\n")
	doc := docent.Document{ID: "hb:travel.md", Source: "hb", Path: "travel.md", Title: "Travel", Body: src.String()}
	chunks, err := search.Chunker{TargetTokens: 60, OverlapTokens: 20}.Chunk(doc)
	if err != nil {
		t.Fatal(err)
	}
	overlapping := 0
	for i := 1; i < len(chunks); i++ {
		if strings.Join(chunks[i].Section, ">") == strings.Join(chunks[i-1].Section, ">") {
			overlapping++
		}
	}
	var all strings.Builder
	for _, c := range chunks {
		all.WriteString(c.Text)
	}
	repeated := 0
	for _, s := range sentences {
		if strings.Count(all.String(), s) > 1 {
			repeated++
		}
	}
	if overlapping == 0 || repeated == 0 {
		t.Fatal("the chunker repeated no sentence: the test checks nothing")
	}
	md := documentMarkdown(doc.Title, chunks)
	for _, s := range append(sentences, "Book early.", "One bag is covered.", "Stay near the office.") {
		if n := strings.Count(md, s); n != 1 {
			t.Errorf("%q appears %d times in:\n%s", s, n, md)
		}
	}
	order := []string{"# Travel\n", "Book early.", "## Flights\n", sentences[0], sentences[39], "### Baggage\n", "One bag", "## Hotels\n", "Stay near"}
	at := 0
	for _, want := range order {
		i := strings.Index(md[at:], want)
		if i < 0 {
			t.Fatalf("%q missing or out of order in:\n%s", want, md)
		}
		at += i
	}
	if strings.Contains(md, "Travel > Flights") {
		t.Errorf("a chunk's title line leaked into the markdown:\n%s", md)
	}
}
