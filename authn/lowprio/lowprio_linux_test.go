package lowprio

import (
	"runtime"
	"syscall"
	"testing"
)

// threadNice is the nice value of the calling OS thread. The raw
// getpriority system call answers 20 - nice.
func threadNice(t *testing.T) int {
	t.Helper()
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
	if err != nil {
		t.Fatal(err)
	}
	return 20 - p
}

// TestDoAndGo: the work runs on a thread at Nice, and the caller's thread
// keeps its own priority.
func TestDoAndGo(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("threads have a nice value of their own only on Linux")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := threadNice(t)
	if before >= Nice {
		t.Skipf("the test runs at nice %d already, not below %d", before, Nice)
	}
	if got := Do(func() int { return threadNice(t) }); got != Nice {
		t.Errorf("Do ran f at nice %d, want %d", got, Nice)
	}
	ch := make(chan int)
	Go(func() { ch <- threadNice(t) })
	if got := <-ch; got != Nice {
		t.Errorf("Go ran f at nice %d, want %d", got, Nice)
	}
	if got := threadNice(t); got != before {
		t.Errorf("the caller's thread is at nice %d after, want %d", got, before)
	}
}
