package files_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/connectors/files"
	"github.com/docent-hq/docent/examples/handbook"
)

// MustWriteTree writes files (slash path -> content) under dir, each with
// modification time mtime.
func MustWriteTree(tb testing.TB, dir string, tree map[string]string, mtime time.Time) {
	tb.Helper()
	for p, content := range tree {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
		if err := os.Chtimes(full, mtime, mtime); err != nil {
			tb.Fatal(err)
		}
	}
}

func byID(docs []docent.Document) map[string]docent.Document {
	m := make(map[string]docent.Document, len(docs))
	for _, d := range docs {
		m[d.ID] = d
	}
	return m
}

func TestListFolder(t *testing.T) {
	dir := t.TempDir()
	mtime := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	MustWriteTree(t, dir, map[string]string{
		"index.md":                  "# Welcome\n\nHi.\n",
		"it/vpn.md":                 "---\ntitle: VPN\nowner: IT\nupdated: 2026-01-20\nlabels: [it, vpn]\nspace: IT\n---\n\nConnect.\n",
		"people/on-call-guide.txt":  "Be nice.\n",
		"people/holidays.rst":       "Holidays\n========\n\nTwelve days.\n",
		"img/logo.png":              "\x89PNG\r\n\x1a\n\x00\x00",
		"drafts/wip.md":             "# WIP\n",
		".git/HEAD":                 "ref: refs/heads/main\n",
		".github/pr-template.md":    "# Hidden folders are skipped\n",
		"it/binary.md":              "# Bin\n\x00\x01",
		"it/big.md":                 "# Big\n" + strings.Repeat("x", 300),
		"it/broken-front-matter.md": "---\ntitle: [oops\n---\nbody\n",
	}, mtime)

	src := files.New("hb", os.DirFS(dir), files.Options{
		Exclude:  []string{"drafts/**"},
		WebURL:   "https://docs.example.com/{path}",
		MaxBytes: 200,
		Space:    "Handbook",
	})
	if src.Name() != "hb" {
		t.Errorf("Name = %q", src.Name())
	}
	ch, err := connectorstest.Collect(context.Background(), src, "")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if !ch.Complete {
		t.Error("Complete = false, want a complete listing")
	}
	want := map[string]docent.Document{
		"hb:index.md": {ID: "hb:index.md", Source: "hb", Path: "index.md", URL: "https://docs.example.com/index.md",
			Title: "Welcome", Space: "Handbook", UpdatedAt: mtime, Body: "# Welcome\n\nHi.\n"},
		"hb:it/vpn.md": {ID: "hb:it/vpn.md", Source: "hb", Path: "it/vpn.md", URL: "https://docs.example.com/it/vpn.md",
			Title: "VPN", Space: "IT", Labels: []string{"it", "vpn"}, Owner: "IT",
			UpdatedAt: time.Date(2026, 1, 20, 0, 0, 0, 0, time.UTC), Body: "Connect.\n"},
		"hb:people/on-call-guide.txt": {ID: "hb:people/on-call-guide.txt", Source: "hb", Path: "people/on-call-guide.txt",
			URL: "https://docs.example.com/people/on-call-guide.txt", Title: "On call guide", Space: "Handbook",
			UpdatedAt: mtime, Body: "Be nice.\n"},
		"hb:people/holidays.rst": {ID: "hb:people/holidays.rst", Source: "hb", Path: "people/holidays.rst",
			URL: "https://docs.example.com/people/holidays.rst", Title: "Holidays", Space: "Handbook",
			UpdatedAt: mtime, Body: "Holidays\n========\n\nTwelve days.\n"},
		// Front matter that is not valid loses nothing: the body is
		// indexed and the problem reported with the document.
		"hb:it/broken-front-matter.md": {ID: "hb:it/broken-front-matter.md", Source: "hb", Path: "it/broken-front-matter.md",
			URL: "https://docs.example.com/it/broken-front-matter.md", Title: "[oops", Space: "Handbook",
			UpdatedAt: mtime, Body: "body\n", Normalized: docent.Normalized{FrontMatter: "line 2, column 8: sequence end token ']' not found"}},
	}
	got := byID(ch.Docs)
	if len(got) != len(want) {
		t.Errorf("got %d docs %v, want %d", len(got), keys(got), len(want))
	}
	for id, w := range want {
		g, ok := got[id]
		if !ok {
			t.Errorf("missing %s", id)
			continue
		}
		g.UpdatedAt, w.UpdatedAt = g.UpdatedAt.UTC(), w.UpdatedAt.UTC()
		if !equalDoc(g, w) {
			t.Errorf("%s =\n%#v\nwant\n%#v", id, g, w)
		}
	}

	failed := map[string]string{}
	for _, f := range ch.Failed {
		failed[f.ID] = f.Err
	}
	wantFailed := map[string]string{
		"hb:it/binary.md": "binary file",
		"hb:it/big.md":    "over the limit of 200 bytes",
	}
	if len(failed) != len(wantFailed) {
		t.Errorf("Failed = %v, want %d entries", ch.Failed, len(wantFailed))
	}
	for id, msg := range wantFailed {
		if !strings.Contains(failed[id], msg) {
			t.Errorf("Failed[%s] = %q, want it to contain %q", id, failed[id], msg)
		}
	}

	t.Run("cursor is stable and follows content", func(t *testing.T) {
		again, err := connectorstest.Collect(context.Background(), src, ch.Cursor)
		if err != nil {
			t.Fatal(err)
		}
		if again.Cursor != ch.Cursor || again.Cursor == "" {
			t.Errorf("cursor changed without a change: %q then %q", ch.Cursor, again.Cursor)
		}
		MustWriteTree(t, dir, map[string]string{"index.md": "# Welcome\n\nHello.\n"}, mtime)
		after, err := connectorstest.Collect(context.Background(), src, ch.Cursor)
		if err != nil {
			t.Fatal(err)
		}
		if after.Cursor == ch.Cursor {
			t.Error("cursor did not change after an edit")
		}
		if b := byID(after.Docs)["hb:index.md"].Body; b != "# Welcome\n\nHello.\n" {
			t.Errorf("edited body = %q", b)
		}
	})
}

func keys(m map[string]docent.Document) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func equalDoc(a, b docent.Document) bool {
	return a.ID == b.ID && a.Source == b.Source && a.Path == b.Path && a.URL == b.URL &&
		a.Title == b.Title && a.Space == b.Space && strings.Join(a.Labels, ",") == strings.Join(b.Labels, ",") &&
		a.Owner == b.Owner && a.Author == b.Author && a.UpdatedAt.Equal(b.UpdatedAt) && a.Body == b.Body &&
		a.Normalized.FrontMatter == b.Normalized.FrontMatter && a.Normalized.Dropped == b.Normalized.Dropped
}

func TestListIncludeAndMapFS(t *testing.T) {
	fsys := fstest.MapFS{
		"docs/a.md":     {Data: []byte("# A\n")},
		"docs/b.txt":    {Data: []byte("b")},
		"docs/sub/c.md": {Data: []byte("# C\n")},
		"blog/d.md":     {Data: []byte("# D\n")},
	}
	tests := []struct {
		name             string
		include, exclude []string
		want             []string
	}{
		{"defaults", nil, nil, []string{"x:blog/d.md", "x:docs/a.md", "x:docs/b.txt", "x:docs/sub/c.md"}},
		{"include docs markdown", []string{"docs/**/*.md"}, nil, []string{"x:docs/a.md", "x:docs/sub/c.md"}},
		{"exclude sub", nil, []string{"**/sub/**"}, []string{"x:blog/d.md", "x:docs/a.md", "x:docs/b.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch, err := connectorstest.Collect(context.Background(), files.New("x", fsys, files.Options{Include: tt.include, Exclude: tt.exclude}), "")
			if err != nil {
				t.Fatal(err)
			}
			if got := keys(byID(ch.Docs)); strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("docs = %v, want %v", got, tt.want)
			}
			if len(ch.Failed) != 0 {
				t.Errorf("Failed = %v", ch.Failed)
			}
		})
	}
}

func TestListErrors(t *testing.T) {
	t.Run("invalid pattern", func(t *testing.T) {
		_, err := connectorstest.Collect(context.Background(), files.New("x", fstest.MapFS{}, files.Options{Include: []string{"[a-"}}), "")
		if err == nil || !strings.Contains(err.Error(), `files: source "x"`) {
			t.Errorf("err = %v, want an error naming the source", err)
		}
	})
	t.Run("missing folder", func(t *testing.T) {
		_, err := connectorstest.Collect(context.Background(), files.New("x", os.DirFS(filepath.Join(t.TempDir(), "nope")), files.Options{}), "")
		if err == nil || !errors.Is(err, os.ErrNotExist) {
			t.Errorf("err = %v, want not exist", err)
		}
	})
	t.Run("cancelled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := connectorstest.Collect(ctx, files.New("x", fstest.MapFS{"a.md": {Data: []byte("a")}}, files.Options{}), "")
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
}

// TestHandbook checks that the embedded example handbook lists cleanly:
// every page parses, has a title and an owner, and has an updated date.
func TestHandbook(t *testing.T) {
	ch, err := connectorstest.Collect(context.Background(), files.New("handbook", handbook.Source(), files.Options{WebURL: "handbook://{path}"}), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Failed) != 0 {
		t.Errorf("Failed = %v", ch.Failed)
	}
	docs := byID(ch.Docs)
	if _, ok := docs["handbook:index.md"]; !ok {
		t.Errorf("index.md missing from %v", keys(docs))
	}
	sections := map[string]bool{}
	for _, d := range ch.Docs {
		if d.Title == "" || d.Body == "" {
			t.Errorf("%s: empty title or body", d.ID)
		}
		if d.UpdatedAt.IsZero() {
			t.Errorf("%s: no updated date in front matter (embed.FS has no mod times)", d.ID)
		}
		if dir, _, ok := strings.Cut(d.Path, "/"); ok {
			sections[dir] = true
		}
	}
	if len(sections) == 0 {
		t.Errorf("no section pages in %v", keys(docs))
	}
	var _ connectors.Source = files.New("x", handbook.FS, files.Options{})
}
