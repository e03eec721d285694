package stream

import (
	"io"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"strongbox/backup/backuptest"
)

// TestOptionsGoRunsTheWork: Start runs the shipper through Options.Go,
// and the CPU work of shipping (the capture, and the encoding with its
// hashing and sealing) happens on the goroutine Go started, so that a Go
// that lowers its thread's priority (the server's lowprio.Go) lowers
// theirs. Go here locks its goroutine to a thread and records the
// thread; Capture and Seal check that they run on it.
func TestOptionsGoRunsTheWork(t *testing.T) {
	d := newDataDir(t)
	d.write("auth.journal", "one")
	var tid, captures, seals, elsewhere atomic.Int64
	here := func() {
		if int64(syscall.Gettid()) != tid.Load() {
			elsewhere.Add(1)
		}
	}
	s := Start(Options{
		Bucket: &backuptest.Bucket{}, Interval: 10 * time.Millisecond,
		Go: func(f func()) {
			go func() {
				runtime.LockOSThread()
				tid.Store(int64(syscall.Gettid()))
				f()
			}()
		},
		Capture: func() (*Capture, error) { here(); captures.Add(1); return d.capture() },
		Seal: func(w io.Writer) (io.WriteCloser, error) {
			here()
			seals.Add(1)
			return nopCloser{w}, nil
		},
	})
	deadline := time.Now().Add(5 * time.Second)
	for s.Status().Objects < 2 && time.Now().Before(deadline) {
		if s.Status().Objects == 1 {
			d.write("auth.journal", "two")
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.Stop()
	if s.Status().Objects < 2 || captures.Load() == 0 || seals.Load() < 2 {
		t.Fatalf("%d objects, %d captures, %d seals: want 2 objects shipped", s.Status().Objects, captures.Load(), seals.Load())
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("%d captures or seals ran off the goroutine Options.Go started", n)
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
