package private_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/docent-hq/docent/internal/private"
)

func TestTree(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "clone")
	outside := filepath.Join(dir, "outside")
	for _, p := range []string{filepath.Join(root, "objects", "pack"), outside} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]os.FileMode{
		filepath.Join(root, "config"):                    0o644,
		filepath.Join(root, "objects", "pack", "x.pack"): 0o444,
		filepath.Join(root, "hooks"):                     0o755,
		filepath.Join(outside, "shared.txt"):             0o644,
	}
	for p, mode := range files {
		if err := os.WriteFile(p, nil, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := private.Tree(root); err != nil {
		t.Fatal(err)
	}
	want := map[string]os.FileMode{
		root:                                   0o700,
		filepath.Join(root, "objects", "pack"): 0o700,
		filepath.Join(root, "config"):          0o600,
		filepath.Join(root, "objects", "pack", "x.pack"): 0o400,
		filepath.Join(root, "hooks"):                     0o700,
		outside:                                          0o755, // behind a link: not followed
		filepath.Join(outside, "shared.txt"):             0o644,
	}
	for p, mode := range want {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, want %v", p, st.Mode().Perm(), mode)
		}
	}
	if err := private.Tree(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("missing path: %v", err)
	}
}
