package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConformanceCommandReports runs `strongbox conformance` against a
// throwaway with --profile, --run, --known, --json and --junit: the selected
// requirements pass, the stale known entry is noted, and both files parse.
func TestConformanceCommandReports(t *testing.T) {
	dir := t.TempDir()
	jsonFile, junitFile := filepath.Join(dir, "report.json"), filepath.Join(dir, "report.xml")
	var out bytes.Buffer
	err := run(t.Context(), []string{"conformance", "--profile", "pocketbase", "--run", `^ERR-00[12]$|^BKP-UPLOAD-001$`, "--known", "pocketbase-0.31.0",
		"--json", jsonFile, "--junit", junitFile, "--timeout", "1m"}, envOf("STRONGBOX_BCRYPT_COST", "4"), &out, io.Discard)
	if err != nil {
		t.Fatalf("conformance: %v\n%s", err, out.String())
	}
	for _, frag := range []string{"PASS  ERR-001 ", "PASS  ERR-002 ", "PASS  BKP-UPLOAD-001 ",
		"note: BKP-UPLOAD-001 passed but is listed as a known deviation of pocketbase-0.31.0",
		"\n3 passed, 0 failed, 0 skipped\n"} {
		if !strings.Contains(out.String(), frag) {
			t.Errorf("output does not contain %q:\n%s", frag, out.String())
		}
	}
	b, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Known   string
		Summary struct{ Passed int }
		Results []struct{ ID, Outcome string }
	}
	if err := json.Unmarshal(b, &rep); err != nil || rep.Known != "pocketbase-0.31.0" || rep.Summary.Passed != 3 || len(rep.Results) != 3 {
		t.Errorf("report.json = %+v (%v)\n%s", rep, err, b)
	}
	b, err = os.ReadFile(junitFile)
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Tests  int `xml:"tests,attr"`
		Suites []struct {
			Name string `xml:"name,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &suites); err != nil || suites.Tests != 3 || len(suites.Suites) != 2 {
		t.Errorf("report.xml = %+v (%v)\n%s", suites, err, b)
	}
}

// TestConformanceCommandFails: against a server that answers 500 to
// everything but the login, the command fails and shows, under the
// failure, the request sent and the response got.
func TestConformanceCommandFails(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/collections/_superusers/auth-with-password" {
			fmt.Fprint(w, `{"record":{"id":"a"},"token":"t.t.t"}`)
			return
		}
		w.WriteHeader(500)
		fmt.Fprint(w, `{"data":{},"message":"Something broke.","status":500}`)
	}))
	defer srv.Close()
	var out bytes.Buffer
	err := run(t.Context(), []string{"conformance", "--url", srv.URL, "--email", "a@b.c", "--password", "p", "--profile", "pocketbase", "--run", "^ERR-002$"},
		noEnv, &out, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "1 failed, 0 changed, 0 errored") {
		t.Errorf("conformance = %v, want it to fail", err)
	}
	for _, frag := range []string{"FAIL  ERR-002 ", "      expected: ", `      request:  POST /api/cf-`,
		` → 500 "Something broke." {"data":{},"message":"Something broke.","status":500}`, "\n0 passed, 1 failed, 0 skipped\n"} {
		if !strings.Contains(out.String(), frag) {
			t.Errorf("output does not contain %q:\n%s", frag, out.String())
		}
	}
}

// TestConformanceCommandRecordKnown: --record-known writes the run's
// failure to a new list, with its observation and a reason to write; a run
// with that list reports it KNOWN and succeeds; once the server answers
// otherwise, the same list makes it CHANGED, and the run fails.
func TestConformanceCommandRecordKnown(t *testing.T) {
	status := 500
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/collections/_superusers/auth-with-password" {
			fmt.Fprint(w, `{"record":{"id":"a"},"token":"t.t.t"}`)
			return
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"data":{},"message":"Something broke.","status":%d}`, status)
	}))
	defer srv.Close()
	list := filepath.Join(t.TempDir(), "mine.tsv")
	conformance := func(extra ...string) (string, error) {
		var out bytes.Buffer
		args := append([]string{"conformance", "--url", srv.URL, "--email", "a@b.c", "--password", "p", "--profile", "pocketbase", "--run", "^ERR-002$"}, extra...)
		err := run(t.Context(), args, noEnv, &out, io.Discard)
		return out.String(), err
	}
	if _, err := conformance("--record-known", list); err == nil {
		t.Errorf("the recording run succeeded with a failure")
	}
	b, err := os.ReadFile(list)
	if err != nil || !strings.Contains(string(b), "ERR-002\tTODO: ") || !strings.HasSuffix(string(b), "\t500 \"Something broke.\"\n") {
		t.Fatalf("the recorded list (%v):\n%s", err, b)
	}
	if out, err := conformance("--known", list); err != nil || !strings.Contains(out, "KNOWN ERR-002 ") {
		t.Errorf("with the recorded list: %v\n%s", err, out)
	}
	status = 502
	out, err := conformance("--known", list)
	if err == nil || !strings.Contains(err.Error(), "0 failed, 1 changed, 0 errored") ||
		!strings.Contains(out, "      recorded: 500 \"Something broke.\"\n      observed: 502 \"Something broke.\"\n") {
		t.Errorf("after the server changed: %v\n%s", err, out)
	}
}

// TestConformanceCommandEnvironment: without --url, --email and --password
// the command takes them from CONFORMANCE_BASE_URL, CONFORMANCE_EMAIL and
// CONFORMANCE_PASSWORD, as go test ./conformance does; a flag wins over its
// variable.
func TestConformanceCommandEnvironment(t *testing.T) {
	var logins []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/collections/_superusers/auth-with-password" {
			var in struct{ Identity, Password string }
			json.NewDecoder(r.Body).Decode(&in)
			logins = append(logins, in.Identity+" "+in.Password)
		}
		w.WriteHeader(400)
		fmt.Fprint(w, `{"data":{},"message":"Failed to authenticate.","status":400}`)
	}))
	defer srv.Close()
	env := envOf("CONFORMANCE_BASE_URL", srv.URL, "CONFORMANCE_EMAIL", "env@example.com", "CONFORMANCE_PASSWORD", "from-env")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "env@example.com from-env"},
		{[]string{"--email", "flag@example.com", "--password", "from-flag"}, "flag@example.com from-flag"},
	} {
		logins = nil
		var out bytes.Buffer
		args := append([]string{"conformance", "--run", "^ERR-001$"}, tc.args...)
		if err := run(t.Context(), args, env, &out, io.Discard); err == nil {
			t.Errorf("%v: conformance passed with a login the server refuses\n%s", tc.args, out.String())
		}
		if len(logins) != 1 || logins[0] != tc.want {
			t.Errorf("%v: logins %q, want [%q]", tc.args, logins, tc.want)
		}
	}
}
