package connectors_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/examples/handbook"
)

// FuzzParseMarkdown feeds the markdown and front-matter parser and the
// normaliser arbitrary files. It must never panic, always give a title,
// keep valid UTF-8 valid, give a body with no carriage return (CRLF is
// folded), labels that are trimmed, non-empty and distinct, and a body that
// normalising again leaves as it is.
func FuzzParseMarkdown(f *testing.F) {
	for _, p := range []string{"it/vpn.md", "travel/expense-policy.md", "product/faq.md"} {
		b, err := handbook.FS.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(p, b)
	}
	for _, seed := range []struct{ path, content string }{
		{"a.md", ""},
		{"a.md", "# Title\n\nBody.\n"},
		{"b.md", "Title\n=====\n\nSetext.\n"},
		{"c.md", "---\ntitle: T\nlabels: [a, b, a, \" \"]\ntags: b, c\nupdated: 2026-01-02\nowner: IT\nspace: S\n---\n\nBody\n"},
		{"d.md", "---\r\ntitle: CRLF\r\n...\r\n\r\nBody\r\n"},
		{"e.md", "\ufeff---\ntitle: BOM\n---\n"},
		{"f.md", "---\ntitle: [oops\n---\nbody\n"},
		{"g.md", "---\nno closing line\n"},
		{"h.md", "---\n- a list\n---\n"},
		{"i.md", "---\nupdated: yesterday\n---\n"},
		{"j.md", "---\ntitle: {a: b}\n---\n"},
		{"k.md", "---\n---\n"},
		{"l.md", "---\na: &a [*a, *a]\nb: *a\n---\n"},
		{"", "---\ntitle: 7\nlabels: 3\n---\n"},
		{"deep/dir/some_file-name.rst", "plain text\n"},
	} {
		f.Add(seed.path, []byte(seed.content))
	}
	f.Fuzz(func(t *testing.T, path string, content []byte) {
		doc := connectors.ParseMarkdown(path, content)
		if doc.Title == "" {
			t.Fatal("no title")
		}
		if utf8.Valid(content) && !utf8.ValidString(doc.Body) {
			t.Fatalf("body %q is not valid UTF-8", doc.Body)
		}
		if ext := path[strings.LastIndex(path, ".")+1:]; ext != "txt" && ext != "rst" {
			if strings.Contains(doc.Body, "\r\n") {
				t.Fatalf("body %q keeps CRLF", doc.Body)
			}
			if again, _ := connectors.Normalize(path, doc.Body, nil); again != doc.Body {
				t.Fatalf("normalising again changes %q to %q", doc.Body, again)
			}
		}
		seen := map[string]bool{}
		for _, l := range doc.Labels {
			if l == "" || l != strings.TrimSpace(l) || seen[l] {
				t.Fatalf("labels %q: empty, untrimmed or repeated", doc.Labels)
			}
			seen[l] = true
		}
	})
}
