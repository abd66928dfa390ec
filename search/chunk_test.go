package search

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent"
)

// updateGolden rewrites golden files in testdata instead of comparing.
// Other tests in this package should reuse it rather than register
// another "update" flag.
var updateGolden = flag.Bool("update", false, "rewrite golden files in testdata")

// chunkCases are the golden cases: testdata/chunk_NAME.{md,txt} in,
// testdata/chunk_NAME.golden.json out.
var chunkCases = []struct {
	name    string
	file    string
	chunker Chunker
}{
	{"headings", "chunk_headings.md", Chunker{}},
	{"table", "chunk_table.md", Chunker{TargetTokens: 150, OverlapTokens: 20}},
	{"list", "chunk_list.md", Chunker{TargetTokens: 120, OverlapTokens: 30}},
	{"code", "chunk_code.md", Chunker{TargetTokens: 250, OverlapTokens: 20}},
	{"overlap", "chunk_overlap.md", Chunker{TargetTokens: 100, OverlapTokens: 30}},
	{"intro", "chunk_intro.md", Chunker{}},
	{"plain", "chunk_plain.txt", Chunker{TargetTokens: 40, OverlapTokens: 10}},
}

// mustDoc reads a testdata file into a document with fixed metadata.
func mustDoc(tb testing.TB, file string) docent.Document {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		tb.Fatal(err)
	}
	title := ""
	if first, _, _ := strings.Cut(string(b), "\n"); strings.HasPrefix(first, "# ") {
		title = strings.TrimPrefix(first, "# ")
	}
	return docent.Document{
		ID:        "handbook:" + file,
		Source:    "handbook",
		Path:      file,
		URL:       "https://docs.example.com/" + file,
		Title:     title,
		Space:     "people",
		Labels:    []string{"policy", "onboarding"},
		UpdatedAt: time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC),
		Body:      string(b),
	}
}

func TestChunkGolden(t *testing.T) {
	for _, tc := range chunkCases {
		t.Run(tc.name, func(t *testing.T) {
			doc := mustDoc(t, tc.file)
			chunks, err := tc.chunker.Chunk(doc)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(chunks, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join("testdata", "chunk_"+tc.name+".golden.json")
			if *updateGolden {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./search -run TestChunkGolden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("chunks differ from %s (rerun with -update and review the diff):\n%s", golden, got)
			}
		})
	}
}

// body strips the "Title > Section\n\n" prefix from a chunk's text.
func body(c docent.Chunk) string {
	if c.Title == "" && len(c.Section) == 0 {
		return c.Text
	}
	_, b, _ := strings.Cut(c.Text, "\n\n")
	return b
}

func TestChunkStructure(t *testing.T) {
	chunk := func(t *testing.T, file string, c Chunker) []docent.Chunk {
		t.Helper()
		chunks, err := c.Chunk(mustDoc(t, file))
		if err != nil {
			t.Fatal(err)
		}
		return chunks
	}

	t.Run("heading path, title H1 left out, anchors", func(t *testing.T) {
		chunks := chunk(t, "chunk_headings.md", Chunker{MinSectionChars: -1})
		type want struct {
			section []string
			url     string
			starts  string
		}
		base := "https://docs.example.com/chunk_headings.md"
		wants := []want{
			{nil, base, "Employee Handbook\n\nWelcome to Acme."},
			{[]string{"Time off"}, base + "#time-off", "Employee Handbook > Time off\n\nEveryone gets"},
			{[]string{"Time off", "Requesting leave"}, base + "#requesting-leave", "Employee Handbook > Time off > Requesting leave\n\n"},
			{[]string{"Time off", "Sick leave"}, base + "#sick-leave", "Employee Handbook > Time off > Sick leave\n\n"},
			{[]string{"Expenses & travel (2024)"}, base + "#expenses--travel-2024", "Employee Handbook > Expenses & travel (2024)\n\nBook travel"},
			{[]string{"Equipment", "Laptops"}, base + "#laptops", "Employee Handbook > Equipment > Laptops\n\n"},
			// An empty leaf heading keeps its words in a chunk of its own.
			{[]string{"Empty section"}, base + "#empty-section", "Employee Handbook > Empty section"},
			{[]string{"Equipment"}, base + "#equipment-1", "Employee Handbook > Equipment\n\nA second section"},
		}
		if len(chunks) != len(wants) {
			t.Fatalf("got %d chunks, want %d (Equipment, with only a subsection, gives none)", len(chunks), len(wants))
		}
		if got := chunks[6].Text; got != "Employee Handbook > Empty section" {
			t.Errorf("empty leaf section chunk text = %q", got)
		}
		for i, w := range wants {
			c := chunks[i]
			if !reflect.DeepEqual(c.Section, w.section) || c.URL != w.url || !strings.HasPrefix(c.Text, w.starts) || c.Ord != i {
				t.Errorf("chunk %d: section %q url %q ord %d text %q; want %q %q %d %q...", i, c.Section, c.URL, c.Ord, c.Text, w.section, w.url, i, w.starts)
			}
		}
	})

	t.Run("metadata copied from the document", func(t *testing.T) {
		doc := mustDoc(t, "chunk_headings.md")
		for _, c := range chunk(t, "chunk_headings.md", Chunker{}) {
			if c.DocID != doc.ID || c.Source != doc.Source || c.Space != doc.Space || c.Title != doc.Title ||
				!c.UpdatedAt.Equal(doc.UpdatedAt) || !reflect.DeepEqual(c.Labels, doc.Labels) {
				t.Errorf("chunk %d metadata = %+v", c.Ord, c)
			}
		}
	})

	t.Run("big table split at rows with the header repeated", func(t *testing.T) {
		chunks := chunk(t, "chunk_table.md", Chunker{TargetTokens: 150, OverlapTokens: 20})
		const header = "| Service | Team | Priority | Runbook | Ack SLA |\n|---|---|---|:---:|--:|\n"
		var pieces, rows int
		for _, c := range chunks {
			b := body(c)
			if i := strings.Index(b, "| Service |"); i >= 0 {
				pieces++
				if !strings.HasPrefix(b[i:], header) {
					t.Errorf("table piece without its header:\n%s", b)
				}
				for _, l := range strings.Split(b[i:], "\n")[2:] {
					if strings.HasPrefix(l, "| ") && strings.HasSuffix(l, " |") {
						rows++
					} else if l != "" && !strings.HasPrefix(l, "Page the secondary") {
						t.Errorf("table piece cut inside a row: %q", l)
					}
				}
			}
		}
		if pieces < 3 {
			t.Errorf("table split into %d pieces, want at least 3", pieces)
		}
		if rows != 40 {
			t.Errorf("table pieces hold %d rows, want each of the 40 exactly once", rows)
		}
	})

	t.Run("long list split at items with overlap", func(t *testing.T) {
		chunks := chunk(t, "chunk_list.md", Chunker{TargetTokens: 120, OverlapTokens: 30})
		if len(chunks) < 3 {
			t.Fatalf("got %d chunks, want the list split", len(chunks))
		}
		for i, c := range chunks {
			b := body(c)
			for _, l := range strings.Split(b, "\n") {
				if l != "" && !startsWithItem(l) && !strings.HasPrefix(l, "Work through") && !strings.HasPrefix(l, "That is all") {
					t.Errorf("chunk %d has a line that is not a whole item: %q", i, l)
				}
			}
			if i > 0 {
				prevLast := lastLine(body(chunks[i-1]))
				if startsWithItem(prevLast) && !strings.Contains(b, prevLast) {
					t.Errorf("chunk %d does not repeat the last item of chunk %d (%q)", i, i-1, prevLast)
				}
			}
		}
	})

	t.Run("code block kept whole when it fits, split at lines with fences when not", func(t *testing.T) {
		doc := mustDoc(t, "chunk_code.md")
		chunks := chunk(t, "chunk_code.md", Chunker{TargetTokens: 250, OverlapTokens: 20})
		start := strings.Index(doc.Body, "```go")
		end := strings.Index(doc.Body[start+3:], "```") + start + 6
		whole := doc.Body[start:end]
		found := false
		var yamlPieces int
		for _, c := range chunks {
			if strings.Contains(c.Text, whole) {
				found = true
			}
			b := body(c)
			if strings.Contains(b, "registry.example.com") {
				yamlPieces++
				if !strings.HasPrefix(b, "~~~yaml title=\"services.yaml\"\n") || !strings.HasSuffix(b, "\n~~~") {
					t.Errorf("code piece is not re-fenced:\n%s", b)
				}
			}
		}
		if !found {
			t.Errorf("no chunk holds the whole Go block:\n%s", whole)
		}
		if yamlPieces < 2 {
			t.Errorf("yaml block split into %d pieces, want several", yamlPieces)
		}
	})

	t.Run("overlap repeats whole sentences of the previous chunk", func(t *testing.T) {
		chunks := chunk(t, "chunk_overlap.md", Chunker{TargetTokens: 100, OverlapTokens: 30})
		if len(chunks) < 3 {
			t.Fatalf("got %d chunks, want several", len(chunks))
		}
		overlapped := 0
		for i := 1; i < len(chunks); i++ {
			prev := SplitSentences(body(chunks[i-1]))
			last := prev[len(prev)-1]
			b := body(chunks[i])
			switch {
			case !reflect.DeepEqual(chunks[i].Section, chunks[i-1].Section):
				if strings.HasPrefix(b, last) {
					t.Errorf("chunk %d overlaps across sections", i)
				}
			case EstimateTokens(last) > 30:
				// Overlap is whole sentences within the budget: none here.
				if strings.HasPrefix(b, last) {
					t.Errorf("chunk %d repeats %q, over the 30-token budget", i, last)
				}
			case strings.HasPrefix(b, last):
				overlapped++
			case EstimateTokens(last)+EstimateTokens(b) <= 100:
				// Overlap is dropped only when it would push a whole
				// block over the target.
				t.Errorf("chunk %d does not start with the last sentence of chunk %d (%q):\n%s", i, i-1, last, b)
			}
		}
		if overlapped < len(chunks)/2 {
			t.Errorf("only %d of %d chunks start with overlap", overlapped, len(chunks)-1)
		}
	})

	t.Run("plain text is paragraphs, not markdown", func(t *testing.T) {
		chunks := chunk(t, "chunk_plain.txt", Chunker{TargetTokens: 40, OverlapTokens: 10})
		for _, c := range chunks {
			if len(c.Section) != 0 || c.Title != "" {
				t.Errorf("plain chunk has section %q title %q", c.Section, c.Title)
			}
		}
		if !strings.Contains(chunks[1].Text, "The # sign here") {
			t.Errorf("the '#' line was not kept as text: %q", chunks[1].Text)
		}
	})
}

func startsWithItem(l string) bool {
	i := 0
	for i < len(l) && l[i] >= '0' && l[i] <= '9' {
		i++
	}
	return i > 0 && strings.HasPrefix(l[i:], ". ")
}

func lastLine(s string) string {
	return s[strings.LastIndexByte(s, '\n')+1:]
}

func TestChunkEmpty(t *testing.T) {
	for _, b := range []string{"", "   \n\n\t\n", "# Title only\n"} {
		chunks, err := Chunker{}.Chunk(docent.Document{ID: "d", Title: "Title only", Body: b})
		if err != nil || len(chunks) != 0 {
			t.Errorf("Chunk(%q) = %d chunks, %v; want none and no error", b, len(chunks), err)
		}
	}
	// Headings alone are not nothing: the leaf keeps the words of both.
	chunks, err := Chunker{}.Chunk(docent.Document{ID: "d", Title: "Title only", Body: "## Just\n### Headings\n"})
	if err != nil || len(chunks) != 1 || chunks[0].Text != "Title only > Just > Headings" {
		t.Errorf("Chunk(headings only) = %+v, %v; want one chunk of the heading path", chunks, err)
	}
}

func TestChunkIDs(t *testing.T) {
	doc := mustDoc(t, "chunk_headings.md")
	a, _ := Chunker{}.Chunk(doc)
	b, _ := Chunker{}.Chunk(doc)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs over the same document differ")
	}
	ids := map[string]bool{}
	for _, c := range a {
		if len(c.ID) != 32 || ids[c.ID] {
			t.Errorf("chunk %d id %q: want 32 hex characters, unique", c.Ord, c.ID)
		}
		ids[c.ID] = true
	}

	t.Run("changing one section changes only its id", func(t *testing.T) {
		changed := doc
		changed.Body = strings.Replace(doc.Body, "25 days", "26 days", 1)
		c, _ := Chunker{}.Chunk(changed)
		if len(c) != len(a) {
			t.Fatalf("chunk count changed: %d vs %d", len(c), len(a))
		}
		for i := range a {
			same := a[i].ID == c[i].ID
			if wantSame := !strings.Contains(a[i].Text, "25 days"); same != wantSame {
				t.Errorf("chunk %d (%q): id unchanged = %v, want %v", i, a[i].Section, same, wantSame)
			}
		}
	})
	t.Run("the document id is part of the chunk id", func(t *testing.T) {
		other := doc
		other.ID = "handbook:copy.md"
		c, _ := Chunker{}.Chunk(other)
		if c[0].ID == a[0].ID {
			t.Error("same id for two documents")
		}
	})
	t.Run("a repeated section is indexed once", func(t *testing.T) {
		d := docent.Document{ID: "dup", Title: "T", Body: "## FAQ\n\nSame text.\n\n## FAQ\n\nSame text.\n\n## Other\n\nSame text.\n"}
		c1, _ := Chunker{MinSectionChars: -1}.Chunk(d)
		c2, _ := Chunker{MinSectionChars: -1}.Chunk(d)
		if len(c1) != 1 || c1[0].ID != c2[0].ID || c1[0].URL != "" || c1[0].Section[0] != "FAQ" {
			t.Errorf("chunks %q then %q, want the first FAQ once", ids2(c1), ids2(c2))
		}
	})
}

func ids2(cs []docent.Chunk) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

// isIndivisible reports whether a chunk body is one unit the chunker may
// not split: a table header with one row, or one line of fenced code.
func isIndivisible(b string) bool {
	lines := strings.Split(b, "\n")
	if len(lines) == 3 && strings.HasPrefix(lines[0], "|") && strings.HasPrefix(lines[2], "|") {
		return true
	}
	return len(lines) == 3 && FenceOpen(lines[0]) != "" && FenceOpen(lines[2]) != ""
}

func TestChunkSizeBound(t *testing.T) {
	// A stress document: long prose, a huge list, a table with one giant
	// row, a code block with one giant line, and a run-on sentence.
	long := strings.Repeat("The sync engine compares content hashes and re-embeds only what changed. ", 60)
	var list strings.Builder
	for i := range 80 {
		list.WriteString("- item " + strings.Repeat("word ", i%17+1) + "end\n")
	}
	giantCell := strings.Repeat("cell ", 400)
	giantLine := strings.Repeat("x := 1; ", 300)
	runOn := strings.Repeat("and then it continues ", 200) + "."
	stress := docent.Document{ID: "stress", Title: "Stress", Body: "# Stress\n\n## Prose\n\n" + long +
		"\n\n## List\n\n" + list.String() +
		"\n## Table\n\n| a | b |\n|---|---|\n| small | row |\n| " + giantCell + " | x |\n| small | row |\n" +
		"\n## Code\n\n```go\nshort()\n" + giantLine + "\nshort()\n```\n\n## Run-on\n\n" + runOn + "\n\n> " + long + "\n"}

	docs := []docent.Document{stress}
	for _, tc := range chunkCases {
		docs = append(docs, mustDoc(t, tc.file))
	}
	for _, target := range []int{40, 100, 300} {
		c := Chunker{TargetTokens: target, OverlapTokens: target / 5}
		for _, doc := range docs {
			chunks, err := c.Chunk(doc)
			if err != nil {
				t.Fatal(err)
			}
			for _, ch := range chunks {
				b := body(ch)
				if n := EstimateTokens(b); n > target*3/2 && !isIndivisible(b) {
					t.Errorf("target %d, %s chunk %d: %d tokens (> 1.5x) and divisible:\n%.300s", target, doc.ID, ch.Ord, n, b)
				}
			}
			// Nothing is lost: every word of the body (outside heading
			// lines) appears in some chunk.
			all := map[string]bool{}
			for _, ch := range chunks {
				for _, w := range strings.Fields(ch.Text) {
					all[w] = true
				}
			}
			for _, line := range strings.Split(doc.Body, "\n") {
				if strings.HasPrefix(line, "#") && !strings.HasSuffix(doc.Path, ".txt") {
					continue
				}
				for _, w := range strings.Fields(line) {
					if !all[w] {
						t.Errorf("target %d, %s: word %q is in no chunk", target, doc.ID, w)
					}
				}
			}
		}
	}

	t.Run("indivisible units are the only oversized chunks", func(t *testing.T) {
		chunks, _ := Chunker{TargetTokens: 100, OverlapTokens: 20}.Chunk(stress)
		var giantRow, giantCode bool
		for _, ch := range chunks {
			b := body(ch)
			if strings.Contains(b, giantCell) {
				giantRow = isIndivisible(b)
			}
			if strings.Contains(b, giantLine) {
				giantCode = isIndivisible(b)
			}
		}
		if !giantRow || !giantCode {
			t.Errorf("giant row alone with header = %v, giant code line alone in fences = %v", giantRow, giantCode)
		}
	})
}

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"hello", 2},                          // 1 word -> 4/3 -> 2; 5 runes -> 2
		{"one two three", 4},                  // 3 words -> 4
		{"the quick brown fox jumps over", 8}, // 6 words -> 8
		{strings.Repeat("a", 40), 10},         // one 40-rune word -> runes/4
		{"日本語のテキストです", 3},                     // 10 runes, 1 word -> 3
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := EstimateTokens(tc.in); got != tc.want {
				t.Errorf("EstimateTokens(%q) = %d, want %d", tc.in, got, tc.want)
			}
		})
	}
}

func TestHeadingSlug(t *testing.T) {
	seen := map[string]int{}
	tests := []struct{ in, want string }{
		{"Time off", "time-off"},
		{"Expenses & travel (2024)", "expenses--travel-2024"},
		{"What's new in v2.3?", "whats-new-in-v23"},
		{"snake_case and kebab-case", "snake_case-and-kebab-case"},
		{"Café Straße", "café-straße"},
		{"Time off", "time-off-1"},
		{"Time off", "time-off-2"},
	}
	for _, tc := range tests {
		if got := headingSlug(tc.in, seen); got != tc.want {
			t.Errorf("headingSlug(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSplitSentences(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"One. Two! Three?", []string{"One.", "Two!", "Three?"}},
		{"Use e.g. Go or Rust. Then stop.", []string{"Use e.g. Go or Rust.", "Then stop."}},
		{"Version 2.3 is out. Ask J. Smith.", []string{"Version 2.3 is out.", "Ask J. Smith."}},
		{`He said "stop." Then left.`, []string{`He said "stop."`, "Then left."}},
		{"No end", []string{"No end"}},
		{`A question like "why?" goes on. Next.`, []string{`A question like "why?" goes on.`, "Next."}},
		{"Wrapped\nline. Next\nline.", []string{"Wrapped\nline.", "Next\nline."}},
		{"One. Two! Three? four.", []string{"One.", "Two!", "Three? four."}},
		{"Costs 1.5 times more. 30 days later it ends.", []string{"Costs 1.5 times more.", "30 days later it ends."}},
	}
	for _, tc := range tests {
		if got := SplitSentences(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("SplitSentences(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestChunkEdgeCases(t *testing.T) {
	tests := []struct {
		name     string
		doc      docent.Document
		sections [][]string
		texts    []string // the chunk texts, in order
	}{
		{
			name:     "an H1 that is not the title is part of the path",
			doc:      docent.Document{ID: "a", Title: "Guide", Body: "# Install\n\nRun it.\n\n## Linux\n\nUse apt.\n"},
			sections: [][]string{{"Install"}, {"Install", "Linux"}},
			texts:    []string{"Guide > Install\n\nRun it.", "Guide > Install > Linux\n\nUse apt."},
		},
		{
			name:     "a second H1 equal to the title is a section",
			doc:      docent.Document{ID: "a", Title: "FAQ", Body: "# FAQ\n\nIntro.\n\n# FAQ\n\nAgain.\n"},
			sections: [][]string{nil, {"FAQ"}},
			texts:    []string{"FAQ\n\nIntro.", "FAQ > FAQ\n\nAgain."},
		},
		{
			name:     "setext H1 and H2, a skipped level",
			doc:      docent.Document{ID: "a", Title: "T", Body: "Setup\n=====\n\nA.\n\n#### Deep\n\nB.\n\nNext\n----\n\nC.\n"},
			sections: [][]string{{"Setup"}, {"Setup", "Deep"}, {"Setup", "Next"}},
			texts:    []string{"T > Setup\n\nA.", "T > Setup > Deep\n\nB.", "T > Setup > Next\n\nC."},
		},
		{
			name:     "CRLF line endings",
			doc:      docent.Document{ID: "a", Title: "T", Body: "## S\r\n\r\n| a | b |\r\n|---|---|\r\n| 1 | 2 |\r\n"},
			sections: [][]string{{"S"}},
			texts:    []string{"T > S\n\n| a | b |\n|---|---|\n| 1 | 2 |"},
		},
		{
			name:     "quotes, HTML and rules stay as written",
			doc:      docent.Document{ID: "a", Title: "T", Body: "> Note: be careful.\n\n<details>\n<summary>More</summary>\nHidden.\n</details>\n\n---\n\nEnd.\n"},
			sections: [][]string{nil},
			texts:    []string{"T\n\n> Note: be careful.\n\n<details>\n<summary>More</summary>\nHidden.\n</details>\n\n---\n\nEnd."},
		},
		{
			name:     "a heading inside a code fence is code",
			doc:      docent.Document{ID: "a", Title: "T", Body: "## Shell\n\n```sh\n# not a heading\necho hi\n```\n"},
			sections: [][]string{{"Shell"}},
			texts:    []string{"T > Shell\n\n```sh\n# not a heading\necho hi\n```"},
		},
		{
			name:     "markdown headings inside .rst are parsed; .txt are not",
			doc:      docent.Document{ID: "a", Path: "notes.txt", Title: "Notes", Body: "## Not a heading\n\nText.\n"},
			sections: [][]string{nil},
			texts:    []string{"Notes\n\n## Not a heading\n\nText."},
		},
		{
			name:     "no URL gives no anchor",
			doc:      docent.Document{ID: "a", Title: "T", Body: "## S\n\nx.\n"},
			sections: [][]string{{"S"}},
			texts:    []string{"T > S\n\nx."},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			chunks, err := Chunker{MinSectionChars: -1}.Chunk(tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			var secs [][]string
			var texts []string
			for _, c := range chunks {
				secs = append(secs, c.Section)
				texts = append(texts, c.Text)
				if tc.doc.URL == "" && c.URL != "" {
					t.Errorf("URL = %q for a document without one", c.URL)
				}
			}
			if !reflect.DeepEqual(secs, tc.sections) || !reflect.DeepEqual(texts, tc.texts) {
				t.Errorf("got sections %q texts %q\nwant %q %q", secs, texts, tc.sections, tc.texts)
			}
		})
	}
}

// BenchmarkChunk chunks every golden input once per iteration.
func BenchmarkChunk(b *testing.B) {
	var docs []docent.Document
	n := 0
	for _, tc := range chunkCases {
		d := mustDoc(b, tc.file)
		docs = append(docs, d)
		n += len(d.Body)
	}
	b.SetBytes(int64(n))
	for b.Loop() {
		for _, d := range docs {
			if _, err := (Chunker{}).Chunk(d); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestChunkHeadingAnchorsAndFences: a heading's attribute list leaves the
// section name and becomes its deep link; a bare fence right after a
// heading keeps its opening line (it used to lose it).
func TestChunkHeadingAnchorsAndFences(t *testing.T) {
	body := "## Options {#options}\n```\nquill mount remote: ~/mnt\n--vfs-cache-mode full\n```\n\n" +
		"Every flag above has a long form and a short form, and each can be set in the config file too.\n\n" +
		"## Filtering {#filter-flags .wide}\n\n~~~\n--include *.jpg\n~~~\n\nFilters apply to every command that lists files, with the same syntax everywhere, and are read in order.\n"
	chunks, err := Chunker{}.Chunk(docent.Document{ID: "d", Title: "Mount", URL: "https://docs.example.com/mount", Body: body})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		section, url, starts string
	}{
		{"Options", "https://docs.example.com/mount#options", "Mount > Options\n\n```\nquill mount"},
		{"Filtering", "https://docs.example.com/mount#filter-flags", "Mount > Filtering\n\n~~~\n--include"},
	}
	if len(chunks) != len(want) {
		t.Fatalf("%d chunks, want %d", len(chunks), len(want))
	}
	for i, w := range want {
		c := chunks[i]
		if strings.Join(c.Section, " > ") != w.section || c.URL != w.url || !strings.HasPrefix(c.Text, w.starts) {
			t.Errorf("chunk %d: section %q url %q text %q; want %q %q %q...", i, c.Section, c.URL, c.Text, w.section, w.url, w.starts)
		}
		if strings.Count(c.Text, "```")%2 != 0 || strings.Count(c.Text, "~~~")%2 != 0 {
			t.Errorf("chunk %d has an unbalanced fence: %q", i, c.Text)
		}
	}
}

// TestChunkSmallSections: sections under MinSectionChars merge with a
// neighbour under the same parent heading, keeping their heading as a
// line; a repeated body in one document is indexed once.
func TestChunkSmallSections(t *testing.T) {
	long := "Every request passes through the middlewares of its router in the order they are listed, before it reaches the service it is routed to."
	tests := []struct {
		name     string
		body     string
		sections [][]string
		texts    []string
	}{
		{name: "a parent's short intro leads its first child",
			body:     "## Rate limit\n\nLimits requests.\n\n### burst\n\n" + long + "\n",
			sections: [][]string{{"Rate limit", "burst"}},
			texts:    []string{"T > Rate limit > burst\n\nLimits requests.\n\n" + long}},
		{name: "a small section joins the sibling before it",
			body:     "## Options\n\n### average\n\n" + long + "\n\n### period\n\nDefaults to 1s.\n",
			sections: [][]string{{"Options", "average"}},
			texts:    []string{"T > Options > average\n\n" + long + "\n\n### period\n\nDefaults to 1s."}},
		{name: "a small first section joins the sibling after it",
			body:     "## Options\n\n### sourceRange\n\n_Required_\n\n### ipStrategy\n\n" + long + "\n",
			sections: [][]string{{"Options", "sourceRange"}},
			texts:    []string{"T > Options > sourceRange\n\n_Required_\n\n### ipStrategy\n\n" + long}},
		{name: "an empty heading keeps its words",
			body:     "## Intro\n\n" + long + "\n\n## Empty\n",
			sections: [][]string{{"Intro"}},
			texts:    []string{"T > Intro\n\n" + long + "\n\n## Empty"}},
		{name: "no neighbour under the same parent: it stays",
			body:     "# Guide\n\n## A\n\nShort.\n\n# Other\n\n" + long + "\n",
			sections: [][]string{{"Guide", "A"}, {"Other"}},
			texts:    []string{"T > Guide > A\n\nShort.", "T > Other\n\n" + long}},
		{name: "a body repeated under another heading is indexed once",
			body:     "## Docker\n\n" + long + "\n\n## Kubernetes\n\n" + long + "\n",
			sections: [][]string{{"Docker"}},
			texts:    []string{"T > Docker\n\n" + long}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			chunks, err := Chunker{}.Chunk(docent.Document{ID: "d", Title: "T", Body: tc.body})
			if err != nil {
				t.Fatal(err)
			}
			var secs [][]string
			var texts []string
			for _, c := range chunks {
				secs = append(secs, c.Section)
				texts = append(texts, c.Text)
			}
			if !reflect.DeepEqual(secs, tc.sections) || !reflect.DeepEqual(texts, tc.texts) {
				t.Errorf("got sections %q texts %q\nwant %q %q", secs, texts, tc.sections, tc.texts)
			}
		})
	}
}

func TestBodyHeadings(t *testing.T) {
	got := BodyHeadings("Intro.\n\n### period\n\nText.\n\n```sh\n# not a heading\n```\n\n## Next one ##\n#hashtag\n")
	if want := []string{"period", "Next one ##"}; !reflect.DeepEqual(got, want) {
		t.Errorf("BodyHeadings = %q, want %q", got, want)
	}
}

func TestSplitCode(t *testing.T) {
	prose, code := SplitCode("Set the port.\n\n```yaml\nport: 80\n```\n\nInline `code` stays prose.\n~~~\nx\n~~~\n")
	if prose != "Set the port.\n\n\nInline `code` stays prose.\n\n" || code != "port: 80\nx\n" {
		t.Errorf("SplitCode = %q, %q", prose, code)
	}
}

func TestChunkBody(t *testing.T) {
	for _, c := range []struct {
		chunk docent.Chunk
		body  string
	}{
		{docent.Chunk{Title: "T", Section: []string{"A", "B"}, Text: "T > A > B\n\nText."}, "Text."},
		{docent.Chunk{Title: "T", Text: "T\n\nIntro."}, "Intro."},
		{docent.Chunk{Title: "T", Section: []string{"Empty"}, Text: "T > Empty"}, ""},
		{docent.Chunk{Title: "T", Text: "No heading line."}, "No heading line."},
	} {
		if got := c.chunk.Body(); got != c.body {
			t.Errorf("Body(%q) = %q, want %q", c.chunk.Text, got, c.body)
		}
	}
}
