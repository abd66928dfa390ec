package confluence_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors/confluence"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/search"
)

var update = flag.Bool("update", false, "rewrite the golden markdown files")

var testLinks = confluence.Links{BaseURL: "https://acme.atlassian.net/wiki", SpaceKey: "ENG"}

// TestConvertGolden converts every testdata/convert/*.xml page (storage
// format as the API returns it) and compares the markdown with its .md
// golden file. go test -run TestConvertGolden -update rewrites them.
func TestConvertGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/convert/*.xml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	conv := confluence.NewConverter()
	for _, in := range files {
		name := strings.TrimSuffix(filepath.Base(in), ".xml")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := conv.Convert(string(src), testLinks)
			if err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(in, ".xml") + ".md"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("markdown differs from %s:\n--- got\n%s\n--- want\n%s", golden, got, want)
			}
		})
	}
}

// TestConvertMacros checks the rules one at a time.
func TestConvertMacros(t *testing.T) {
	conv := confluence.NewConverter()
	for _, c := range []struct {
		name, storage string
		want          []string // substrings of the markdown
		not           []string // must not appear
	}{
		{"code keeps its language and text",
			`<ac:structured-macro ac:name="code"><ac:parameter ac:name="language">py</ac:parameter><ac:plain-text-body><![CDATA[if a < b and c > d:
    print("x]]")]]></ac:plain-text-body></ac:structured-macro>`,
			[]string{"```python\nif a < b and c > d:\n    print(\"x]]\")\n```"}, []string{"CDATA"}},
		{"noformat is a plain code block",
			`<ac:structured-macro ac:name="noformat"><ac:plain-text-body><![CDATA[raw <b>text</b>]]></ac:plain-text-body></ac:structured-macro>`,
			[]string{"```\nraw <b>text</b>\n```"}, nil},
		{"note panel is a quote",
			`<ac:structured-macro ac:name="note"><ac:rich-text-body><p>Mind the gap.</p></ac:rich-text-body></ac:structured-macro>`,
			[]string{"> **Note:**", "> Mind the gap."}, nil},
		{"expand keeps its content",
			`<ac:structured-macro ac:name="expand"><ac:parameter ac:name="title">More</ac:parameter><ac:rich-text-body><p>Hidden detail.</p></ac:rich-text-body></ac:structured-macro>`,
			[]string{"**More**", "Hidden detail."}, []string{">"}},
		{"unknown macro keeps its body",
			`<ac:structured-macro ac:name="details"><ac:parameter ac:name="id">x</ac:parameter><ac:rich-text-body><p>Kept body.</p></ac:rich-text-body></ac:structured-macro>`,
			[]string{"Kept body."}, []string{"id"}},
		{"generated macros are dropped",
			`<p>Before</p><ac:structured-macro ac:name="children"><ac:parameter ac:name="depth">2</ac:parameter></ac:structured-macro><p>After</p>`,
			[]string{"Before\n\nAfter"}, []string{"depth"}},
		{"page link in another space",
			`<p><ac:link><ri:page ri:space-key="HR" ri:content-title="Leave / PTO" /></ac:link></p>`,
			[]string{"[Leave / PTO](https://acme.atlassian.net/wiki/display/HR/Leave+/+PTO)"}, nil},
		{"mention by account ID only",
			`<p>Ask <ac:link><ri:user ri:account-id="557058:abc" /></ac:link>.</p>`,
			[]string{"Ask @user."}, []string{"557058"}},
		{"external link",
			`<p><ac:link><ri:url ri:value="https://example.com/a" /><ac:plain-text-link-body><![CDATA[site]]></ac:plain-text-link-body></ac:link></p>`,
			[]string{"[site](https://example.com/a)"}, nil},
		{"placeholders are editor hints",
			`<p><ac:placeholder>Type your summary here</ac:placeholder>Summary.</p>`,
			[]string{"Summary."}, []string{"Type your"}},
		{"nested table in a cell is flattened",
			`<table><tbody><tr><th>A</th><th>B</th></tr><tr><td><table><tbody><tr><td>x</td><td>y</td></tr></tbody></table></td><td><pre>l1
l2</pre></td></tr></tbody></table>`,
			[]string{"| x  <br />y |", "`l1`  <br />`l2`"}, nil},
		{"time element", `<p>Due <time datetime="2026-04-01" /></p>`, []string{"Due 2026-04-01"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := conv.Convert(c.storage, testLinks)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("markdown lacks %q:\n%s", w, got)
				}
			}
			for _, w := range c.not {
				if strings.Contains(got, w) {
					t.Errorf("markdown has %q:\n%s", w, got)
				}
			}
		})
	}
}

// TestChunkerKeepsTableAndCodeWhole chunks the golden page: the table and
// the code block each land whole in one chunk, under their heading.
func TestChunkerKeepsTableAndCodeWhole(t *testing.T) {
	src, err := os.ReadFile("testdata/convert/deploy-runbook.xml")
	if err != nil {
		t.Fatal(err)
	}
	md, err := confluence.NewConverter().Convert(string(src), testLinks)
	if err != nil {
		t.Fatal(err)
	}
	table := block(t, md, "| Environment |", "\n\n")
	code := block(t, md, "```bash", "```\n")
	// A small target forces the page into several chunks.
	chunks, err := search.Chunker{TargetTokens: 120, OverlapTokens: 20}.Chunk(docent.Document{
		ID: "wiki:1", Source: "wiki", Title: "Deploy runbook", Body: md,
		URL: "https://acme.atlassian.net/wiki/spaces/ENG/pages/1", UpdatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) < 3 {
		t.Fatalf("%d chunks; the test wants the page split", len(chunks))
	}
	for name, want := range map[string]string{"table": table, "code block": code} {
		found := false
		for _, c := range chunks {
			if strings.Contains(c.Text, want) {
				found = true
			}
		}
		if !found {
			t.Errorf("no chunk holds the whole %s:\n%s", name, want)
		}
	}
}

// block returns md from the line starting with start to the end marker.
func block(t *testing.T, md, start, end string) string {
	t.Helper()
	i := strings.Index(md, start)
	if i < 0 {
		t.Fatalf("markdown lacks %q", start)
	}
	j := strings.Index(md[i+len(start):], end)
	if j < 0 {
		return md[i:]
	}
	return strings.TrimSpace(md[i : i+len(start)+j+len(end)])
}

// FuzzConvert feeds the converter arbitrary storage format (seeded with
// the golden pages): it must not panic or hang, and every word of the
// page's visible text must reach some chunk of the markdown.
func FuzzConvert(f *testing.F) {
	files, _ := filepath.Glob("testdata/convert/*.xml")
	for _, in := range files {
		src, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(src))
	}
	conv := confluence.NewConverter()
	f.Fuzz(func(t *testing.T, storage string) {
		md := connectorstest.WithinDeadline(t, 10*time.Second, func() string {
			md, err := conv.Convert(storage, testLinks)
			if err != nil {
				t.Fatal(err)
			}
			return md
		})
		connectorstest.AssertTextChunked(t, confluence.VisibleText(storage), docent.Document{ID: "fuzz:1", Source: "fuzz", Title: "T", Body: md})
	})
}

// BenchmarkConvertAndChunk measures the conversion and chunking path of
// a page (the golden runbook, 3.6 KB of storage format), in documents a
// second:
//
//	go test ./connectors/confluence -run '^$' -bench ConvertAndChunk
func BenchmarkConvertAndChunk(b *testing.B) {
	src, err := os.ReadFile("testdata/convert/deploy-runbook.xml")
	if err != nil {
		b.Fatal(err)
	}
	conv := confluence.NewConverter()
	ch := search.Chunker{}
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		md, err := conv.Convert(string(src), testLinks)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ch.Chunk(docent.Document{ID: "wiki:1", Title: "Deploy runbook", Body: md}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}
