//go:build !unix

package main

import (
	"os"
	"testing"
)

// Restoring by exec needs Unix: TestRestoreReexec skips elsewhere.

func stopDuring(t *testing.T, p *os.Process, send func() <-chan healthProbe) <-chan healthProbe {
	return send()
}

func listenInode(t *testing.T, base string) string { return "" }

func inheritedFDs(t *testing.T, pid int) map[int]string { return nil }

func checkChildFDs(t *testing.T, pid int, before map[int]string) {}
