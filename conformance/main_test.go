package conformance

import (
	"os"
	"testing"

	"strongbox/logstore/journal/journaltest"
)

// TestMain runs up to 4 parallel tests at once: this package's parallel
// tests (the suite against fakes, the mutators, the readings) mostly
// wait, for a mail that must not come or a log entry a bug hides. The
// servers' data dirs are in memory where the machine allows.
func TestMain(m *testing.M) { os.Exit(journaltest.RunWaiting(m, 4)) }
