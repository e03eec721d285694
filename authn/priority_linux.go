package authn

import "syscall"

// lowerThreadPriority raises the nice value of the calling OS thread (on
// Linux, nice is per thread), so the kernel runs any other ready thread of
// the process first. It needs no privilege; it cannot be undone without
// one, so callers use it only on a thread that exits afterwards.
func lowerThreadPriority() {
	syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), bcryptNice)
}
