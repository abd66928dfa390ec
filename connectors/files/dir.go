package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrSymlink is returned by Dir's Open for a file that is a symbolic link.
var ErrSymlink = errors.New("files: symbolic link")

// Dir returns a file system over the folder at path that never reaches
// outside it. Every call opens the folder as an os.Root, so a name with
// ".." or a symbolic link that leaves the folder fails; and Open refuses
// a file that is itself a symbolic link (ErrSymlink), so a document
// swapped for a link after a sync is never read or served in its place.
// The folder is opened per call: it may be created, or replaced, while
// docent runs.
func Dir(path string) fs.FS { return dirFS(path) }

type dirFS string

var (
	_ fs.ReadDirFS = dirFS("")
	_ fs.StatFS    = dirFS("")
)

func (d dirFS) root(op, name string) (*os.Root, error) {
	r, err := os.OpenRoot(string(d))
	if err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	return r, nil
}

// Open opens name, a regular file or a folder inside the root.
func (d dirFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	r, err := d.root("open", name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	before, err := r.Lstat(name)
	if err != nil {
		return nil, err
	}
	if before.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrSymlink}
	}
	f, err := r.Open(name)
	if err != nil {
		return nil, err
	}
	// The name may have been swapped for a link between Lstat and Open:
	// what was opened must be what was checked.
	opened, err := f.Stat()
	if err != nil || !os.SameFile(before, opened) {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w: replaced while opening", ErrSymlink)}
	}
	return f, nil
}

// ReadDir lists the folder name inside the root.
func (d dirFS) ReadDir(name string) ([]fs.DirEntry, error) {
	r, err := d.root("readdir", name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return fs.ReadDir(r.FS(), name)
}

// Stat describes name inside the root, without following a final link.
func (d dirFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	r, err := d.root("stat", name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Lstat(name)
}
