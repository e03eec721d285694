package settings

import (
	"os"
	"testing"

	"strongbox/logstore/journal/journaltest"
)

// TestMain keeps the tests' temporary files in memory where the machine
// allows (journaltest.RunInMemory).
func TestMain(m *testing.M) { os.Exit(journaltest.RunInMemory(m)) }
