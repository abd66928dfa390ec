package git_test

import (
	"strings"
	"testing"

	"github.com/docent-hq/docent/connectors/git"
)

// TestHiddenPathsNeverListed: dot-files and files in dot-folders are not
// documents, even when an include pattern names them; a document moved
// into a dot-folder is deleted.
func TestHiddenPathsNeverListed(t *testing.T) {
	repo := MustInitRepo(t)
	repo.commit("Alice", t1, change{write: map[string]string{
		"docs/ok.md":        "# OK\n\nListed.\n",
		"docs/moved.md":     "# Moved\n\nListed until it moves.\n",
		".secret.md":        "# Secret\n\nTOKEN=s3cr3t\n",
		".hidden/x.md":      "# Hidden\n\nnot documentation\n",
		"docs/.draft.md":    "# Draft\n",
		".github/readme.md": "# CI\n",
	}})
	s, err := git.New("g", git.Options{Path: repo.dir, Include: []string{"**/*.md", ".hidden/**"}, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	first := mustList(t, s, "")
	if got := strings.Join(sorted(ids(first.Docs)), " "); got != "g:docs/moved.md g:docs/ok.md" || len(first.Failed) != 0 {
		t.Fatalf("full listing: docs %s, failed %v; want only the two visible documents", got, first.Failed)
	}
	repo.commit("Bob", t2, change{renames: map[string]string{"docs/moved.md": ".attic/moved.md"},
		write: map[string]string{".hidden/y.md": "# Also hidden\n"}})
	ch := mustList(t, s, first.Cursor)
	if ch.Complete || len(ch.Docs) != 0 || strings.Join(ch.Deleted, " ") != "g:docs/moved.md" {
		t.Errorf("after moving into a dot-folder: Complete %v, docs %v, deleted %v; want only the deletion",
			ch.Complete, ids(ch.Docs), ch.Deleted)
	}
}
