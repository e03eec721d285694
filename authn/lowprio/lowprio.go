// Package lowprio runs work that must never slow requests down on OS
// threads of a lower priority: bcrypt (package authn) and the log export
// (package httpapi/app). On Linux a thread has a nice value of its own, so
// the kernel runs every other ready thread of the process first; the work
// still gets the CPU that requests leave. Elsewhere it runs at the normal
// priority. It imports nothing of the project, so any package may use it.
//
// A deprioritised thread is never handed back to Go's pool (its goroutine
// keeps it locked until it ends, and the thread exits with it), and the
// server reserves spare Ps (see main's reserveScheduler) so that a P held
// by a waiting low-priority thread stalls nobody.
package lowprio

import "runtime"

// Nice is the nice value of the threads this package starts.
const Nice = 10

// Do runs f on a new OS thread at the lower priority and waits for it.
func Do[T any](f func() T) T {
	ch := make(chan T, 1)
	Go(func() { ch <- f() })
	return <-ch
}

// Go runs f on a new OS thread at the lower priority, in a goroutine of
// its own, and returns at once; the thread exits when f returns.
func Go(f func()) {
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with f
		lowerThreadPriority()
		f()
	}()
}
