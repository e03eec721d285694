package api

import (
	"os"
	"testing"

	"strongbox/logstore/journal/journaltest"
)

// TestMain keeps the tests' temporary files in memory where the machine
// allows, and runs 4 parallel tests at once: the longest of them wait (a
// slow verify of 3 s, stalled bodies, realtime floods). go test -count=1
// ./httpapi/api: 11.6 s with 2, 8.2 s with 4.
func TestMain(m *testing.M) { os.Exit(journaltest.RunWaiting(m, 4)) }
