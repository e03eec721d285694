package journaltest

import "syscall"

// tmpfsMagic is TMPFS_MAGIC of statfs(2).
const tmpfsMagic = 0x01021994

// memoryRoot returns /dev/shm when it is a tmpfs with at least 4 GiB free
// (a container's default /dev/shm has 64 MiB), else "".
func memoryRoot() string {
	var st syscall.Statfs_t
	if err := syscall.Statfs("/dev/shm", &st); err != nil || st.Type != tmpfsMagic {
		return ""
	}
	if st.Bavail*uint64(st.Bsize) < 4<<30 {
		return ""
	}
	return "/dev/shm"
}
