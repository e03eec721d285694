package journaltest

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// RunInMemory runs the tests of m with their temporary files (os.TempDir:
// t.TempDir, and the data dirs of the servers and children the tests
// start) on a RAM-backed file system when the machine has one with room
// (/dev/shm on Linux, see memoryRoot) and TMPDIR is not set, and returns
// m.Run's exit code. A run with -test.bench keeps the disk: the benchmarks
// measure it.
//
// On a disk-backed file system each file created and each fsync costs the
// kernel time: ext4 on the development machine spends some 4 s of system
// time on the log store's tests alone, 0.3 ms a file. What the tests
// check is the same on both: renames within one file system, what a
// reopen reads, and what a process killed with SIGKILL left behind (the
// page cache keeps a killed process's writes either way). The tests that
// fill a disk use FS's budget or SmallDisk's own tmpfs.
func RunInMemory(m *testing.M) int {
	if !flag.Parsed() {
		flag.Parse()
	}
	if os.Getenv("TMPDIR") != "" || flag.Lookup("test.bench").Value.String() != "" {
		return m.Run()
	}
	root := memoryRoot()
	if root == "" {
		return m.Run()
	}
	dir, err := os.MkdirTemp(root, "strongbox-test-")
	if err != nil {
		return m.Run()
	}
	defer os.RemoveAll(dir)
	if err := os.Setenv("TMPDIR", dir); err != nil {
		fmt.Fprintln(os.Stderr, "journaltest: TMPDIR:", err)
	}
	defer os.Unsetenv("TMPDIR")
	return m.Run()
}
