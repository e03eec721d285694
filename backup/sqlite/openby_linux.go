package sqlite

import (
	"os"
	"path/filepath"
	"strconv"
)

// openByOther returns the id of another process that has one of the
// files open, read from /proc/PID/fd (the processes this one may
// inspect: its own user's, or all for root); 0 when none. It sees what
// the lock check cannot: a process whose SQLite connection holds no lock
// at that moment, such as PocketBase after its backup (which releases
// the process's fcntl locks on data.db by closing a descriptor of its
// own).
func openByOther(names ...string) int {
	want := map[string]bool{}
	for _, n := range names {
		if abs, err := filepath.Abs(n); err == nil {
			want[abs] = true
		}
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	self := os.Getpid()
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == self {
			continue
		}
		fds, err := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		if err != nil {
			continue // gone, or not ours to inspect
		}
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name()))
			if err == nil && want[target] {
				return pid
			}
		}
	}
	return 0
}
