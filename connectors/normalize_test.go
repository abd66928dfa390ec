package connectors_test

import (
	"io/fs"
	"slices"
	"testing"

	"github.com/docent-hq/docent/connectors"
)

// mapFiles is an Includer over a map of slash paths.
func mapFiles(m map[string]string) connectors.Includer {
	return func(name string) ([]byte, error) {
		if s, ok := m[name]; ok {
			return []byte(s), nil
		}
		return nil, fs.ErrNotExist
	}
}

// TestNormalize runs snippets written the way each static-site generator's
// docs write them through Normalize, and checks the markdown that comes
// out, the markup it counts as dropped, and the includes it expanded.
func TestNormalize(t *testing.T) {
	tests := []struct {
		name     string
		path     string
		in       string
		files    map[string]string
		want     string
		dropped  int
		included []string
		missing  []string
	}{
		// Hugo
		{name: "hugo: a paired shortcode keeps its text", path: "content/remotes.md",
			in:   "Copies are checked.\n\n{{< hint info >}}\nUse **server-side copy** when the remote has it.\n{{< /hint >}}\n",
			want: "Copies are checked.\n\nUse **server-side copy** when the remote has it.\n"},
		{name: "hugo: a shortcode without text is dropped and counted", path: "content/overview.md",
			in:   "The matrix below is generated.\n\n{{< features-table >}}\n\n{{< img src=\"/x.svg\" alt=\"diagram\" >}}\n\nEvery remote supports copy.\n",
			want: "The matrix below is generated.\n\nEvery remote supports copy.\n", dropped: 2},
		{name: "hugo: markdown shortcodes", path: "content/flags.md",
			in:   "{{% notice tip %}}\nSet `--retries 0` when a script handles failures.\n{{% /notice %}}\n",
			want: "Set `--retries 0` when a script handles failures.\n"},
		{name: "hugo: tabs keep their names", path: "content/mount.md",
			in:   "{{< tabs >}}\n{{< tab \"Linux\" >}}\nInstall `fuse3` first.\n{{< /tab >}}\n{{< tab name=\"macOS\" >}}\nUse the NFS server.\n{{< /tab >}}\n{{< /tabs >}}\n",
			want: "**Linux**\n\nInstall `fuse3` first.\n\n**macOS**\n\nUse the NFS server.\n"},
		{name: "hugo: highlight is fenced code", path: "content/api.md",
			in:   "Configure it:\n\n{{< highlight go \"linenos=table\" >}}\ncfg := quill.Config{Transfers: 8}\n{{< /highlight >}}\n",
			want: "Configure it:\n\n```go\ncfg := quill.Config{Transfers: 8}\n```\n"},
		{name: "hugo: ref links keep their target", path: "content/index.md",
			in:   "See [the install guide]({{< ref \"install.md\" >}}) and [flags]({{< relref \"/docs/flags\" >}}).\n",
			want: "See [the install guide](install.md) and [flags](/docs/flags).\n"},
		{name: "hugo: an escaped shortcode is shown as written", path: "content/writing.md",
			in:   "Write {{</* hint info */>}} to open a hint.\n",
			want: "Write `{{< hint info >}}` to open a hint.\n"},
		{name: "hugo: shortcodes in code are code", path: "content/writing.md",
			in:   "Inline `{{< hint >}}` stays.\n\n```go-html-template\n{{< figure src=\"x\" >}}\n```\n",
			want: "Inline `{{< hint >}}` stays.\n\n```go-html-template\n{{< figure src=\"x\" >}}\n```\n"},
		{name: "hugo: heading ids stay for the chunker", path: "content/flags.md",
			in:   "## Options {#options}\n\nText.\n",
			want: "## Options {#options}\n\nText.\n"},

		// Jekyll
		{name: "jekyll: raw keeps Liquid as written", path: "docs/templates.md",
			in:   "A title such as {% raw %}{{ board.owner }}'s sprint{% endraw %} is filled in.\n",
			want: "A title such as {{ board.owner }}'s sprint is filled in.\n"},
		{name: "jekyll: comments and captures go", path: "docs/a.md",
			in:   "Shown.\n\n{% comment %}\nTODO: grace period\n{% endcomment %}\n{% capture note %}Saved for later{% endcapture %}\n\nAlso shown.\n",
			want: "Shown.\n\nAlso shown.\n"},
		{name: "jekyll: control flow keeps its content, uncounted", path: "docs/a.md",
			in:   "{% if site.beta %}\nTemplates are in beta.\n{% endif %}\n{% for v in site.versions %}\n- {{ v }}\n{% endfor %}\n",
			want: "Templates are in beta.\n\n-\n", dropped: 1},
		{name: "jekyll: highlight is fenced code", path: "docs/a.md",
			in:   "{% highlight ruby linenos %}\nputs \"{{ not liquid }}\"\n{% endhighlight %}\n",
			want: "```ruby\nputs \"{{ not liquid }}\"\n```\n"},
		{name: "jekyll: an output tag is dropped and counted", path: "docs/a.md",
			in:   "See the [API]({{ site.baseurl }}/api/) and {{ page.title | upcase }}.\n",
			want: "See the [API](/api/) and .\n", dropped: 2},
		{name: "jekyll: include from _includes", path: "docs/workspaces.md",
			in:       "## Deleting\n\n{% include warning.md %}\n",
			files:    map[string]string{"_includes/warning.md": "**Warning:** this cannot be undone.\n"},
			want:     "## Deleting\n\n**Warning:** this cannot be undone.\n",
			included: []string{"_includes/warning.md"}},
		{name: "jekyll: kramdown attribute lists and the TOC marker", path: "docs/a.md",
			in:   "* TOC\n{:toc}\n\nA workspace groups boards.\n{: .lead }\n\n[Open it](/x){:target=\"_blank\"}\n",
			want: "A workspace groups boards.\n\n[Open it](/x)\n"},

		// MkDocs with Material and pymdownx
		{name: "mkdocs: admonition body is prose under its title", path: "docs/ports.md",
			in:   "!!! note \"Pick a port\"\n\n    Ports below 1024 need root.\n    Use 8080 otherwise.\n\nAfter.\n",
			want: "**Pick a port**\n\nPorts below 1024 need root.\nUse 8080 otherwise.\n\nAfter.\n"},
		{name: "mkdocs: collapsible without a title is named by its type", path: "docs/a.md",
			in:   "???+ warning\n    Slow on large folders.\n",
			want: "**Warning**\n\nSlow on large folders.\n"},
		{name: "mkdocs: an empty title shows no line", path: "docs/a.md",
			in:   "!!! info \"\"\n    Just the body.\n",
			want: "Just the body.\n"},
		{name: "mkdocs: nested in a list item", path: "docs/a.md",
			in:   "- Dashboard:\n\n    !!! tip inline end\n        Name it `traefik`.\n",
			want: "- Dashboard:\n\n    **Tip**\n\n    Name it `traefik`.\n"},
		{name: "mkdocs: content tabs", path: "docs/a.md",
			in:   "=== \"Docker\"\n\n    ```yaml\n    - \"a=1\"\n    ```\n\n=== \"CLI\"\n\n    ```bash\n    --a=1\n    ```\n",
			want: "**Docker**\n\n```yaml\n- \"a=1\"\n```\n\n**CLI**\n\n```bash\n--a=1\n```\n"},
		{name: "mkdocs: a snippet inside code keeps the directive's indentation", path: "docs/reference/docker.md",
			in:       "```yaml\nlabels:\n  --8<-- \"content/reference/docker-labels.yml\"\n```\n",
			files:    map[string]string{"reference/docker-labels.yml": "- a=1\n- b=2\n"},
			want:     "```yaml\nlabels:\n  - a=1\n  - b=2\n```\n",
			included: []string{"reference/docker-labels.yml"}},
		{name: "mkdocs: snippet line ranges and the block form", path: "docs/a.md",
			in:       "--8<-- \"parts.md:2:3\"\n\n--8<--\nparts.md:1:1\n--8<--\n",
			files:    map[string]string{"parts.md": "one\ntwo\nthree\nfour\n"},
			want:     "two\nthree\n\none\n",
			included: []string{"parts.md"}},
		{name: "mkdocs: an escaped snippet is shown", path: "docs/a.md",
			in:   "```\n;--8<-- \"file.md\"\n```\n",
			want: "```\n--8<-- \"file.md\"\n```\n"},
		{name: "mkdocs: include-markdown from the docs root, between markers", path: "docs/middlewares/http/strip.md",
			in:       "Strip.\n\n{% include-markdown \"includes/help.md\" start=\"<!--start-->\" end=\"<!--end-->\" %}\n",
			files:    map[string]string{"docs/includes/help.md": "---\ntitle: Help\n---\nskipped\n<!--start-->\nAsk on the forum.\n<!--end-->\nskipped\n"},
			want:     "Strip.\n\nAsk on the forum.\n",
			included: []string{"docs/includes/help.md"}},
		{name: "mkdocs: a missing include is dropped and listed", path: "docs/a.md",
			in:      "Before.\n\n--8<-- \"content/ref.yaml\"\n\nAfter.\n",
			want:    "Before.\n\nAfter.\n",
			missing: []string{"content/ref.yaml"}},
		{name: "mkdocs: an include cycle stops", path: "a.md",
			in:       "A.\n--8<-- \"b.md\"\n",
			files:    map[string]string{"b.md": "B.\n--8<-- \"a.md\"\n", "a.md": "A.\n--8<-- \"b.md\"\n"},
			want:     "A.\nB.\n",
			included: []string{"b.md"}, missing: []string{"a.md"}},
		{name: "mkdocs: attribute lists", path: "docs/a.md",
			in:   "# Routers\n\nConnecting requests to services\n{: .subtitle }\n\n## Usage { #usage .big }\n\n![Flow](flow.png){ width=\"300\" }\n",
			want: "# Routers\n\nConnecting requests to services\n\n## Usage {#usage}\n\n![Flow](flow.png)\n"},
		{name: "mkdocs: pymdownx blocks", path: "docs/a.md",
			in:   "/// note | Plugin catalog\nEvery community plugin, with its schema.\n///\n",
			want: "**Plugin catalog**\n\nEvery community plugin, with its schema.\n"},

		// Docusaurus and MDX
		{name: "mdx: imports and exports go", path: "docs/setup.mdx",
			in:   "import Tabs from '@theme/Tabs';\nimport '@site/src/css/x.css';\n\nexport const Highlight = ({children, color}) => (\n  <span style={{backgroundColor: color}}>\n    {children}\n  </span>\n);\n\n# Setup\n\nText.\n",
			want: "# Setup\n\nText.\n"},
		{name: "mdx: tabs keep their labels", path: "docs/setup.mdx",
			in:   "<Tabs groupId=\"os\">\n  <TabItem value=\"mac\" label=\"macOS\" default>\n\n```bash\nbrew install orbit\n```\n\n  </TabItem>\n  <TabItem value=\"linux\" label=\"Linux\">\n\nUse the script.\n\n  </TabItem>\n</Tabs>\n",
			want: "  **macOS**\n\n```bash\nbrew install orbit\n```\n\n  **Linux**\n\nUse the script.\n"},
		{name: "mdx: admonitions", path: "docs/a.md",
			in:   ":::tip[Shell completion]\n\nRun `orbit completion zsh`.\n\n:::\n\n:::note Title with words\nA note.\n:::\n\n::::warning\nOuter.\n:::info\nInner.\n:::\n::::\n",
			want: "**Shell completion**\n\nRun `orbit completion zsh`.\n\n**Title with words**\n\nA note.\n\n**Warning**\n\nOuter.\n\n**Info**\n\nInner.\n"},
		{name: "mdx: a component without text is dropped and counted", path: "docs/index.mdx",
			in:   "## More guides\n\n<DocCardList />\n\n<BrowserWindow url=\"http://localhost:3000\"></BrowserWindow>\n",
			want: "## More guides\n", dropped: 1},
		{name: "mdx: comments and inline components", path: "docs/a.mdx",
			in:   "{/* screenshots are from v3 */}\nA token with the <Highlight color=\"#25c2a0\">deploy</Highlight> scope.\n",
			want: "A token with the deploy scope.\n"},
		{name: "mdx: partials are expanded", path: "docs/guides/setup.mdx",
			in:       "import Steps from './_steps.mdx';\n\n# Setup\n\n<Steps />\n",
			files:    map[string]string{"docs/guides/_steps.mdx": "1. Download it.\n2. Run it.\n"},
			want:     "# Setup\n\n1. Download it.\n2. Run it.\n",
			included: []string{"docs/guides/_steps.mdx"}},
		{name: "mdx: a placeholder is not a component", path: "docs/a.md",
			in:   "Replace <Name> with your project, then open <http://localhost:3000>.\n",
			want: "Replace <Name> with your project, then open <http://localhost:3000>.\n"},

		// GitHub
		{name: "github: a footnote's text goes to its first reference", path: "README.md",
			in: "Set the key.[^key] Keep it safe.[^key]\n\n| Provider | Variables |\n|---|---|\n| Quill | `QUILL_KEY` [^2] |\n\n" +
				"Match `[^/]+` paths.[^none]\n\n```\n[^key]: stays in code\n```\n\n[^key]: The account key, not\n    the project key.\n[^2]: Use a | b.\n",
			want: "Set the key. (The account key, not the project key.) Keep it safe.\n\n| Provider | Variables |\n|---|---|\n| Quill | `QUILL_KEY` (Use a / b.) |\n\n" +
				"Match `[^/]+` paths.[^none]\n\n```\n[^key]: stays in code\n```\n"},
		{name: "github: alerts", path: "README.md",
			in:   "> [!WARNING]\n> Raw events are deleted after 30 days.\n",
			want: "> **Warning**\n> Raw events are deleted after 30 days.\n"},
		{name: "github: comments, wrapper HTML and images", path: "README.md",
			in:   "<!-- markdownlint-disable MD033\n     MD041 -->\n<p align=\"center\">\n  <img src=\"logo.png\" alt=\"Tallyho logo\" width=\"120\">\n</p>\n\nTallyho counts events.<br>No database.\n",
			want: "  Tallyho logo\n\nTallyho counts events. No database.\n"},
		{name: "github: details and summary", path: "README.md",
			in:   "<details>\n<summary>Running without Docker</summary>\n\nRun `tallyho serve`.\n\n</details>\n",
			want: "**Running without Docker**\n\nRun `tallyho serve`.\n"},
		{name: "github: tables stay whole", path: "README.md",
			in:   "| Variable | Meaning |\n|---|---|\n| `PORT` | Port<br>of the API |\n",
			want: "| Variable | Meaning |\n|---|---|\n| `PORT` | Port of the API |\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var read connectors.Includer
			if tt.files != nil {
				read = mapFiles(tt.files)
			}
			got, notes := connectors.Normalize(tt.path, tt.in, read)
			if got != tt.want {
				t.Errorf("Normalize =\n%q\nwant\n%q", got, tt.want)
			}
			if notes.Dropped != tt.dropped {
				t.Errorf("dropped %d, want %d", notes.Dropped, tt.dropped)
			}
			if !slices.Equal(notes.Included, tt.included) || !slices.Equal(notes.Missing, tt.missing) {
				t.Errorf("included %q missing %q, want %q %q", notes.Included, notes.Missing, tt.included, tt.missing)
			}
		})
	}
}

// TestWholeIncludes: the files a page includes whole are what a source
// leaves out as fragments; a snippet with a line range or an
// include-markdown with markers includes part of a file only.
func TestWholeIncludes(t *testing.T) {
	docs := map[string]bool{"docs/snippets/common.md": true, "docs/includes/help.md": true, "docs/guides/_steps.mdx": true,
		"docs/parts.md": true, "docs/page.md": true}
	content := "--8<-- \"snippets/common.md\"\n--8<-- \"parts.md:1:3\"\n" +
		"{% include-markdown \"includes/help.md\" %}\n{% include-markdown \"parts.md\" start=\"<!--a-->\" %}\n" +
		"import Steps from './guides/_steps.mdx';\n\n<Steps />\n--8<-- \"config/ports.yml\"\n"
	got := connectors.WholeIncludes("docs/page.md", []byte(content), func(n string) bool { return docs[n] })
	want := []string{"docs/snippets/common.md", "docs/includes/help.md", "docs/guides/_steps.mdx"}
	if !slices.Equal(got, want) {
		t.Errorf("WholeIncludes = %q, want %q", got, want)
	}
}
