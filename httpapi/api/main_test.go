package api

import (
	"flag"
	"os"
	"testing"

	"strongbox/logstore/journal/journaltest"
)

// TestMain keeps the tests' temporary files in memory where the machine
// allows (journaltest.RunInMemory), and runs up to 4 parallel tests at
// once unless -test.parallel says otherwise: the longest of them wait (a
// slow verify of 3 s, stalled bodies, realtime floods), and the default,
// the number of CPUs, would run them one after another on a 2-core
// machine (go test -count=1 ./httpapi/api: 11.6 s with 2, 8.2 s with 4).
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", "4")
	}
	os.Exit(journaltest.RunInMemory(m))
}
