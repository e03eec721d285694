package conformance

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestAgainstPocketBase runs the suite against PocketBase v0.31.0 itself,
// the implementation whose known deviations known/pocketbase-0.31.0.tsv
// records, when STRONGBOX_POCKETBASE names its executable. .ci/run builds
// one from the Go module proxy, outside this module:
//
//	GOBIN=/tmp/pb go install github.com/pocketbase/pocketbase/examples/base@v0.31.0
//	STRONGBOX_POCKETBASE=/tmp/pb/base go test ./conformance -run TestAgainstPocketBase -v
//
// It holds the suite to the verdict issue 13 asks of it: in the document
// and pocketbase profiles, with the full restore, and with the known
// deviations applied, nothing fails, errors or is skipped; every
// requirement of the profile that the list names is reported KNOWN, and
// every other one passes. So a check that demands more of PocketBase than
// the document (or than PocketBase does, in the pocketbase profile) fails
// here, and so does an entry of the list that has gone stale.
func TestAgainstPocketBase(t *testing.T) {
	bin := os.Getenv("STRONGBOX_POCKETBASE")
	if bin == "" {
		t.Skip("no PocketBase: set STRONGBOX_POCKETBASE to a PocketBase v0.31.0 executable (.ci/run builds one)")
	}
	if testing.Short() {
		t.Skip("starts PocketBase twice and runs the suite against each")
	}
	list, err := LoadKnown("pocketbase-0.31.0")
	if err != nil {
		t.Fatal(err)
	}
	for _, profile := range []Source{SourceDocument, SourcePocketBase} {
		t.Run(string(profile), func(t *testing.T) {
			t.Parallel()
			const email, password = "conformance@example.com", "Passw0rd!conformance"
			base := startPocketBase(t, bin, email, password)
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
			defer cancel()
			rep := Run(ctx, Config{BaseURL: base, Email: email, Password: password, Profile: profile,
				Known: list.Name, Destructive: true})
			if rep.Err != nil {
				t.Fatal(rep.Err)
			}
			for _, n := range rep.Notes {
				t.Errorf("note: %s", n)
			}
			reported := map[string]bool{}
			for _, res := range rep.Results {
				id := res.Req.ID
				switch res.Outcome {
				case Pass:
				case Known:
					reported[id] = true
				default:
					t.Errorf("%s %s (%s, %s): %s", res.Outcome, id, res.Req.Source, res.Req.Section, res.Detail)
				}
			}
			for _, req := range inProfile(profile) {
				if _, listed := list.Reasons[req.ID]; listed && !reported[req.ID] {
					t.Errorf("%s is listed as a deviation of PocketBase v0.31.0 but was not reported KNOWN", req.ID)
				}
			}
			tl := rep.Tally()
			t.Logf("%s profile against PocketBase v0.31.0: %d passed, %d known (%s), %d failed, %d skipped, %d errored",
				profile, tl.Passed, tl.Known, strings.Join(slices.Sorted(maps.Keys(reported)), " "), tl.Failed, tl.Skipped, tl.Errored)
		})
	}
}

// startPocketBase makes a superuser in a new data dir, serves PocketBase
// from it on a free loopback port and returns its base URL. The server is
// killed, and its output shown, when the test ends; its files stay in the
// test's temporary dir (PocketBase writes pb_migrations beside its working
// dir, which is that dir too).
func startPocketBase(t *testing.T, bin, email, password string) string {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "pb_data")
	up := exec.CommandContext(t.Context(), bin, "superuser", "upsert", email, password, "--dir", data)
	up.Dir = dir
	if out, err := up.CombinedOutput(); err != nil {
		t.Fatalf("%s superuser upsert: %v\n%s", bin, err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	logFile, err := os.Create(filepath.Join(dir, "pocketbase.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--http", addr, "--dir", data)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		logFile.Close()
		if t.Failed() {
			out, _ := os.ReadFile(logFile.Name())
			t.Logf("PocketBase's output:\n%s", out)
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := http.Get(base + "/api/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("PocketBase did not answer %s/api/health within 30 s (last: %v)", base, err)
		}
		<-tick.C
	}
}

// TestPendingMutatorsAgainstPocketBase shows the pending requirements of
// PocketBase's own (pendingStrongboxFile) able to fail before strongbox
// can show it: each mutator naming one runs in front of a PocketBase
// v0.31.0, and the pocketbase requirements it names that are pending must
// FAIL there (the strongbox ones PocketBase does not meet to begin with).
func TestPendingMutatorsAgainstPocketBase(t *testing.T) {
	bin := os.Getenv("STRONGBOX_POCKETBASE")
	if bin == "" {
		t.Skip("no PocketBase: set STRONGBOX_POCKETBASE to a PocketBase v0.31.0 executable (.ci/run builds one)")
	}
	if testing.Short() {
		t.Skip("starts PocketBase and runs parts of the suite many times")
	}
	pending := loadPendingStrongbox(t)
	source := map[string]Source{}
	for _, r := range Requirements {
		source[r.ID] = r.Source
	}
	base := startPocketBase(t, bin, testEmail, testPassword)
	for _, mu := range mutators() {
		fails := slices.DeleteFunc(slices.Clone(mu.fails), func(id string) bool {
			return pending[id] == "" || source[id] != SourcePocketBase
		})
		if len(fails) == 0 {
			continue
		}
		t.Run(mu.bug, func(t *testing.T) {
			expectFailures(t, mu.bug, fails, Config{BaseURL: startFront(t, base, mu.m), Email: testEmail,
				Password: testPassword, Profile: SourcePocketBase})
		})
	}
}

// TestPocketBaseFigures keeps the figures doc.go gives for a run against
// PocketBase v0.31.0 true without running one: TestAgainstPocketBase
// passes only when every requirement of a profile passes there but those
// the known list names, so a profile's passes are its requirements less
// the listed ones. The figures are read from the sentence that gives them
// ("with the list applied: document N passed, N known; …").
func TestPocketBaseFigures(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(strings.ReplaceAll(string(src), "\n//", " ")), " ")
	list, err := LoadKnown("pocketbase-0.31.0")
	if err != nil {
		t.Fatal(err)
	}
	known := func(p Source) int {
		n := 0
		for _, r := range inProfile(p) {
			if _, ok := list.Reasons[r.ID]; ok {
				n++
			}
		}
		return n
	}
	kd, kp := known(SourceDocument), known(SourcePocketBase)
	for _, want := range []string{
		fmt.Sprintf("%d requirements of the document profile, and the %d twins in the pocketbase one", kd, kp-kd),
		fmt.Sprintf("with the list applied: document %d passed, %d known; pocketbase %d passed, %d known; %d requirements in the table",
			len(inProfile(SourceDocument))-kd, kd, len(inProfile(SourcePocketBase))-kp, kp, len(Requirements)),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("doc.go does not say %q (the figures of the table and of known/pocketbase-0.31.0.tsv)", want)
		}
	}
}
