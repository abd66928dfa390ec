package files_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/connectors/files"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/searchtest"
)

// TestGeneratorSites lists a small site written for each static-site
// generator (testdata/sites: Hugo, Jekyll, MkDocs with Material and
// pymdownx, Docusaurus with MDX, GitHub markdown), chunks its documents
// as the sync does, and checks what comes out: no chunk with a heading
// anchor in its section path, a raw shortcode, tag or component, a
// comment or an unbalanced fence; included files expanded and left out as
// fragments; markup without text counted; heading ids as deep links; and
// the text each construct holds still there.
func TestGeneratorSites(t *testing.T) {
	tests := []struct {
		site      string
		fragments []string
		dropped   map[string]int
		// has maps a document path to texts its chunks must hold.
		has map[string][]string
		// urls are deep links some chunk must carry.
		urls []string
		// frontMatter maps a path to a part of its front matter problem.
		frontMatter map[string]string
	}{
		{site: "hugo",
			dropped: map[string]int{"content/docs/_index.md": 2},
			has: map[string][]string{
				"content/docs/_index.md": {"Which remote should I pick?", "Set `--retries 0`", "**Linux**", "```go\ncfg :=",
					"[the install guide](install.md)", "```\n--transfers int"},
				"content/docs/install.md": {"You need Go 1.22"},
			},
			urls: []string{"content/docs/_index.md#options", "content/docs/_index.md#retries", "content/docs/install.md#from-source"}},
		{site: "jekyll",
			fragments: []string{"jekyll:_includes/warning.md"},
			dropped:   map[string]int{"docs/workspaces.md": 1},
			has: map[string][]string{"docs/workspaces.md": {"**Warning:** deleting a workspace", "`{{ board.owner }}'s sprint`",
				"```yaml\ntemplate:", "Workspace-level templates are in beta", "[API reference](/api/)"}}},
		{site: "mkdocs",
			fragments: []string{"mkdocs:docs/includes/support.md", "mkdocs:docs/snippets/common.md"},
			has: map[string][]string{
				"docs/entrypoints.md": {"**Port 80 only**", "**File (YAML)**", "address: \":80\"", "**Default ports**",
					"Without any entry point", "**Restart required**", "Need help? Open a discussion", "**Tip**"},
				"docs/plugins.md": {"**Plugin catalog**", "Plugins extend Gatehouse"},
			},
			urls:        []string{"docs/entrypoints.md#address"},
			frontMatter: map[string]string{"docs/plugins.md": "line 2"}},
		{site: "docusaurus",
			fragments: []string{"docusaurus:docs/guides/_install-steps.mdx"},
			dropped:   map[string]int{"docs/guides/setup.mdx": 1},
			has: map[string][]string{"docs/guides/setup.mdx": {"with the deploy scope", "Download the installer", "**macOS**",
				"brew install orbit-cli", "**Shell completion**", "**Warning**", "**Behind a proxy?**"}},
			urls: []string{"docs/guides/setup.mdx#installing"}},
		{site: "github",
			has: map[string][]string{"docs/README.md": {"Tallyho logo", "> **Note**", "```\ndocker run", "**Running without Docker**",
				"| `TALLYHO_PORT` | `9300` |"}},
			urls: []string{"docs/README.md#quick-start"}},
	}
	for _, tt := range tests {
		t.Run(tt.site, func(t *testing.T) {
			src := files.New(tt.site, os.DirFS("testdata/sites/"+tt.site), files.Options{WebURL: "https://docs.example.com/{path}"})
			got, err := connectorstest.Collect(context.Background(), src, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Failed) > 0 {
				t.Errorf("failed: %v", got.Failed)
			}
			if !slices.Equal(got.Fragments, tt.fragments) {
				t.Errorf("fragments %q, want %q", got.Fragments, tt.fragments)
			}
			var all []docent.Chunk
			text := map[string]string{}
			for _, d := range got.Docs {
				if n := tt.dropped[d.Path]; d.Normalized.Dropped != n {
					t.Errorf("%s: dropped %d, want %d", d.Path, d.Normalized.Dropped, n)
				}
				if want := tt.frontMatter[d.Path]; !strings.Contains(d.Normalized.FrontMatter, want) || (want == "") != (d.Normalized.FrontMatter == "") {
					t.Errorf("%s: front matter problem %q, want one with %q", d.Path, d.Normalized.FrontMatter, want)
				}
				chunks, err := search.Chunker{}.Chunk(d)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range chunks {
					text[d.Path] += c.Text + "\n"
				}
				all = append(all, chunks...)
			}
			for p, wants := range tt.has {
				for _, w := range wants {
					if !strings.Contains(text[p], w) {
						t.Errorf("%s: chunks lack %q:\n%s", p, w, text[p])
					}
				}
			}
			for _, u := range tt.urls {
				if !slices.ContainsFunc(all, func(c docent.Chunk) bool { return c.URL == "https://docs.example.com/"+u }) {
					t.Errorf("no chunk links to %s", u)
				}
			}
			// Small sites: every chunk is checked, duplicates and tiny
			// bodies allowed only as the realdocs audit allows them.
			searchtest.AuditChunks(all).Check(t, all, 0.01, 1)
		})
	}
}
