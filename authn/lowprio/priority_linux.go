package lowprio

import "syscall"

// lowerThreadPriority sets the nice value of the calling OS thread (on
// Linux, nice is per thread) to Nice. It needs no privilege; it cannot be
// undone without one, so it is used only on a thread that exits afterwards.
func lowerThreadPriority() {
	syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), Nice)
}
