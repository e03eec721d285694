//go:build unix

package backup

import "syscall"

// noFollow refuses to open a symbolic link in the backups folder.
const noFollow = syscall.O_NOFOLLOW
