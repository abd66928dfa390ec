package search_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/search"
)

// headingsPage is a page of n headings with nothing under them: one
// chunk each.
func headingsPage(n int) docent.Document {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "# H%05d\n", i)
	}
	return docent.Document{ID: "d:headings.md", Source: "d", Path: "headings.md", Title: "Headings", Body: b.String()}
}

// TestChunkAtMostStops: ChunkAtMost makes the first limit chunks of what
// Chunk makes, says how many it left out, and stops there: a page of
// 30,000 headings costs a small part of what chunking all of it does.
func TestChunkAtMostStops(t *testing.T) {
	doc := headingsPage(30_000)
	// Small sections stay apart here: each empty heading is one chunk.
	c := search.Chunker{MinSectionChars: -1}
	alloc := func(f func()) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	var all, some []docent.Chunk
	var rest int
	full := alloc(func() { all, _ = c.Chunk(doc) })
	capped := alloc(func() { some, rest, _ = c.ChunkAtMost(doc, 2000) })
	// Parsing the page is the part every call pays.
	parse := alloc(func() { _, _, _ = c.ChunkAtMost(doc, 1) })
	if len(all) != 30_000 {
		t.Fatalf("Chunk made %d chunks, want 30000", len(all))
	}
	if len(some) != 2000 || rest != 28_000 {
		t.Fatalf("ChunkAtMost(2000) = %d chunks, %d left out; want 2000 and 28000", len(some), rest)
	}
	for i := range some {
		if some[i].ID != all[i].ID || some[i].Text != all[i].Text {
			t.Fatalf("chunk %d differs from Chunk's", i)
		}
	}
	if capped-min(parse, capped) > (full-min(parse, full))/2 {
		t.Errorf("beyond parsing the page (%d MB), ChunkAtMost allocated %d MB, Chunk %d MB: it did not stop at the cap",
			parse>>20, capped>>20, full>>20)
	}
	// A cap inside one section's pieces counts the pieces left.
	// (Sentences that differ: a repeated body is indexed once.)
	var sentences strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&sentences, "Sentence %d has several words here. ", i)
	}
	long := docent.Document{ID: "d:long.md", Path: "long.md", Body: "# One\n\n" + sentences.String()}
	one, _ := c.Chunk(long)
	got, left, _ := c.ChunkAtMost(long, 2)
	if len(one) < 4 || len(got) != 2 || left != len(one)-2 {
		t.Errorf("one long section: %d chunks in all; ChunkAtMost(2) = %d, %d left out", len(one), len(got), left)
	}
	if got, left, _ := c.ChunkAtMost(long, 0); len(got) != len(one) || left != 0 {
		t.Errorf("ChunkAtMost(0) = %d chunks, %d left out; want all %d", len(got), left, len(one))
	}
}

// TestChunkWideTableBounded: a page of a 5,000-column table over 5,000
// one-cell rows chunks in bounded memory (goldmark's table extension
// padded it to 25 million cells).
func TestChunkWideTableBounded(t *testing.T) {
	body := "|" + strings.Repeat("a|", 5000) + "\n|" + strings.Repeat("-|", 5000) + "\n" + strings.Repeat("|\n", 5000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	chunks, err := search.Chunker{}.Chunk(docent.Document{ID: "d:wide.md", Path: "wide.md", Body: body})
	runtime.ReadMemStats(&after)
	if err != nil || len(chunks) == 0 {
		t.Fatalf("Chunk = %d chunks, %v", len(chunks), err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
		t.Errorf("chunking a %d KB page allocated %d MB", len(body)>>10, alloc>>20)
	}
}
