package files_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/connectors/files"
)

// TestSpecialFilesNamedNotRead: a named pipe, a device and a symbolic
// link that match the patterns are never opened for reading (a pipe
// would block the sync forever) and each is named as failed, not
// retried; Dir's Open refuses them at once, even a pipe swapped in for
// a page after it was listed.
func TestSpecialFilesNamedNotRead(t *testing.T) {
	dir := t.TempDir()
	MustWriteTree(t, dir, map[string]string{"ok.md": "# OK\n\nFine.\n", "page.md": "# Page\n"},
		time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("ok.md", filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"d:pipe.md": "named pipe", "d:link.md": "symbolic link"}
	// A device needs privileges; it is checked where they are there.
	if err := syscall.Mknod(filepath.Join(dir, "null.md"), syscall.S_IFCHR|0o644, 1<<8|3); err == nil {
		want["d:null.md"] = "device"
	}
	fsys := files.Dir(dir)
	src := files.New("d", fsys, files.Options{})
	done := make(chan connectorstest.Collected, 1)
	go func() {
		ch, err := connectorstest.Collect(context.Background(), src, "")
		if err != nil {
			t.Error(err)
		}
		done <- ch
	}()
	var ch connectorstest.Collected
	select {
	case ch = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("listing a folder with a named pipe did not finish")
	}
	if len(ch.Docs) != 2 {
		t.Errorf("listed %d documents, want ok.md and page.md", len(ch.Docs))
	}
	got := map[string]string{}
	for _, f := range ch.Failed {
		got[f.ID] = f.Err
		if f.Retry {
			t.Errorf("%s is retried; a special file is skipped until it changes", f.ID)
		}
	}
	for id, kind := range want {
		if !strings.Contains(got[id], kind) {
			t.Errorf("%s: failed with %q, want it named as a %s", id, got[id], kind)
		}
	}
	if len(got) != len(want) {
		t.Errorf("failed %v, want %v", got, want)
	}

	// A page swapped for a pipe after the listing: Open answers at once.
	if err := os.Remove(filepath.Join(dir, "page.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "page.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	opened := make(chan error, 1)
	go func() {
		f, err := fsys.Open("page.md")
		if err == nil {
			f.Close()
		}
		opened <- err
	}()
	select {
	case err := <-opened:
		if !errors.Is(err, connectors.ErrNotRegular) {
			t.Errorf("Open of a pipe: %v, want ErrNotRegular", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Open of a named pipe blocked")
	}
	if _, err := fs.ReadFile(fsys, "ok.md"); err != nil {
		t.Errorf("a regular file: %v", err)
	}
}
