package dashboard

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestUnitJS runs the unit tests of the app's modules (ui/*.test.mjs:
// the pure functions, imported without a DOM) with Node.js's own test
// runner, node --test, so that go test covers them. It skips when node
// is not installed or is older than 18 (which has no --test).
func TestUnitJS(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the dashboard's unit tests (ui/*.test.mjs) need Node.js 18 or later")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	v, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		t.Fatalf("node --version: %v", err)
	}
	major, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(strings.TrimSpace(string(v)), "v"), ".", 2)[0])
	if major < 18 {
		t.Skipf("node is %s: the dashboard's unit tests need Node.js 18 or later (node --test)", strings.TrimSpace(string(v)))
	}
	tests, err := filepath.Glob(filepath.Join("ui", "*.test.mjs"))
	if err != nil || len(tests) == 0 {
		t.Fatalf("no unit test in ui/ (%v)", err)
	}
	// The files by name rather than their directory, which only Node.js 18
	// and 20 search: later ones take the arguments of --test as globs and
	// run a directory as a module (MODULE_NOT_FOUND, nodejs/node#64555).
	out, err := exec.CommandContext(ctx, node, append([]string{"--test"}, tests...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("node --test %s: %v\n%s", strings.Join(tests, " "), err, out)
	}
	// The summary is "# pass N" (TAP) or "ℹ pass N" (spec reporter).
	m := regexp.MustCompile(`(?m)^(?:#|ℹ) pass (\d+)$`).FindSubmatch(out)
	if m == nil || string(m[1]) == "0" {
		t.Fatalf("node --test ran no test:\n%s", out)
	}
	t.Logf("node --test (%s): %s tests passed", strings.TrimSpace(string(v)), m[1])
}
