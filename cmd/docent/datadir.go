package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
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
	"offline-embedder.bin", "docent.lock", "git", docLinkKeyFile, oneTimePasswordFile,
}

// docLinkKeyFile holds the key that signs /docs links in chat answers.
const docLinkKeyFile = "doc-links.key"

// docLinkKey returns the data dir's link-signing key, making one (32
// random bytes, 0600) the first time: kept across restarts, so that a
// link in a chat thread works for its whole life.
func docLinkKey(dir string) ([]byte, error) {
	p := filepath.Join(dir, docLinkKeyFile)
	key, err := os.ReadFile(p)
	if err == nil && len(key) >= 32 {
		return key, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("doc link key: %w", err)
	}
	key = make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand.Read never fails (Go 1.24+)
	if err := writePrivate(p, key); err != nil {
		return nil, fmt.Errorf("doc link key: %w", err)
	}
	return key, nil
}

// writePrivate replaces the file at p with data, readable by this user
// only (0600), through a temporary file renamed into place.
func writePrivate(p string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), p)
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
