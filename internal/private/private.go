// Package private keeps docent's files readable by their owner only.
package private

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Tree removes the group and other permission bits of path and of
// everything under it, without following symbolic links. A path that does
// not exist is not an error.
func Tree(path string) error {
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if perm := info.Mode().Perm(); perm&0o077 != 0 {
			return os.Chmod(p, perm&^0o077)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("private: %w", err)
	}
	return nil
}
