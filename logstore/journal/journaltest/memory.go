package journaltest

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"testing"
)

// RunInMemory runs the tests of m with their temporary files (os.TempDir:
// t.TempDir, and the data dirs of the servers and children the tests
// start) on a RAM-backed file system when the machine has one with room
// (/dev/shm on Linux, see memoryRoot) and TMPDIR is not set, and returns
// m.Run's exit code. It also lets the heap grow to five times the live
// data between collections (GOGC=400) unless GOGC is set: the tests'
// garbage cost a tenth of their CPU time at the default (the log store's
// and the suite's tests: 17.3 and 12.7 s of CPU at GOGC=100, 15.0 and
// 11.2 s at 400). A run with -test.bench keeps the disk and the default:
// the benchmarks measure them.
//
// On a disk-backed file system each file created and each fsync costs the
// kernel time: the log store's tests spend 8.8 s of system time on ext4 on
// the development machine, 4.6 s on tmpfs. What the tests check is the
// same on both: renames within one file system, what a reopen reads, and
// what a process killed with SIGKILL left behind (the page cache keeps a
// killed process's writes either way). The tests that fill a disk use
// FS's budget or SmallDisk's own tmpfs. A test binary killed before it
// returns leaves its directory behind, as it would in /tmp.
func RunInMemory(m *testing.M) int {
	if !flag.Parsed() {
		flag.Parse()
	}
	if flag.Lookup("test.bench").Value.String() != "" {
		return m.Run()
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("TMPDIR") != "" {
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
	os.Setenv("TMPDIR", dir) // fails only for a malformed name or value
	return m.Run()
}

// RunWaiting is RunInMemory for a package whose parallel tests mostly
// wait (for a mail that must not come, a log entry a bug hides, a slow
// verify): it runs up to n of them at once unless -test.parallel says
// otherwise, where the default, the number of CPUs, would run them one
// after another on a 2-core machine.
func RunWaiting(m *testing.M, n int) int {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", fmt.Sprint(n))
	}
	return RunInMemory(m)
}
