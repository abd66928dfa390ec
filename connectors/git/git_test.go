package git_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/connectors/git"
)

// testRepo is a real repository with a worktree in a temp dir.
type testRepo struct {
	tb   testing.TB
	dir  string
	repo *gogit.Repository
	wt   *gogit.Worktree
}

// MustInitRepo creates an empty repository whose HEAD is "main".
func MustInitRepo(tb testing.TB) *testRepo {
	tb.Helper()
	dir := tb.TempDir()
	repo, err := gogit.PlainInitWithOptions(dir, &gogit.PlainInitOptions{
		InitOptions: gogit.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	if err != nil {
		tb.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		tb.Fatal(err)
	}
	return &testRepo{tb: tb, dir: dir, repo: repo, wt: wt}
}

// change is one commit's edits: files to write (path -> content), paths to
// delete and renames (old -> new).
type change struct {
	write   map[string]string
	remove  []string
	renames map[string]string
}

// commit applies ch and commits it as author at when, returning the hash.
func (r *testRepo) commit(author string, when time.Time, ch change) plumbing.Hash {
	r.tb.Helper()
	for from, to := range ch.renames {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(r.dir, to)), 0o755); err != nil {
			r.tb.Fatal(err)
		}
		if _, err := r.wt.Move(from, to); err != nil {
			r.tb.Fatalf("move %s: %v", from, err)
		}
	}
	for p, content := range ch.write {
		full := filepath.Join(r.dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			r.tb.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			r.tb.Fatal(err)
		}
		if _, err := r.wt.Add(p); err != nil {
			r.tb.Fatalf("add %s: %v", p, err)
		}
	}
	for _, p := range ch.remove {
		if _, err := r.wt.Remove(p); err != nil {
			r.tb.Fatalf("remove %s: %v", p, err)
		}
	}
	h, err := r.wt.Commit("change by "+author, &gogit.CommitOptions{
		Author: &object.Signature{Name: author, Email: strings.ToLower(author) + "@example.com", When: when},
	})
	if err != nil {
		r.tb.Fatalf("commit: %v", err)
	}
	return h
}

var (
	t1 = time.Date(2024, 1, 10, 9, 0, 0, 0, time.UTC)
	t2 = time.Date(2024, 2, 20, 14, 30, 0, 0, time.UTC)
	t3 = time.Date(2024, 3, 5, 8, 15, 0, 0, time.UTC)
)

// moveBody is long enough that a small edit keeps it a rename.
var moveBody = "# Moving house\n\n" + strings.Repeat("Pack the boxes, label them, and book the van early.\n", 20)

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func mustList(tb testing.TB, s *git.Source, cursor string) connectorstest.Collected {
	tb.Helper()
	ch, err := connectorstest.Collect(context.Background(), s, cursor)
	if err != nil {
		tb.Fatalf("List(%q): %v", cursor, err)
	}
	return ch
}

func byID(docs []docent.Document) map[string]docent.Document {
	m := make(map[string]docent.Document, len(docs))
	for _, d := range docs {
		m[d.ID] = d
	}
	return m
}

func ids(docs []docent.Document) []string {
	out := make([]string, 0, len(docs))
	for _, d := range docs {
		out = append(out, d.ID)
	}
	sort.Strings(out)
	return out
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

func failedIDs(f []docent.DocError) []string {
	var out []string
	for _, e := range f {
		out = append(out, e.ID)
	}
	sort.Strings(out)
	return out
}

func equalDoc(a, b docent.Document) bool {
	return a.ID == b.ID && a.Source == b.Source && a.Path == b.Path && a.URL == b.URL &&
		a.Title == b.Title && a.Space == b.Space && strings.Join(a.Labels, ",") == strings.Join(b.Labels, ",") &&
		a.Owner == b.Owner && a.Author == b.Author && a.UpdatedAt.Equal(b.UpdatedAt) && a.Body == b.Body
}

func TestFullThenIncremental(t *testing.T) {
	r := MustInitRepo(t)
	c1 := r.commit("Alice", t1, change{write: map[string]string{
		"README.md": "# Handbook\n\nStart here.\n",
		"docs/guide.md": "---\ntitle: The Guide\nowner: Docs team\nupdated: 2020-01-01\nlabels: [guide, intro]\nspace: Eng\n---\n\n" +
			"Read me.\n",
		"docs/on-call-guide.md": "No heading here.\n",
		"docs/old.md":           "# Old\n",
		"docs/move-me.md":       moveBody,
		"main.go":               "package main\n",
	}})
	src, err := git.New("kb", git.Options{
		Path:   r.dir,
		WebURL: "https://github.com/acme/{repo}/blob/{branch}/{path}",
		Logger: discard(),
	})
	if err != nil {
		t.Fatal(err)
	}

	first := mustList(t, src, "")
	if !first.Complete {
		t.Error("first sync is not a full listing")
	}
	if !strings.HasPrefix(first.Cursor, c1.String()+":") {
		t.Errorf("cursor = %q, want it to start with %s", first.Cursor, c1)
	}
	repoName := filepath.Base(r.dir)
	want := map[string]docent.Document{
		"kb:README.md": {ID: "kb:README.md", Source: "kb", Path: "README.md", Title: "Handbook",
			URL: "https://github.com/acme/" + repoName + "/blob/main/README.md", Space: repoName,
			Author: "Alice", UpdatedAt: t1, Body: "# Handbook\n\nStart here.\n"},
		"kb:docs/guide.md": {ID: "kb:docs/guide.md", Source: "kb", Path: "docs/guide.md", Title: "The Guide",
			URL: "https://github.com/acme/" + repoName + "/blob/main/docs/guide.md", Space: "Eng",
			Labels: []string{"guide", "intro"}, Owner: "Docs team",
			Author: "Alice", UpdatedAt: t1, Body: "Read me.\n"},
		"kb:docs/on-call-guide.md": {ID: "kb:docs/on-call-guide.md", Source: "kb", Path: "docs/on-call-guide.md",
			Title: "On call guide", URL: "https://github.com/acme/" + repoName + "/blob/main/docs/on-call-guide.md",
			Space: repoName, Author: "Alice", UpdatedAt: t1, Body: "No heading here.\n"},
	}
	got := byID(first.Docs)
	if g := ids(first.Docs); strings.Join(g, " ") != "kb:README.md kb:docs/guide.md kb:docs/move-me.md kb:docs/old.md kb:docs/on-call-guide.md" {
		t.Errorf("first sync docs = %v", g)
	}
	for id, w := range want {
		if !equalDoc(got[id], w) {
			t.Errorf("%s =\n%#v\nwant\n%#v", id, got[id], w)
		}
	}
	if len(first.Failed) != 0 || len(first.Deleted) != 0 {
		t.Errorf("first sync Failed = %v, Deleted = %v", first.Failed, first.Deleted)
	}

	// Second commit: modify, add, rename (with a small edit), delete.
	c2 := r.commit("Bob", t2, change{
		write: map[string]string{
			"docs/guide.md": "---\ntitle: The Guide, v2\n---\nRead me again.\n",
			"docs/new.md":   "# Brand new\n",
			"docs/moved.md": moveBody + "One more line.\n",
		},
		remove:  []string{"docs/old.md"},
		renames: map[string]string{"docs/move-me.md": "docs/moved.md"},
	})
	// Third commit touches only the README, so attribution differs per file.
	c3 := r.commit("Carol", t3, change{write: map[string]string{"README.md": "# Handbook\n\nStart here, please.\n"}})

	inc := mustList(t, src, first.Cursor)
	if inc.Complete {
		t.Error("second sync is a full listing, want incremental")
	}
	if !strings.HasPrefix(inc.Cursor, c3.String()+":") {
		t.Errorf("cursor = %q, want it to start with %s", inc.Cursor, c3)
	}
	if g := ids(inc.Docs); strings.Join(g, " ") != "kb:README.md kb:docs/guide.md kb:docs/moved.md kb:docs/new.md" {
		t.Errorf("incremental docs = %v", g)
	}
	if g := sorted(inc.Deleted); strings.Join(g, " ") != "kb:docs/move-me.md kb:docs/old.md" {
		t.Errorf("incremental deleted = %v", g)
	}
	incDocs := byID(inc.Docs)
	attribution := map[string]struct {
		author string
		when   time.Time
		title  string
	}{
		"kb:README.md":             {"Carol", t3, "Handbook"},
		"kb:docs/guide.md":         {"Bob", t2, "The Guide, v2"},
		"kb:docs/moved.md":         {"Bob", t2, "Moving house"},
		"kb:docs/new.md":           {"Bob", t2, "Brand new"},
		"kb:docs/on-call-guide.md": {"Alice", t1, "On call guide"},
	}

	full := mustList(t, src, "")
	if !full.Complete || full.Cursor != inc.Cursor {
		t.Errorf("full listing: Complete = %v, cursor %q, want %q", full.Complete, full.Cursor, inc.Cursor)
	}
	fullDocs := byID(full.Docs)
	if g := ids(full.Docs); strings.Join(g, " ") != "kb:README.md kb:docs/guide.md kb:docs/moved.md kb:docs/new.md kb:docs/on-call-guide.md" {
		t.Errorf("full listing at head = %v", g)
	}
	for id, w := range attribution {
		d := fullDocs[id]
		if d.Author != w.author || !d.UpdatedAt.Equal(w.when) || d.Title != w.title {
			t.Errorf("%s: author %q at %v, title %q; want %q at %v, %q", id, d.Author, d.UpdatedAt, d.Title, w.author, w.when, w.title)
		}
	}
	for id, d := range incDocs {
		if !equalDoc(d, fullDocs[id]) {
			t.Errorf("%s differs between incremental and full listing:\n%#v\n%#v", id, d, fullDocs[id])
		}
	}

	t.Run("cursors", func(t *testing.T) {
		other, err := git.New("kb", git.Options{Path: r.dir, Exclude: []string{"README.md"}, Logger: discard()})
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name      string
			src       *git.Source
			cursor    string
			wantFull  bool
			wantDocs  int
			wantFirst string
		}{
			{"up to date", src, inc.Cursor, false, 0, ""},
			{"garbage", src, "not-a-cursor", true, 5, ""},
			{"bare hash without options", src, c1.String(), true, 5, ""},
			{"unknown commit", src, strings.Repeat("ab", 20) + ":" + strings.SplitN(inc.Cursor, ":", 2)[1], true, 5, ""},
			{"from the middle", src, c2.String() + ":" + strings.SplitN(inc.Cursor, ":", 2)[1], false, 1, "kb:README.md"},
			{"options changed", other, inc.Cursor, true, 4, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ch := mustList(t, tt.src, tt.cursor)
				if ch.Complete != tt.wantFull || len(ch.Docs) != tt.wantDocs {
					t.Errorf("Complete = %v with %d docs %v, want %v with %d", ch.Complete, len(ch.Docs), ids(ch.Docs), tt.wantFull, tt.wantDocs)
				}
				if tt.wantFirst != "" && (len(ch.Docs) == 0 || ch.Docs[0].ID != tt.wantFirst) {
					t.Errorf("docs = %v, want %s", ids(ch.Docs), tt.wantFirst)
				}
				if !strings.HasPrefix(ch.Cursor, c3.String()+":") {
					t.Errorf("cursor = %q", ch.Cursor)
				}
			})
		}
	})

	t.Run("reads the commit, not the worktree", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(r.dir, "README.md"), []byte("# Uncommitted\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(r.dir, "docs", "untracked.md"), []byte("# Untracked\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		// Opened from a folder inside the repository.
		s, err := git.New("kb", git.Options{Path: filepath.Join(r.dir, "docs"), Logger: discard()})
		if err != nil {
			t.Fatal(err)
		}
		ch := mustList(t, s, "")
		d := byID(ch.Docs)
		if d["kb:README.md"].Title != "Handbook" {
			t.Errorf("README title = %q, want the committed one", d["kb:README.md"].Title)
		}
		if _, ok := d["kb:docs/untracked.md"]; ok {
			t.Error("untracked file listed")
		}
	})
}

func TestSubdirIncludeExclude(t *testing.T) {
	r := MustInitRepo(t)
	r.commit("Alice", t1, change{write: map[string]string{
		"README.md":            "# Root readme\n",
		"docs/a.md":            "# A\n",
		"docs/notes.txt":       "notes\n",
		"docs/drafts/wip.md":   "# WIP\n",
		"docs/api/ref.rst":     "Ref\n===\n",
		"docs/img/diagram.svg": "<svg/>",
		"src/main.go":          "package main\n",
	}})
	tests := []struct {
		name string
		opts git.Options
		want string
		url  string
	}{
		{"defaults", git.Options{}, "x:README.md x:docs/a.md x:docs/api/ref.rst x:docs/drafts/wip.md x:docs/notes.txt", ""},
		{"subdir", git.Options{Subdir: "docs/", WebURL: "https://git.example/{repo}/{branch}/{path}"},
			"x:a.md x:api/ref.rst x:drafts/wip.md x:notes.txt", "https://git.example/%s/main/docs/a.md"},
		{"subdir with include and exclude", git.Options{Subdir: "docs", Include: []string{"**/*.md"}, Exclude: []string{"drafts/**"}},
			"x:a.md", ""},
		{"explicit branch", git.Options{Branch: "main", Include: []string{"*.md"}}, "x:README.md", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Path = r.dir
			tt.opts.Logger = discard()
			s, err := git.New("x", tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			ch := mustList(t, s, "")
			if g := strings.Join(ids(ch.Docs), " "); g != tt.want {
				t.Errorf("docs = %s, want %s", g, tt.want)
			}
			if tt.url != "" {
				want := strings.ReplaceAll(tt.url, "%s", filepath.Base(r.dir))
				if u := byID(ch.Docs)["x:a.md"].URL; u != want {
					t.Errorf("URL = %q, want %q", u, want)
				}
			}
		})
	}

	t.Run("missing subdir is an error", func(t *testing.T) {
		s, err := git.New("x", git.Options{Path: r.dir, Subdir: "nope", Logger: discard()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := connectorstest.Collect(context.Background(), s, ""); err == nil || !strings.Contains(err.Error(), `folder "nope" not found`) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("missing branch is an error", func(t *testing.T) {
		s, err := git.New("x", git.Options{Path: r.dir, Branch: "nope", Logger: discard()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := connectorstest.Collect(context.Background(), s, ""); err == nil || !strings.Contains(err.Error(), `source "x"`) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("subdir deleted later gives deletions", func(t *testing.T) {
		s, err := git.New("x", git.Options{Path: r.dir, Subdir: "docs", Include: []string{"*.md"}, Logger: discard()})
		if err != nil {
			t.Fatal(err)
		}
		first := mustList(t, s, "")
		r.commit("Bob", t2, change{remove: []string{"docs/a.md"}, write: map[string]string{"docs/b.md": "# B\n", "README.md": "# Changed\n"}})
		ch := mustList(t, s, first.Cursor)
		if ch.Complete || strings.Join(ids(ch.Docs), " ") != "x:b.md" || strings.Join(ch.Deleted, " ") != "x:a.md" {
			t.Errorf("Complete %v, docs %v, deleted %v; want x:b.md added and x:a.md deleted", ch.Complete, ids(ch.Docs), ch.Deleted)
		}
	})
}

func TestFailedFiles(t *testing.T) {
	r := MustInitRepo(t)
	r.commit("Alice", t1, change{write: map[string]string{
		"ok.md":        "# OK\n",
		"binary.md":    "# looks like markdown\n\x00\x01\x02",
		"latin1.txt":   "caf\xe9\n",
		"big.md":       "# Big\n" + strings.Repeat("words ", 100),
		"bad-front.md": "---\ntitle: [unclosed\n---\nbody\n",
	}})
	s, err := git.New("x", git.Options{Path: r.dir, MaxBytes: 256, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	first := mustList(t, s, "")
	// Front matter that is not valid is reported with the document, whose
	// body is indexed all the same.
	if g := strings.Join(ids(first.Docs), " "); g != "x:bad-front.md x:ok.md" {
		t.Errorf("docs = %s, want x:bad-front.md x:ok.md", g)
	}
	for _, d := range first.Docs {
		if d.ID == "x:bad-front.md" && (d.Body != "body\n" || !strings.Contains(d.Normalized.FrontMatter, "line 2")) {
			t.Errorf("bad-front.md: body %q, front matter problem %q", d.Body, d.Normalized.FrontMatter)
		}
	}
	wantMsg := map[string]string{
		"x:binary.md":  "binary file",
		"x:latin1.txt": "invalid UTF-8",
		"x:big.md":     "over the limit of 256 bytes",
	}
	if g := failedIDs(first.Failed); len(g) != len(wantMsg) {
		t.Errorf("failed = %v", g)
	}
	for _, f := range first.Failed {
		if !strings.Contains(f.Err, wantMsg[f.ID]) {
			t.Errorf("%s: error %q, want it to contain %q", f.ID, f.Err, wantMsg[f.ID])
		}
	}

	// Fixing a file in a later commit brings it through incrementally.
	r.commit("Bob", t2, change{write: map[string]string{"bad-front.md": "---\ntitle: Fixed\n---\nbody\n"}})
	ch := mustList(t, s, first.Cursor)
	if d := byID(ch.Docs)["x:bad-front.md"]; d.Title != "Fixed" || d.Author != "Bob" || len(ch.Failed) != 0 {
		t.Errorf("after fix: docs %v failed %v", ids(ch.Docs), ch.Failed)
	}
}

func TestMergeAttribution(t *testing.T) {
	r := MustInitRepo(t)
	base := r.commit("Alice", t1, change{write: map[string]string{"x.md": "# X\n", "y.md": "# Y\n", "z.md": "# Z\n"}})
	side := r.commit("Sam", t2, change{write: map[string]string{"x.md": "# X\n\nfrom the side branch\n"}})
	if err := r.wt.Reset(&gogit.ResetOptions{Commit: base, Mode: gogit.HardReset}); err != nil {
		t.Fatal(err)
	}
	main := r.commit("Mia", t3, change{write: map[string]string{"y.md": "# Y\n\non main\n"}})
	// The merge keeps both sides' changes and resolves z.md by hand.
	for p, c := range map[string]string{"x.md": "# X\n\nfrom the side branch\n", "z.md": "# Z\n\nresolved in the merge\n"} {
		if err := os.WriteFile(filepath.Join(r.dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := r.wt.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	t4 := t3.Add(time.Hour)
	if _, err := r.wt.Commit("merge", &gogit.CommitOptions{
		Author:  &object.Signature{Name: "Max", When: t4},
		Parents: []plumbing.Hash{main, side},
	}); err != nil {
		t.Fatal(err)
	}
	s, err := git.New("m", git.Options{Path: r.dir, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	docs := byID(mustList(t, s, "").Docs)
	for id, w := range map[string]struct {
		author string
		when   time.Time
	}{
		"m:x.md": {"Sam", t2},
		"m:y.md": {"Mia", t3},
		"m:z.md": {"Max", t4},
	} {
		if d := docs[id]; d.Author != w.author || !d.UpdatedAt.Equal(w.when) {
			t.Errorf("%s: %q at %v, want %q at %v", id, d.Author, d.UpdatedAt, w.author, w.when)
		}
	}
}

func TestNewValidates(t *testing.T) {
	tests := []struct {
		name string
		src  string
		opts git.Options
		want string
	}{
		{"no name", "", git.Options{Path: "."}, "name is empty"},
		{"neither url nor path", "x", git.Options{}, "set url or path"},
		{"both", "x", git.Options{URL: "https://a/b.git", Path: ".", DataDir: "d"}, "not both"},
		{"url without data dir", "x", git.Options{URL: "https://a/b.git"}, "data directory"},
		{"bad include", "x", git.Options{Path: ".", Include: []string{"[a-"}}, "invalid glob"},
		{"bad exclude", "x", git.Options{Path: ".", Exclude: []string{"a/[b-"}}, "invalid glob"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := git.New(tt.src, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestRepoName(t *testing.T) {
	for in, want := range map[string]string{
		"https://github.com/acme/handbook.git": "handbook",
		"https://github.com/acme/handbook":     "handbook",
		"git@github.com:acme/docs.git":         "docs",
		"/srv/repos/wiki/":                     "wiki",
		"/srv/repos/wiki/.git":                 "wiki",
		"file:///tmp/x/bare.git":               "bare",
	} {
		if got := git.RepoName(in); got != want {
			t.Errorf("RepoName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRelativePath(t *testing.T) {
	r := MustInitRepo(t)
	r.commit("Alice", t1, change{write: map[string]string{"a.md": "# A\n"}})
	t.Chdir(r.dir)
	s, err := git.New("x", git.Options{Path: ".", WebURL: "{repo}/{path}", Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	ch := mustList(t, s, "")
	if want := filepath.Base(r.dir); len(ch.Docs) != 1 || ch.Docs[0].Space != want || ch.Docs[0].URL != want+"/a.md" {
		t.Errorf("docs = %+v, want space and repo %q", ch.Docs, want)
	}
}

func TestCancelled(t *testing.T) {
	r := MustInitRepo(t)
	r.commit("Alice", t1, change{write: map[string]string{"a.md": "# A\n"}})
	s, err := git.New("x", git.Options{Path: r.dir, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := connectorstest.Collect(ctx, s, ""); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// A source built without a Logger logs nothing, not even to slog.Default.
// The test swaps the process-wide default logger, so it must not run in
// parallel with others.
func TestNilLoggerDiscards(t *testing.T) {
	r := MustInitRepo(t)
	r.commit("Alice", t1, change{write: map[string]string{"a.md": "# A\n"}})
	var global bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&global, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })

	s, err := git.New("x", git.Options{Path: r.dir})
	if err != nil {
		t.Fatal(err)
	}
	if ch := mustList(t, s, ""); len(ch.Docs) != 1 {
		t.Fatalf("List listed %d documents, want 1", len(ch.Docs))
	}
	if global.Len() != 0 {
		t.Errorf("source without a Logger wrote to slog.Default:\n%s", global.String())
	}
}

// TestSymlinksNamed: a symbolic link in the repository that matches the
// patterns is never read and is named as failed (not retried), in a full
// listing and in an incremental one.
func TestSymlinksNamed(t *testing.T) {
	r := MustInitRepo(t)
	r.commit("Alice", t1, change{write: map[string]string{"ok.md": "# OK\n\nFine.\n"}})
	if err := os.Symlink("/etc/passwd", filepath.Join(r.dir, "passwd.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.wt.Add("passwd.md"); err != nil {
		t.Fatal(err)
	}
	r.commit("Alice", t2, change{})
	s, err := git.New("x", git.Options{Path: r.dir, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, ch connectorstest.Collected) {
		t.Helper()
		if len(ch.Failed) != 1 || ch.Failed[0].ID != "x:passwd.md" || ch.Failed[0].Retry ||
			!strings.Contains(ch.Failed[0].Err, "not a regular file: symbolic link") {
			t.Errorf("%s: failed %+v, want the link named, not retried", name, ch.Failed)
		}
		for _, d := range ch.Docs {
			if strings.Contains(d.Body, "root:") {
				t.Errorf("%s: the link's target was read", name)
			}
		}
	}
	first := mustList(t, s, "")
	check("full", first)
	if err := os.Remove(filepath.Join(r.dir, "passwd.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("ok.md", filepath.Join(r.dir, "passwd.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.wt.Add("passwd.md"); err != nil {
		t.Fatal(err)
	}
	r.commit("Bob", t3, change{})
	check("incremental", mustList(t, s, first.Cursor))
}
