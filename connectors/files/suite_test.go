package files_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/connectorstest"
	"github.com/docent-hq/docent/connectors/files"
)

// dirBackend is a folder the suite edits. Its file system can refuse to
// open chosen files, as a network share or a permission change would.
type dirBackend struct {
	dir   string
	src   *files.Source
	edits int

	mu         sync.Mutex
	unreadable map[string]bool
}

var _ connectorstest.Unreadable = (*dirBackend)(nil)

func (b *dirBackend) Source() connectors.Source { return b.src }

func (b *dirBackend) ID(key string) string { return b.src.Name() + ":" + key }

func (b *dirBackend) Apply(t testing.TB, c connectorstest.Change) {
	b.edits++
	mtime := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(b.edits) * time.Hour)
	for from, to := range c.Rename {
		full := filepath.Join(b.dir, filepath.FromSlash(to))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(b.dir, filepath.FromSlash(from)), full); err != nil {
			t.Fatal(err)
		}
	}
	for _, key := range c.Remove {
		if err := os.Remove(filepath.Join(b.dir, filepath.FromSlash(key))); err != nil {
			t.Fatal(err)
		}
	}
	tree := map[string]string{}
	for key, content := range c.Write {
		tree[key] = content
	}
	for _, key := range c.Break {
		tree[key] = "# Broken\n\x00\x01\x02 not text"
	}
	MustWriteTree(t, b.dir, tree, mtime)
}

func (b *dirBackend) SetUnreadable(t testing.TB, key string, on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.unreadable[key] = on
}

// Open refuses the files marked unreadable.
func (b *dirBackend) Open(name string) (fs.File, error) {
	b.mu.Lock()
	refuse := b.unreadable[name]
	b.mu.Unlock()
	if refuse {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w: the share did not answer", os.ErrDeadlineExceeded)}
	}
	return os.DirFS(b.dir).Open(name)
}

// TestSourceSuite runs the Source contract suite over a folder: every
// listing is complete.
func TestSourceSuite(t *testing.T) {
	connectorstest.RunSourceSuite(t, connectorstest.Harness{
		New: func(t *testing.T, name string) connectorstest.Backend {
			b := &dirBackend{dir: t.TempDir(), unreadable: map[string]bool{}}
			b.src = files.New(name, b, files.Options{})
			return b
		},
		Capabilities: connectorstest.Capabilities{ListsAllIDs: true, TransientFailures: true},
	})
}
