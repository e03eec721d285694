//go:build !linux

package journaltest

// memoryRoot returns "": RunInMemory uses a RAM-backed file system on
// Linux only.
func memoryRoot() string { return "" }
