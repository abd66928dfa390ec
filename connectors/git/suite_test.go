package git_test

import (
	"testing"
	"time"

	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/connectors/git"
)

// gitBackend is a repository the suite edits, one commit per change.
type gitBackend struct {
	repo    *testRepo
	src     *git.Source
	commits int
}

func (b *gitBackend) Source() connectors.Source { return b.src }

func (b *gitBackend) ID(key string) string { return b.src.Name() + ":" + key }

func (b *gitBackend) Apply(t testing.TB, c connectorstest.Change) {
	ch := change{write: map[string]string{}, remove: c.Remove, renames: c.Rename}
	for key, content := range c.Write {
		ch.write[key] = content
	}
	for _, key := range c.Break {
		ch.write[key] = "# Broken\n\x00\x01\x02 not text"
	}
	b.commits++
	b.repo.commit("Suite", t1.Add(time.Duration(b.commits)*time.Hour), ch)
}

// TestSourceSuite runs the Source contract suite over a repository read
// in place and over a clone of it fetched on every listing: listings from
// a commit cursor are incremental.
func TestSourceSuite(t *testing.T) {
	for _, remote := range []bool{false, true} {
		t.Run(map[bool]string{false: "local", true: "remote"}[remote], func(t *testing.T) {
			if remote {
				requireUploadPack(t)
			}
			connectorstest.RunSourceSuite(t, connectorstest.Harness{
				New: func(t *testing.T, name string) connectorstest.Backend {
					r := MustInitRepo(t)
					// The branch needs a commit before the source can read it.
					r.commit("Suite", t1, change{write: map[string]string{"README.txt": "Not a document: excluded.\n"}})
					opts := git.Options{Path: r.dir, Include: []string{"**/*.md"}, Logger: discard()}
					if remote {
						opts.Path, opts.URL, opts.DataDir = "", r.dir, t.TempDir()
					}
					src, err := git.New(name, opts)
					if err != nil {
						t.Fatal(err)
					}
					return &gitBackend{repo: r, src: src}
				},
				Capabilities: connectorstest.Capabilities{Incremental: true},
			})
		})
	}
}
