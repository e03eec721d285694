package conformance

import (
	"flag"
	"os"
	"strongbox/logstore/journal/journaltest"
	"testing"
)

// TestMain runs up to 4 parallel tests at once unless -test.parallel says
// otherwise: this package's parallel tests (the suite against fakes, the
// mutators, the readings) mostly wait, for a mail that must not come or a
// log entry a bug hides, and the default, the number of CPUs, would run
// them one after another on a 2-core machine. The servers' data dirs are
// in memory where the machine allows (journaltest.RunInMemory).
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", "4")
	}
	os.Exit(journaltest.RunInMemory(m))
}
