package git_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"

	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/connectors/git"
)

// MustHistoryRepo builds a repository of files markdown pages edited over
// commits commits, a few pages per commit.
func MustHistoryRepo(tb testing.TB, files, commits int) *testRepo {
	tb.Helper()
	r := MustInitRepo(tb)
	page := func(i, rev int) string {
		return fmt.Sprintf("---\ntitle: Page %d\nlabels: [bench]\n---\n\n# Page %d\n\nRevision %d.\n%s", i, i, rev,
			strings.Repeat("Some handbook prose about policies and tools.\n", 40))
	}
	when := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	initial := map[string]string{}
	for i := range files {
		initial[fmt.Sprintf("section-%02d/page-%04d.md", i%20, i)] = page(i, 0)
	}
	r.commit("Init", when, change{write: initial})
	for c := 1; c < commits; c++ {
		edits := map[string]string{}
		for k := range 3 {
			i := (c*7 + k*131) % files
			edits[fmt.Sprintf("section-%02d/page-%04d.md", i%20, i)] = page(i, c)
		}
		r.commit(fmt.Sprintf("Author%d", c%5), when.Add(time.Duration(c)*time.Hour), change{write: edits})
	}
	return r
}

// BenchmarkFullListing measures a full sync (read every page and find the
// last commit of each) of 500 pages with 300 commits of history:
//
//	go test -run '^$' -bench . -benchmem ./connectors/git/
func BenchmarkFullListing(b *testing.B) {
	r := MustHistoryRepo(b, 500, 300)
	s, err := git.New("bench", git.Options{Path: r.dir, Logger: discard()})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		ch, err := connectorstest.Collect(context.Background(), s, "")
		if err != nil || len(ch.Docs) != 500 {
			b.Fatalf("List: %d docs, %v", len(ch.Docs), err)
		}
	}
}

// BenchmarkIncremental measures a sync that picks up the last 10 commits.
func BenchmarkIncremental(b *testing.B) {
	r := MustHistoryRepo(b, 500, 300)
	s, err := git.New("bench", git.Options{Path: r.dir, Logger: discard()})
	if err != nil {
		b.Fatal(err)
	}
	iter, err := r.repo.Log(&gogit.LogOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var tenth string
	for i := 0; i <= 10; i++ {
		c, err := iter.Next()
		if err != nil {
			b.Fatal(err)
		}
		tenth = c.Hash.String()
	}
	full, err := connectorstest.Collect(context.Background(), s, "")
	if err != nil {
		b.Fatal(err)
	}
	cursor := tenth + full.Cursor[strings.Index(full.Cursor, ":"):]
	b.ResetTimer()
	for b.Loop() {
		ch, err := connectorstest.Collect(context.Background(), s, cursor)
		if err != nil || ch.Complete || len(ch.Docs) == 0 {
			b.Fatalf("List: complete %v, %d docs, %v", ch.Complete, len(ch.Docs), err)
		}
	}
}
