package files

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/docent-hq/docent/connectors"
)

// ErrSymlink is returned by Dir's Open for a file that is a symbolic
// link; it wraps connectors.ErrNotRegular.
var ErrSymlink = fmt.Errorf("files: symbolic link: %w", connectors.ErrNotRegular)

// Dir returns a file system over the folder at path that never reaches
// outside it. Every call opens the folder as an os.Root, so a name with
// ".." or a symbolic link that leaves the folder fails; and Open refuses
// a file that is itself a symbolic link (ErrSymlink), so a document
// swapped for a link after a sync is never read or served in its place.
// Open opens without blocking and then checks the opened file's own
// mode: a named pipe, a device or a socket is refused (an error wrapping
// connectors.ErrNotRegular) at once, where a plain open of a pipe would
// wait forever for a writer.
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
	if kind := NotRegular(before.Mode()); kind != "" {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w: %s", connectors.ErrNotRegular, kind)}
	}
	// O_NONBLOCK: should the name have become a pipe since Lstat, the
	// open returns at once instead of waiting for a writer.
	f, err := r.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	// The name may have been swapped (for a link, a pipe) between Lstat
	// and Open: what was opened must be what was checked.
	opened, err := f.Stat()
	if err != nil || !os.SameFile(before, opened) || opened.Mode().Type() != before.Mode().Type() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w: replaced while opening", ErrSymlink)}
	}
	return f, nil
}

// NotRegular names what a file mode is when it is neither a regular file
// nor a folder ("symbolic link", "named pipe", "device", "socket", ...),
// and is "" for those two.
func NotRegular(m fs.FileMode) string {
	switch {
	case m.IsRegular() || m.IsDir():
		return ""
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		return "device"
	}
	return "not a regular file (" + m.Type().String() + ")"
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
