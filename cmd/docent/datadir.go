package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/docent-hq/docent/internal/private"
)

// dataFiles are the entries docent keeps in a data dir; prepareDataDir
// makes those an older docent left readable by others private.
var dataFiles = []string{
	"docent.db", "docent.db-wal", "docent.db-shm",
	"index.db", "index.db-wal", "index.db-shm",
	"offline-embedder.bin", "docent.lock", "git",
}

// prepareDataDir creates dir readable by this user only and makes docent's
// existing files in it so. It also sets the process umask to 077, so that
// every file docent creates from now on — SQLite databases and their WAL
// files, git clones, model files — is private too: the data dir holds the
// questions people asked and clones of private repositories. Other
// entries of dir are left alone (a data dir may be shared).
func prepareDataDir(dir string) error {
	syscall.Umask(0o077)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	for _, name := range dataFiles {
		if err := private.Tree(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("data dir: %w", err)
		}
	}
	return nil
}
