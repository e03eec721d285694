//go:build race

package logstore

const raceEnabled = true
