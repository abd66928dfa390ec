package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestREADMEIsAPage holds the README to a page a newcomer reads: at most
// 300 lines, linking each reference page of docs/.
func TestREADMEIsAPage(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	if n := strings.Count(readme, "\n"); n > 300 {
		t.Errorf("README.md has %d lines, want at most 300: reference belongs in docs/", n)
	}
	for _, page := range []string{"configuration", "sources", "slack", "discord", "console", "api",
		"operations", "measurements", "answerer", "retrieval", "testing", "mcp", "security"} {
		if !strings.Contains(readme, "](docs/"+page+".md") {
			t.Errorf("README.md does not link docs/%s.md", page)
		}
	}
}

var (
	mdLink   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdFence  = regexp.MustCompile("(?s)```.*?```")
	mdHeader = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
)

// TestDocsLinks checks every relative link of the README, docs/*.md and
// deploy/README.md: the file exists, and a #fragment names a heading of
// it (GitHub's anchors: lower case, punctuation dropped, spaces to
// hyphens).
func TestDocsLinks(t *testing.T) {
	t.Parallel()
	for _, page := range docPages(t) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := mdFence.ReplaceAllString(string(b), "")
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(link, "#")
			target := page
			if path != "" {
				target = filepath.Join(filepath.Dir(page), path)
			}
			tb, err := os.ReadFile(target)
			if err != nil {
				if st, serr := os.Stat(target); serr == nil && st.IsDir() {
					continue
				}
				t.Errorf("%s links %s: %v", page, link, err)
				continue
			}
			if frag == "" {
				continue
			}
			found := false
			for _, h := range mdHeader.FindAllStringSubmatch(mdFence.ReplaceAllString(string(tb), ""), -1) {
				found = found || anchor(h[1]) == frag
			}
			if !found {
				t.Errorf("%s links %s: %s has no heading #%s", page, link, target, frag)
			}
		}
	}
}

// anchor is GitHub's anchor of a heading.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}
