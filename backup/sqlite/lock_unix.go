//go:build unix

package sqlite

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// SQLite's unix VFS locks (see its os_unix.c and the file format's
// "locking" section): every connection to a WAL database holds a shared
// fcntl lock on the -shm file's "DMS" byte at offset 128, and in rollback
// mode a reader holds a shared lock in the SHARED region of the database
// file, a writer the RESERVED or PENDING byte, all within the 512 bytes
// from 0x40000000.
const (
	shmDMSOffset = 128
	lockRegion   = 0x40000000
	lockRegionN  = 512
)

// checkLocks returns ErrLocked when another process holds a lock SQLite
// takes on the database or its -shm file.
func checkLocks(path string) error {
	for _, c := range []struct {
		name         string
		start, count int64
	}{
		{path + "-shm", shmDMSOffset, 1},
		{path, lockRegion, lockRegionN},
	} {
		pid, err := lockedByOther(c.name, c.start, c.count)
		if err != nil {
			return err
		}
		if pid != 0 {
			return lockedError(path, pid)
		}
	}
	return nil
}

// lockedByOther asks (F_GETLK) whether another process holds an fcntl
// lock that conflicts with a write lock on the byte range, and returns
// its process id (0: none). A missing file has no lock.
func lockedByOther(name string, start, count int64) (int, error) {
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: start, Len: count}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk); err != nil {
		return 0, err
	}
	if lk.Type == syscall.F_UNLCK {
		return 0, nil
	}
	if lk.Pid > 0 {
		return int(lk.Pid), nil
	}
	return -1, nil // a holder the kernel does not name
}
