package connectors_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/docent-hq/docent/connectors"
)

func TestParseMarkdown(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		content string
		want    connectors.MarkdownDoc
	}{
		{
			name: "front matter with every key",
			path: "it/vpn.md",
			content: "---\ntitle: Corporate VPN\nowner: IT Operations\nupdated: 2026-01-20\n" +
				"labels: [it, vpn]\nspace: IT\ndescription: How to connect\nreviewers: [ana]\n---\n\nBody text.\n",
			want: connectors.MarkdownDoc{
				Title:       "Corporate VPN",
				Body:        "Body text.\n",
				Labels:      []string{"it", "vpn"},
				Owner:       "IT Operations",
				Updated:     time.Date(2026, 1, 20, 0, 0, 0, 0, time.UTC),
				Space:       "IT",
				Description: "How to connect",
				Extra:       map[string]any{"reviewers": []any{"ana"}},
			},
		},
		{
			name:    "tags as comma string, RFC3339 date, CRLF",
			path:    "a.md",
			content: "---\r\ntags: \"travel, expenses , ,travel\"\r\nupdated: 2025-03-04T10:30:00Z\r\n---\r\nText\r\n",
			want: connectors.MarkdownDoc{
				Title:   "A",
				Body:    "Text\n",
				Labels:  []string{"travel", "expenses"},
				Updated: time.Date(2025, 3, 4, 10, 30, 0, 0, time.UTC),
			},
		},
		{
			name:    "a generator's modification date when there is no updated",
			path:    "a.md",
			content: "---\ndate: 2019-05-01\nlastmod: 2024-02-03T08:00:00Z\n---\nx",
			want: connectors.MarkdownDoc{Title: "A", Body: "x\n", Updated: time.Date(2024, 2, 3, 8, 0, 0, 0, time.UTC),
				Extra: map[string]any{"date": "2019-05-01", "lastmod": "2024-02-03T08:00:00Z"}},
		},
		{
			name:    "updated wins over the generators' dates",
			path:    "a.md",
			content: "---\nupdated: 2025-01-02\nlast_modified_at: 2024-01-01\n---\nx",
			want: connectors.MarkdownDoc{Title: "A", Body: "x\n", Updated: time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC),
				Extra: map[string]any{"last_modified_at": "2024-01-01"}},
		},
		{
			name:    "Docusaurus last_update",
			path:    "a.md",
			content: "---\nlast_update:\n  date: 2023-07-08\n  author: ana\n---\nx",
			want: connectors.MarkdownDoc{Title: "A", Body: "x\n", Updated: time.Date(2023, 7, 8, 0, 0, 0, 0, time.UTC),
				Extra: map[string]any{"last_update": map[string]any{"date": "2023-07-08", "author": "ana"}}},
		},
		{
			name:    "a publication date alone",
			path:    "a.md",
			content: "---\ndate: 2021-06-30\n---\nx",
			want:    connectors.MarkdownDoc{Title: "A", Body: "x\n", Updated: time.Date(2021, 6, 30, 0, 0, 0, 0, time.UTC), Extra: map[string]any{"date": "2021-06-30"}},
		},
		{
			name:    "a date that does not parse is only kept",
			path:    "a.md",
			content: "---\ndate: next spring\n---\nx",
			want:    connectors.MarkdownDoc{Title: "A", Body: "x\n", Extra: map[string]any{"date": "next spring"}},
		},
		{
			name:    "labels and tags merged",
			path:    "a.md",
			content: "---\nlabels: [a, b]\ntags: b, c\n---\nx",
			want:    connectors.MarkdownDoc{Title: "A", Body: "x\n", Labels: []string{"a", "b", "c"}},
		},
		{
			name:    "title from ATX H1 with closing hashes",
			path:    "guide.md",
			content: "Intro line\n\n## Not this\n# The Guide ##\n",
			want:    connectors.MarkdownDoc{Title: "The Guide", Body: "Intro line\n\n## Not this\n# The Guide ##\n"},
		},
		{
			name:    "the page's H1 is the title, not the front matter's search-engine title",
			path:    "routing/routers.md",
			content: "---\ntitle: \"Traefik Routers Documentation\"\ndescription: Routers\n---\n\n# Routers\n\nA router connects requests to services.\n",
			want: connectors.MarkdownDoc{Title: "Routers", Body: "# Routers\n\nA router connects requests to services.\n",
				Description: "Routers"},
		},
		{
			name:    "title from setext H1",
			path:    "guide.rst",
			content: "Expense Policy\n==============\n\nText.\n",
			want:    connectors.MarkdownDoc{Title: "Expense Policy", Body: "Expense Policy\n==============\n\nText.\n"},
		},
		{
			name:    "heading inside a code fence is not the title",
			path:    "docs/on-call-guide.md",
			content: "```sh\n# comment\n```\nNo heading here.\n",
			want:    connectors.MarkdownDoc{Title: "On call guide", Body: "```sh\n# comment\n```\nNo heading here.\n"},
		},
		{
			name:    "plain text is not normalised",
			path:    "notes/raw.txt",
			content: "<!-- kept -->\n{{ kept }}\n",
			want:    connectors.MarkdownDoc{Title: "Raw", Body: "<!-- kept -->\n{{ kept }}\n"},
		},
		{
			name:    "title from file name, underscores",
			path:    "notes/release_process_v2.txt",
			content: "plain text",
			want:    connectors.MarkdownDoc{Title: "Release process v2", Body: "plain text"},
		},
		{
			name:    "empty front matter",
			path:    "x.md",
			content: "---\n---\n# X\n",
			want:    connectors.MarkdownDoc{Title: "X", Body: "# X\n"},
		},
		{
			name:    "byte order mark before front matter",
			path:    "x.md",
			content: "\ufeff---\ntitle: BOM\n---\nbody",
			want:    connectors.MarkdownDoc{Title: "BOM", Body: "body\n"},
		},
		{
			name:    "a thematic break later is not front matter",
			path:    "x.md",
			content: "# T\n\n---\n\nmore",
			want:    connectors.MarkdownDoc{Title: "T", Body: "# T\n\n---\n\nmore\n"},
		},
		{
			name:    "a leading thematic break is not front matter",
			path:    "includes/promo.md",
			content: "---\n\n!!! question \"Using it in production?\"\n\n    Ask us.\n",
			want:    connectors.MarkdownDoc{Title: "Promo", Body: "---\n\n**Using it in production?**\n\nAsk us.\n"},
		},
		{
			name:    "prose between two rules is not front matter",
			path:    "x.md",
			content: "---\n\nSome words.\n\n---\n\nMore.\n",
			want:    connectors.MarkdownDoc{Title: "X", Body: "---\n\nSome words.\n\n---\n\nMore.\n"},
		},
		{
			name:    "Hugo TOML front matter",
			path:    "content/install.md",
			content: "+++\ntitle = \"Install\"\ntags = [\"setup\", \"linux\"]\ndate = 2024-01-02\n+++\n\nRun the installer.\n",
			want: connectors.MarkdownDoc{Title: "Install", Body: "Run the installer.\n", Labels: []string{"setup", "linux"},
				Extra: map[string]any{"date": toml.LocalDate{Year: 2024, Month: 1, Day: 2}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := connectors.ParseMarkdown(tt.path, []byte(tt.content))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseMarkdown =\n%#v\nwant\n%#v", got, tt.want)
			}
		})
	}
}

// TestParseMarkdownFrontMatterProblems: front matter that is not valid is
// reported, and the document is indexed all the same: its body, and the
// title its heading (or the title line of the broken block) gives.
func TestParseMarkdownFrontMatterProblems(t *testing.T) {
	tests := []struct {
		name      string
		content   string
		wantMsg   string
		wantTitle string
		wantBody  string
	}{
		{"unterminated", "---\ntitle: x\n# body", "no closing", "body", "---\ntitle: x\n# body\n"},
		{"invalid yaml", "---\ntitle: [unclosed\n---\nbody", "line 2, column 8", "[unclosed", "body\n"},
		// Positions are lines of the file, counting the opening "---".
		{"invalid yaml on file line 3", "---\ntitle: ok\nowner: [unclosed\n---\nbody", "line 3, column 8: ", "ok", "body\n"},
		{"invalid yaml after a BOM and CRLF", "\ufeff---\r\ntitle: ok\r\n\r\nowner: [x\r\n---\r\n", "line 4, column 8: ", "ok", "\n"},
		{"duplicate key", "---\na: 1\ntitle: t\na: 2\n---\n", `line 4, column 1: mapping key "a" already defined at line 2, column 1`, "t", "\n"},
		{"not a mapping", "---\n- a\n- b\n---\nbody", "expected a mapping", "X", "body\n"},
		{"title is a list", "---\ntitle: [a, b]\n---\n# Heading\n", `"title" must be a single value`, "Heading", "# Heading\n"},
		{"bad date", "---\ntitle: T\nupdated: last tuesday\n---\n", `"updated" must be a date`, "T", "\n"},
		{"labels is a mapping", "---\nlabels: {a: b}\n---\n", `"labels" must be a list`, "X", "\n"},
		{"quotes doubled", "---\ntitle: \"\"Configuration Discovery: Rancher\"\"\n---\n\nText.\n", "line 2", "Configuration Discovery: Rancher", "Text.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := connectors.ParseMarkdown("x.md", []byte(tt.content))
			msg := doc.Normalized.FrontMatter
			if !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("front matter problem = %q, want it to contain %q", msg, tt.wantMsg)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("problem %q spans several lines", msg)
			}
			if doc.Title != tt.wantTitle || doc.Body != tt.wantBody {
				t.Errorf("title %q body %q, want %q %q", doc.Title, doc.Body, tt.wantTitle, tt.wantBody)
			}
		})
	}
}

func TestSentinelErrors(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"binary", connectors.ErrBinary, "connectors: binary file"},
		{"too large", connectors.ErrTooLarge, "connectors: file too large"},
		{"front matter", connectors.ErrFrontMatter, "connectors: malformed front matter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err.Error() != tt.want {
				t.Errorf("message = %q, want %q", tt.err, tt.want)
			}
			if wrapped := fmt.Errorf("%w: detail", tt.err); !errors.Is(wrapped, tt.err) {
				t.Errorf("errors.Is(%v, sentinel) = false", wrapped)
			}
		})
	}
}

func TestCheckText(t *testing.T) {
	tests := []struct {
		name    string
		content []byte
		max     int
		wantErr error
		wantMsg string
	}{
		{"utf-8 text", []byte("héllo wörld ✓"), 100, nil, ""},
		{"no limit", []byte(strings.Repeat("a", 5000)), 0, nil, ""},
		{"exactly at limit", []byte("abcd"), 4, nil, ""},
		{"over limit", []byte("abcde"), 4, connectors.ErrTooLarge, "5 bytes, over the limit of 4 bytes"},
		{"nul byte", []byte("PK\x03\x04\x00\x00"), 100, connectors.ErrBinary, "NUL byte at offset 4"},
		{"invalid utf-8", []byte("ok \xff\xfe"), 100, connectors.ErrBinary, "invalid UTF-8 at offset 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := connectors.CheckText(tt.content, tt.max)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("CheckText = %v, want %v", err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("CheckText = %q, want it to contain %q", err, tt.wantMsg)
			}
		})
	}
}

func TestExpandURL(t *testing.T) {
	vars := map[string]string{"repo": "handbook", "branch": "release/1.2", "path": "it/vpn guide.md"}
	tests := []struct {
		name string
		tmpl string
		want string
	}{
		{"github", "https://github.com/acme/{repo}/blob/{branch}/{path}", "https://github.com/acme/handbook/blob/release/1.2/it/vpn%20guide.md"},
		{"empty template", "", ""},
		{"unknown placeholder kept", "https://x/{space}/{path}", "https://x/{space}/it/vpn%20guide.md"},
		{"unclosed brace", "https://x/{path", "https://x/{path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := connectors.ExpandURL(tt.tmpl, vars); got != tt.want {
				t.Errorf("ExpandURL(%q) = %q, want %q", tt.tmpl, got, tt.want)
			}
		})
	}
}

func TestMatchPath(t *testing.T) {
	tests := []struct {
		name             string
		path             string
		include, exclude []string
		want             bool
	}{
		{"default markdown at root", "README.md", nil, nil, true},
		{"default nested rst", "a/b/c.rst", nil, nil, true},
		{"default skips go", "main.go", nil, nil, false},
		{"default skips images", "img/logo.png", nil, nil, false},
		{"include narrows", "blog/post.md", []string{"docs/**/*.md"}, nil, false},
		{"include matches", "docs/x/post.md", []string{"docs/**/*.md"}, nil, true},
		{"exclude wins", "drafts/wip.md", nil, []string{"drafts/**"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := connectors.MatchPath(tt.path, tt.include, tt.exclude); got != tt.want {
				t.Errorf("MatchPath(%q) = %v, want %v", tt.path, got, tt.want)
			}
		})
	}
	if err := connectors.ValidatePatterns([]string{"docs/[a-"}); err == nil {
		t.Error("ValidatePatterns accepted a broken pattern")
	}
	if err := connectors.ValidatePatterns([]string{"**/*.md", "{a,b}/*.txt"}); err != nil {
		t.Errorf("ValidatePatterns: %v", err)
	}
}
