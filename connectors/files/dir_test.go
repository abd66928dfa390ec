package files_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/connectors/files"
)

// TestDirStaysInside: files.Dir reads regular files under its folder and
// refuses links (out of the folder or not), "..", and dot-paths are never
// listed by a source over it.
func TestDirStaysInside(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "docs")
	MustWriteTree(t, dir, map[string]string{
		"ok.md":           "# OK\n\nVisible.\n",
		"sub/deep.md":     "# Deep\n",
		".secret.md":      "# Secret\n\nTOKEN=s3cr3t\n",
		".hidden/x.md":    "# Hidden\n",
		"sub/.draft.md":   "# Draft\n",
		"sub/.cache/c.md": "# Cache\n",
	}, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	outside := filepath.Join(base, "passwd")
	if err := os.WriteFile(outside, []byte("root:x:0:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"escape.md":   outside,             // absolute, out of the folder
		"relative.md": "../passwd",         // relative, out of the folder
		"inside.md":   ".secret.md",        // inside, to a hidden file
		"linked":      filepath.Join(base), // a folder link out
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	fsys := files.Dir(dir)

	read := func(name string) (string, error) {
		f, err := fsys.Open(name)
		if err != nil {
			return "", err
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		return string(b), err
	}
	if got, err := read("sub/deep.md"); err != nil || got != "# Deep\n" {
		t.Errorf("regular file: %q, %v", got, err)
	}
	for _, name := range []string{"escape.md", "relative.md", "inside.md", "linked/passwd", "../passwd", "/etc/passwd"} {
		got, err := read(name)
		if err == nil || strings.Contains(got, "root:") {
			t.Errorf("Open(%q) = %q, %v; want an error", name, got, err)
		}
	}
	if _, err := read("inside.md"); !errors.Is(err, files.ErrSymlink) {
		t.Errorf("Open of a link inside the folder: %v, want ErrSymlink", err)
	}

	src := files.New("d", fsys, files.Options{Include: []string{"**/*.md", ".hidden/**"}})
	ch, err := connectorstest.Collect(context.Background(), src, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range ch.Docs {
		got = append(got, d.Path)
	}
	if strings.Join(slices.Sorted(slices.Values(got)), " ") != "ok.md sub/deep.md" {
		t.Errorf("listed %v (failed %v), want ok.md and sub/deep.md only", got, ch.Failed)
	}
	// The links that match the patterns are named, never read.
	var failed []string
	for _, f := range ch.Failed {
		if f.Retry || !strings.Contains(f.Err, connectors.ErrNotRegular.Error()+": symbolic link") {
			t.Errorf("%s: %+v, want a symbolic link not read, not retried", f.ID, f)
		}
		failed = append(failed, f.ID)
	}
	if got := strings.Join(slices.Sorted(slices.Values(failed)), " "); got != "d:escape.md d:inside.md d:relative.md" {
		t.Errorf("failed %q, want the three .md links", got)
	}
	// A folder that does not exist yet is an error when read, not when made.
	missing := files.Dir(filepath.Join(base, "later"))
	if _, err := fs.ReadDir(missing, "."); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing folder: %v, want fs.ErrNotExist", err)
	}
}
