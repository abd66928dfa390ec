// Package privatetest checks, in tests, that a folder docent wrote is
// private and holds no secret.
package privatetest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// MustBePrivate fails tb for every folder under dir (dir included) that is
// not 0700, every file that its group or others may use, and every file
// that holds one of secrets. It returns how many files it read.
func MustBePrivate(tb testing.TB, dir string, secrets ...string) int {
	tb.Helper()
	files := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		perm := info.Mode().Perm()
		if d.IsDir() {
			if perm != 0o700 {
				tb.Errorf("%s: mode %v, want 0700", p, perm)
			}
			return nil
		}
		files++
		if perm&0o077 != 0 {
			tb.Errorf("%s: mode %v, want 0600 or stricter", p, perm)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				tb.Errorf("%s holds a secret", p)
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return files
}
