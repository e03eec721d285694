//go:build !linux

package lowprio

// lowerThreadPriority is a no-op where threads have no nice value of their own.
func lowerThreadPriority() {}
