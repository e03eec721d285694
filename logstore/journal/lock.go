package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrLocked is returned by LockDir when another process holds the lock.
var ErrLocked = errors.New("journal: directory is locked by another process")

// DirLock is an exclusive, advisory lock on a data directory, held by one
// process at a time so that two processes never append to the same files.
// The lock file records the holder's pid for error messages.
type DirLock struct {
	f *os.File
}

// LockDir takes the lock of dir, creating dir if needed. If another process
// holds it, the error wraps ErrLocked and names that process's pid.
func LockDir(dir string) (*DirLock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("journal: create %s: %w", dir, err)
	}
	path := filepath.Join(dir, ".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: open %s: %w", path, err)
	}
	if err := lockFile(f); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		if pid := strings.TrimSpace(string(b)); pid != "" {
			return nil, fmt.Errorf("%w (pid %s)", ErrLocked, pid)
		}
		return nil, ErrLocked
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &DirLock{f: f}, nil
}

// Unlock releases the lock.
func (l *DirLock) Unlock() error {
	unlockFile(l.f)
	return l.f.Close()
}
