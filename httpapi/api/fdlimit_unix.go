//go:build unix

package api

import "syscall"

// fileLimit is the process's soft limit on open descriptors, 0 if unknown.
// (Go raises the soft limit to the hard one at start-up on Linux.)
func fileLimit() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return int(min(rl.Cur, 1<<30)) // RLIM_INFINITY is all ones: capped too
}
