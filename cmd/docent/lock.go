package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// errDataDirBusy means another docent process writes to the data dir.
var errDataDirBusy = errors.New("another docent process (serve or sync) is using this data dir")

// lockDataDir takes the data dir's writer lock: one process at a time may
// sync into an index, since a server keeps its vectors in memory. The lock
// is released by the returned function or when the process dies.
func lockDataDir(dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("lock data dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "docent.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock data dir: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", errDataDirBusy, dir)
		}
		return nil, fmt.Errorf("lock data dir: %w", err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// lockForWrites takes the data dir lock for a command that syncs, and marks
// sync runs left "running" by a process that died as failed.
func (m *Main) lockForWrites() error {
	unlock, err := lockDataDir(m.Config.DataDir)
	if err != nil {
		return err
	}
	m.unlock = unlock
	if _, err := m.Store.AbandonRuns(context.Background()); err != nil {
		return err
	}
	return nil
}
