package notion_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/connectors/notion"
	"github.com/docent-hq/docent/search"
)

var update = flag.Bool("update", false, "rewrite the golden markdown files")

// testLinks resolves every page to its notion.so URL; one page has a title.
func testLinks(id string) (string, string) {
	title := ""
	if id == "2b3c4d5e-0000-4000-8000-000000000002" {
		title = "Incident review"
	}
	return "https://www.notion.so/" + strings.ReplaceAll(id, "-", ""), title
}

func readBlocks(t testing.TB, path string) []*notion.Block {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []*notion.Block
	if err := json.Unmarshal(data, &blocks); err != nil {
		t.Fatal(err)
	}
	return blocks
}

// TestConvertGolden converts every testdata/convert/*.json page (blocks in
// the API's shape, children inline) and compares the markdown with its
// .md golden file. go test -run TestConvertGolden -update rewrites them.
func TestConvertGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/convert/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, in := range files {
		name := strings.TrimSuffix(filepath.Base(in), ".json")
		t.Run(name, func(t *testing.T) {
			got := notion.Convert(readBlocks(t, in), testLinks)
			golden := strings.TrimSuffix(in, ".json") + ".md"
			if *update {
				if err := os.WriteFile(golden, []byte(got.Markdown), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got.Markdown != string(want) {
				t.Errorf("markdown differs from %s:\n--- got\n%s\n--- want\n%s", golden, got.Markdown, want)
			}
		})
	}
}

// TestConvertEveryBlockType checks the golden page block by block: the
// markdown construct each type becomes, the headings reported for
// anchors, and the signed file link left out.
func TestConvertEveryBlockType(t *testing.T) {
	got := notion.Convert(readBlocks(t, "testdata/convert/oncall-guide.json"), testLinks)
	md := got.Markdown
	for what, want := range map[string]string{
		"annotations":       "the **on-call** rotation for the *payments* team",
		"link":              "[escalation policy](https://acme.example.com/escalation)",
		"strikethrough":     "~~pager duty by email~~",
		"inline code":       "`oncall swap`",
		"user mention":      "@Dana Reyes",
		"page mention":      "[Incident review](https://www.notion.so/2b3c4d5e000040008000000000000002)",
		"heading 1":         "\n# Before your shift\n",
		"nested bullets":    "- Check the dashboard\n\n  - Latency under 200 ms\n",
		"numbered list":     "1. Acknowledge the page\n",
		"numbered child":    "2. Open an incident\n\n   Use the template in the incident tool.\n",
		"numbering goes on": "3. Post in the channel\n",
		"to-do checked":     "- [x] Read the runbook\n",
		"to-do open":        "- [ ] Test your pager\n",
		"toggle heading":    "## Escalation\n\nEscalate after 15 minutes without progress.",
		"toggle content":    "What counts as a SEV1?\n\nCustomer payments fail for more than 5% of requests.",
		"callout":           "> ⚠️ Never restart the ledger during business hours.\n",
		"quote children":    "\n\n> Slow is smooth, smooth is fast.\n>\n> — the SRE handbook",
		"divider":           "\n---\n",
		"heading 3":         "### Useful commands",
		"code":              "```bash\nkubectl -n payments rollout restart deploy/api\nkubectl -n payments get pods | grep -v Running\n```",
		"code caption":      "*Restart the API*",
		"table":             "| Service | Owner | Pager |\n| --- | --- | --- |\n| ledger | Dana Reyes | payments-primary |",
		"pipe in cell":      `**Sam \| Lee**`,
		"equation":          `$$p\_{99} \< 200\\,ms$$`,
		"synced block":      "Status page: update it every 30 minutes during an incident.",
		"columns":           "Left column: primary contacts.\n\nRight column: backup contacts.",
		"child page":        "[📄 Shift handover notes](https://www.notion.so/",
		"child database":    "[🗂 Incident log](https://www.notion.so/",
		"bookmark":          "[Grafana board](https://grafana.example.com/d/payments)",
		"image caption":     "Architecture diagram of the payments stack",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("%s: markdown lacks %q", what, want)
		}
	}
	if strings.Contains(md, "X-Amz-Signature") {
		t.Errorf("the signed file URL is in the markdown")
	}
	if got.Unsupported != 1 {
		t.Errorf("unsupported blocks = %d, want 1", got.Unsupported)
	}
	var headings []string
	for _, h := range got.Headings {
		headings = append(headings, h.Text)
		if h.BlockID == "" {
			t.Errorf("heading %q without its block", h.Text)
		}
	}
	if strings.Join(headings, "|") != "Before your shift|Escalation|Useful commands" {
		t.Errorf("headings %q", headings)
	}
}

// TestChunkerKeepsTableAndCodeWhole chunks the golden page small: the
// table and the code block each land whole in one chunk.
func TestChunkerKeepsTableAndCodeWhole(t *testing.T) {
	md := notion.Convert(readBlocks(t, "testdata/convert/oncall-guide.json"), testLinks).Markdown
	table := md[strings.Index(md, "| Service |"):]
	table = table[:strings.Index(table, "\n\n")]
	code := md[strings.Index(md, "```bash"):]
	code = code[:strings.Index(code, "```\n")+3]
	chunks, err := search.Chunker{TargetTokens: 80, OverlapTokens: 10}.Chunk(docent.Document{
		ID: "n:1", Source: "n", Title: "On-call guide", Body: md, URL: "https://www.notion.so/x", UpdatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) < 4 {
		t.Fatalf("%d chunks; the test wants the page split", len(chunks))
	}
	for name, want := range map[string]string{"table": table, "code block": code} {
		found := false
		for _, c := range chunks {
			found = found || strings.Contains(c.Text, want)
		}
		if !found {
			t.Errorf("no chunk holds the whole %s:\n%s", name, want)
		}
	}
}

// FuzzConvert feeds the block converter arbitrary block JSON (seeded with
// the golden pages): it must not panic or hang, and every word of the
// blocks' visible text must reach some chunk of the markdown.
func FuzzConvert(f *testing.F) {
	files, _ := filepath.Glob("testdata/convert/*.json")
	for _, in := range files {
		data, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`[{"type":"paragraph","paragraph":{"rich_text":[{"plain_text":"hello"}]}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var blocks []*notion.Block
		if json.Unmarshal(data, &blocks) != nil {
			return
		}
		md := connectorstest.WithinDeadline(t, 10*time.Second, func() string {
			return notion.Convert(blocks, testLinks).Markdown
		})
		connectorstest.AssertTextChunked(t, notion.VisibleText(blocks), docent.Document{ID: "fuzz:1", Source: "fuzz", Title: "T", Body: md})
	})
}

// BenchmarkConvertAndChunk measures the conversion and chunking path of
// a page (the golden on-call guide: every block type, 26 top-level
// blocks), in documents a second. The blocks are decoded from JSON each
// time, as the source does.
//
//	go test ./connectors/notion -run '^$' -bench ConvertAndChunk
func BenchmarkConvertAndChunk(b *testing.B) {
	data, err := os.ReadFile("testdata/convert/oncall-guide.json")
	if err != nil {
		b.Fatal(err)
	}
	ch := search.Chunker{}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var blocks []*notion.Block
		if err := json.Unmarshal(data, &blocks); err != nil {
			b.Fatal(err)
		}
		md := notion.Convert(blocks, testLinks).Markdown
		if _, err := ch.Chunk(docent.Document{ID: "n:1", Title: "On-call guide", Body: md}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}
