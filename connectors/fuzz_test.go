package connectors_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/examples/handbook"
)

// FuzzParseMarkdown feeds the markdown and front-matter parser arbitrary
// files. It must never panic; it refuses only with ErrFrontMatter; and
// what it accepts has a body that is the end of the file, and labels that
// are trimmed, non-empty and distinct.
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
		doc, err := connectors.ParseMarkdown(path, content)
		if err != nil {
			if !errors.Is(err, connectors.ErrFrontMatter) {
				t.Fatalf("error %v does not wrap ErrFrontMatter", err)
			}
			return
		}
		if !bytes.HasSuffix(content, []byte(doc.Body)) {
			t.Fatalf("body %q is not the end of the file", doc.Body)
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
