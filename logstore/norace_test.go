//go:build !race

package logstore

// raceEnabled reports whether the race detector is on; tests that build a
// million entries skip themselves under it.
const raceEnabled = false
