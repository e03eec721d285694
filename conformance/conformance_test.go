package conformance

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	baseURLFlag = flag.String("base-url", "", "run TestAgainstServer against this server (default $CONFORMANCE_BASE_URL)")
	update      = flag.Bool("update", false, "rewrite testdata/requirements.txt and REQUIREMENTS.md from the requirement table")
)

// TestAgainstServer runs the whole suite against a running server named by
// -base-url or CONFORMANCE_BASE_URL, with the superuser credentials in
// CONFORMANCE_EMAIL and CONFORMANCE_PASSWORD (CONFORMANCE_SMTP_HOST sets
// Config.SMTPHost, CONFORMANCE_OAUTH2_HOST Config.OAuth2Host, CONFORMANCE_PROFILE
// Config.Profile, CONFORMANCE_RUN Config.Match, CONFORMANCE_KNOWN Config.Known). It is skipped when no server is named. Each requirement is reported as its own subtest.
func TestAgainstServer(t *testing.T) {
	base := *baseURLFlag
	if base == "" {
		base = os.Getenv("CONFORMANCE_BASE_URL")
	}
	if base == "" {
		t.Skip("no server: set CONFORMANCE_BASE_URL (and CONFORMANCE_EMAIL, CONFORMANCE_PASSWORD) or -base-url")
	}
	cfg := Config{
		BaseURL:    base,
		Email:      os.Getenv("CONFORMANCE_EMAIL"),
		Password:   os.Getenv("CONFORMANCE_PASSWORD"),
		Only:       os.Getenv("CONFORMANCE_ONLY"),
		Match:      os.Getenv("CONFORMANCE_RUN"),
		Known:      os.Getenv("CONFORMANCE_KNOWN"),
		SMTPHost:   os.Getenv("CONFORMANCE_SMTP_HOST"),
		OAuth2Host: os.Getenv("CONFORMANCE_OAUTH2_HOST"),
		Profile:    Source(os.Getenv("CONFORMANCE_PROFILE")),
	}
	rep := Run(t.Context(), cfg)
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	reportAsSubtests(t, rep)
	var buf bytes.Buffer
	rep.Print(&buf)
	t.Logf("report:\n%s", buf.String())
}

// reportAsSubtests turns each result into t.Run(ID+" "+name).
func reportAsSubtests(t *testing.T, rep Report) {
	t.Helper()
	for _, res := range rep.Results {
		t.Run(res.Req.ID+" "+res.Req.Name, func(t *testing.T) {
			switch res.Outcome {
			case Pass:
			case Skip:
				t.Skipf("cites %s — %s — skipped: %s", res.Req.Section, res.Req.Text, res.Detail)
			case Known:
				t.Skipf("cites %s — %s — known deviation of %s (%s): %s", res.Req.Section, res.Req.Text, rep.Known, res.KnownReason, res.Detail)
			case Changed:
				t.Errorf("cites %s — %s — known deviation of %s (%s) changed: recorded %s, observed %s", res.Req.Section, res.Req.Text,
					rep.Known, res.KnownReason, res.KnownObserved, res.Observed)
			case Fail:
				if res.Expected != "" || res.Actual != "" {
					t.Errorf("cites %s — %s — expected %s — got %s\n%s", res.Req.Section, res.Req.Text, res.Expected, res.Actual, res.Detail)
					return
				}
				t.Errorf("cites %s — %s — %s", res.Req.Section, res.Req.Text, res.Detail)
			default:
				t.Errorf("cites %s — %s — harness error: %s", res.Req.Section, res.Req.Text, res.Detail)
			}
		})
	}
}

var (
	reID           = regexp.MustCompile(`^[A-Z]+(-[A-Z0-9]+)*-\d{3}$`)
	reIssueSection = regexp.MustCompile(`^issue \d+ \(`)
)

// TestRequirementTable checks the table's metadata: unique, well-formed IDs
// and a section, name, text and check on every requirement.
func TestRequirementTable(t *testing.T) {
	seen := map[string]bool{}
	for i, r := range Requirements {
		if r == nil {
			t.Fatalf("Requirements[%d] is nil", i)
		}
		if !reID.MatchString(r.ID) {
			t.Errorf("Requirements[%d].ID = %q, want AREA[-SUB]-NNN", i, r.ID)
		}
		if seen[r.ID] {
			t.Errorf("duplicate requirement ID %s", r.ID)
		}
		seen[r.ID] = true
		if !strings.HasPrefix(r.Section, "§") && !reIssueSection.MatchString(r.Section) {
			t.Errorf("%s: Section = %q, want a § reference into the interface document (or \"issue N (…)\" for a requirement an issue adds)", r.ID, r.Section)
		}
		if r.Name == "" || r.Text == "" || r.Run == nil {
			t.Errorf("%s: Name, Text and Run are all required", r.ID)
		}
		if !regexp.MustCompile(`\b[1-5]\d\d\b`).MatchString(r.Text) {
			t.Errorf("%s: Text names no expected status code: %q", r.ID, r.Text)
		}
	}
}

// TestRequirementIDsStable compares the IDs with testdata/requirements.txt,
// so that an ID is never silently renumbered or dropped (run with -update
// after adding requirements on purpose).
func TestRequirementIDsStable(t *testing.T) {
	golden := filepath.Join("testdata", "requirements.txt")
	var b strings.Builder
	for _, r := range Requirements {
		fmt.Fprintf(&b, "%s\t%s\n", r.ID, r.Name)
	}
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestRequirementIDsStable -update to create it)", err)
	}
	have := map[string]bool{}
	for _, r := range Requirements {
		have[r.ID] = true
	}
	listed := map[string]bool{}
	for line := range strings.Lines(string(want)) {
		id, _, _ := strings.Cut(strings.TrimSpace(line), "\t")
		if id == "" {
			continue
		}
		listed[id] = true
		if !have[id] {
			t.Errorf("requirement %s was removed or renamed; IDs are stable (keep it, or update %s deliberately)", id, golden)
		}
	}
	for _, r := range Requirements {
		if !listed[r.ID] {
			t.Errorf("requirement %s is not in %s; run with -update to add it", r.ID, golden)
		}
	}
}

// stubServer answers only the superuser login; loginStatus selects its
// status.
func stubServer(t *testing.T, loginStatus int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost && r.URL.Path == "/api/collections/_superusers/auth-with-password" {
			w.WriteHeader(loginStatus)
			if loginStatus == http.StatusOK {
				fmt.Fprint(w, `{"record":{"id":"a"},"token":"stub.token.sig"}`)
			} else {
				fmt.Fprint(w, `{"data":{},"message":"Failed to authenticate.","status":400}`)
			}
			return
		}
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"data":{},"message":"The requested resource wasn't found.","status":404}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func stubReq(id string, run func(context.Context, *Client) error) *Requirement {
	return &Requirement{ID: id, Section: "§0", Name: "stub " + id, Text: "stub requirement " + id, Run: run}
}

func TestRunOutcomes(t *testing.T) {
	srv := stubServer(t, http.StatusOK)
	var cleaned []string
	reqs := []*Requirement{
		stubReq("T-PASS-001", func(ctx context.Context, c *Client) error {
			if c.su != "stub.token.sig" {
				return fmt.Errorf("superuser token %q not passed to the check", c.su)
			}
			c.Cleanup("first", func(context.Context) error { cleaned = append(cleaned, "first"); return nil })
			c.Cleanup("second", func(context.Context) error { cleaned = append(cleaned, "second"); return nil })
			return nil
		}),
		stubReq("T-FAIL-001", func(ctx context.Context, c *Client) error {
			return Failf("expected %d, got %d", 200, 500)
		}),
		stubReq("T-FAIL-002", func(ctx context.Context, c *Client) error {
			return fmt.Errorf("control: %w", Failf("inner"))
		}),
		stubReq("T-SKIP-001", func(ctx context.Context, c *Client) error { return Skipf("not configured") }),
		stubReq("T-ERR-001", func(ctx context.Context, c *Client) error { return errors.New("connection refused") }),
		stubReq("T-ERR-002", func(ctx context.Context, c *Client) error { panic("boom") }),
		stubReq("T-ERR-003", func(ctx context.Context, c *Client) error {
			c.Cleanup("delete fixture", func(context.Context) error { return errors.New("expected 204, got 500") })
			return nil
		}),
		stubReq("T-FAIL-003", func(ctx context.Context, c *Client) error {
			c.Cleanup("delete fixture", func(context.Context) error { panic("cleanup boom") })
			return Failf("server wrong")
		}),
		{ID: "T-ERR-004", Section: "§0", Name: "no check", Text: "no check"},
		stubReq("T-FAIL-004", func(ctx context.Context, c *Client) error {
			return Mismatch(`404 "gone"`, `200 {}`)
		}),
		stubReq("T-FAIL-005", func(ctx context.Context, c *Client) error {
			return fmt.Errorf("page %d: %w", 2, Mismatch("3 items", "2"))
		}),
	}
	rep := runRequirements(t.Context(), Config{BaseURL: srv.URL, Email: "a@b.c", Password: "p"}, reqs)

	want := map[string]Outcome{
		"T-PASS-001": Pass, "T-FAIL-001": Fail, "T-FAIL-002": Fail, "T-SKIP-001": Skip,
		"T-ERR-001": Error, "T-ERR-002": Error, "T-ERR-003": Error, "T-FAIL-003": Fail, "T-ERR-004": Error,
		"T-FAIL-004": Fail, "T-FAIL-005": Fail,
	}
	if len(rep.Results) != len(reqs) {
		t.Fatalf("got %d results, want %d", len(rep.Results), len(reqs))
	}
	for i, res := range rep.Results {
		if res.Req != reqs[i] {
			t.Errorf("result %d is for %s, want %s (table order)", i, res.Req.ID, reqs[i].ID)
		}
		if res.Outcome != want[res.Req.ID] {
			t.Errorf("%s: outcome %v, want %v (detail %q)", res.Req.ID, res.Outcome, want[res.Req.ID], res.Detail)
		}
	}
	if got := strings.Join(cleaned, ","); got != "second,first" {
		t.Errorf("cleanups ran as %q, want newest first", got)
	}
	detail := func(id string) string {
		for _, res := range rep.Results {
			if res.Req.ID == id {
				return res.Detail
			}
		}
		return ""
	}
	for id, frag := range map[string]string{
		"T-FAIL-001": "expected 200, got 500",
		"T-FAIL-002": "control: inner",
		"T-ERR-002":  "check panicked: boom",
		"T-ERR-003":  "cleanup failed: delete fixture: expected 204, got 500",
		"T-FAIL-003": "cleanup also failed: delete fixture: panic: cleanup boom",
		"T-FAIL-004": `expected 404 "gone", got 200 {}`,
		"T-FAIL-005": "page 2: expected 3 items, got 2",
	} {
		if !strings.Contains(detail(id), frag) {
			t.Errorf("%s: detail %q does not contain %q", id, detail(id), frag)
		}
	}

	for _, res := range rep.Results {
		want := map[string][2]string{"T-FAIL-004": {`404 "gone"`, `200 {}`}, "T-FAIL-005": {"3 items", "2"}}[res.Req.ID]
		if res.Expected != want[0] || res.Actual != want[1] {
			t.Errorf("%s: Expected, Actual = %q, %q; want %q, %q", res.Req.ID, res.Expected, res.Actual, want[0], want[1])
		}
	}

	p, f, s, e := rep.Counts()
	if p != 1 || f != 5 || s != 1 || e != 4 {
		t.Errorf("Counts() = %d, %d, %d, %d; want 1, 5, 1, 4", p, f, s, e)
	}
	if rep.OK() {
		t.Errorf("OK() = true with failures")
	}

	var buf bytes.Buffer
	rep.Print(&buf)
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	if last, want := lines[len(lines)-1], "1 passed, 5 failed, 1 skipped, 4 errored"; last != want {
		t.Errorf("last line = %q, want %q", last, want)
	}
	out := buf.String()
	for _, frag := range []string{
		"PASS  T-PASS-001", "FAIL  T-FAIL-001", "SKIP  T-SKIP-001", "ERROR T-ERR-001",
		"requirement: stub requirement T-FAIL-001", "expected 200, got 500", "skipped: not configured",
		"      expected: 404 \"gone\"\n      actual:   200 {}\n",
		"      page 2: expected 3 items, got 2\n      expected: 3 items\n      actual:   2\n",
	} {
		if !strings.Contains(out, frag) {
			t.Errorf("report does not contain %q:\n%s", frag, out)
		}
	}
}

func TestRunOnly(t *testing.T) {
	srv := stubServer(t, http.StatusOK)
	pass := func(context.Context, *Client) error { return nil }
	reqs := []*Requirement{stubReq("A-X-001", pass), stubReq("B-X-001", pass), stubReq("A-Y-002", pass)}
	rep := runRequirements(t.Context(), Config{BaseURL: srv.URL, Email: "a@b.c", Password: "p", Only: "A-"}, reqs)
	var ids []string
	for _, res := range rep.Results {
		ids = append(ids, res.Req.ID)
	}
	if got := strings.Join(ids, ","); got != "A-X-001,A-Y-002" {
		t.Errorf("Only %q ran %s", "A-", got)
	}
	var buf bytes.Buffer
	rep.Print(&buf)
	if !strings.HasSuffix(buf.String(), "\n2 passed, 0 failed, 0 skipped\n") {
		t.Errorf("report does not end with the summary line:\n%s", buf.String())
	}
	if !rep.OK() {
		t.Errorf("OK() = false for an all-pass run")
	}
}

func TestRunLoginFailure(t *testing.T) {
	srv := stubServer(t, http.StatusBadRequest)
	ran := false
	reqs := []*Requirement{
		stubReq("T-A-001", func(context.Context, *Client) error { ran = true; return nil }),
		stubReq("T-A-002", func(context.Context, *Client) error { ran = true; return nil }),
	}
	rep := runRequirements(t.Context(), Config{BaseURL: srv.URL, Email: "a@b.c", Password: "p"}, reqs)
	if ran {
		t.Errorf("checks ran although the superuser login failed")
	}
	for _, res := range rep.Results {
		if res.Outcome != Error || !strings.Contains(res.Detail, "superuser login") {
			t.Errorf("%s: %v %q, want Error naming the superuser login", res.Req.ID, res.Outcome, res.Detail)
		}
	}
	var buf bytes.Buffer
	rep.Print(&buf)
	if !strings.HasSuffix(buf.String(), "\n0 passed, 0 failed, 0 skipped, 2 errored\n") {
		t.Errorf("unexpected report ending:\n%s", buf.String())
	}
}

func TestRunUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	rep := runRequirements(t.Context(), Config{BaseURL: url, Email: "a@b.c", Password: "p",
		Client: &http.Client{Timeout: 2 * time.Second}},
		[]*Requirement{stubReq("T-A-001", func(context.Context, *Client) error { return nil })})
	if len(rep.Results) != 1 || rep.Results[0].Outcome != Error {
		t.Fatalf("results = %+v, want one Error", rep.Results)
	}
	for _, cfg := range []Config{
		{BaseURL: "", Email: "a", Password: "b"},
		{BaseURL: "ftp://x", Email: "a", Password: "b"},
		{BaseURL: url, Email: "", Password: ""},
	} {
		rep := runRequirements(t.Context(), cfg, []*Requirement{stubReq("T-A-001", func(context.Context, *Client) error { return nil })})
		if rep.Results[0].Outcome != Error {
			t.Errorf("config %+v: outcome %v, want Error", cfg, rep.Results[0].Outcome)
		}
	}
}

func TestRunCancelled(t *testing.T) {
	srv := stubServer(t, http.StatusOK)
	ctx, cancel := context.WithCancel(t.Context())
	reqs := []*Requirement{
		stubReq("T-A-001", func(context.Context, *Client) error { cancel(); return nil }),
		stubReq("T-A-002", func(context.Context, *Client) error { return nil }),
	}
	rep := runRequirements(ctx, Config{BaseURL: srv.URL, Email: "a@b.c", Password: "p"}, reqs)
	if rep.Results[0].Outcome != Pass || rep.Results[1].Outcome != Error ||
		!strings.Contains(rep.Results[1].Detail, "not run") {
		t.Errorf("results = %v %v %q, want Pass then Error (not run)", rep.Results[0].Outcome, rep.Results[1].Outcome, rep.Results[1].Detail)
	}
}

func TestExcerpt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		ell  bool
		want string
	}{
		{"GET /api/health?cf=x", 5, true, "GET /..."},
		{"POST /api/x", 5, true, "POST..."},
		{"POST /api/x", 5, false, "POST"},
		{"GET", 5, true, "GET"},
		{"çüé text", 3, true, "çüé..."},
	} {
		if got := excerpt(tc.in, tc.max, tc.ell); got != tc.want {
			t.Errorf("excerpt(%q, %d, %v) = %q, want %q", tc.in, tc.max, tc.ell, got, tc.want)
		}
	}
}

func TestParseEnvelope(t *testing.T) {
	mk := func(body string) *response {
		return &response{status: 404, header: http.Header{"Content-Type": {"application/json"}}, body: []byte(body)}
	}
	good := mk(`{"data":{},"message":"The requested resource wasn't found.","status":404}`)
	if _, err := expectError(good, 404, msgNotFound); err != nil {
		t.Errorf("good envelope rejected: %v", err)
	}
	for _, body := range []string{
		`{"data":null,"message":"x","status":404}`,
		`{"data":{},"message":"x"}`,
		`{"data":{},"message":"x","status":404,"code":404}`,
		`{"data":[],"message":"x","status":404}`,
		`{"data":{},"message":"x","status":400}`,
		`not json`,
	} {
		if _, err := expectError(mk(body), 404, ""); err == nil {
			t.Errorf("envelope %s accepted", body)
		} else if o, _ := classify(err); o != Fail {
			t.Errorf("envelope %s: outcome %v, want Fail", body, o)
		}
	}
	keys, err := objectKeys([]byte(`{"status":1,"data":{"x":[1,{"y":2}]},"message":"m"}`))
	if err != nil || strings.Join(keys, ",") != "status,data,message" {
		t.Errorf("objectKeys = %v, %v", keys, err)
	}
}

// TestSuiteAgainstFake runs the real requirement table against the
// in-memory fake (fake_test.go and the fake_*_test.go files), but for the
// logs and backups it does not serve (fakeServes), which main's
// TestConformance runs against the real server. The fake follows the
// interface document, so every requirement must pass; a failure here is a
// bug in a check (or in the fake).
func TestSuiteAgainstFake(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole suite (about 3 s) once per profile")
	}
	t.Parallel()
	profiles := []Source{SourceDocument, SourcePocketBase, SourceStrongbox}
	// Each against a fake of its own, at once: the mail checks mostly wait.
	runConcurrently(t, len(profiles), func(i int) string { return string(profiles[i]) }, func(t *testing.T, i int) {
		profile := profiles[i]
		var served []*Requirement
		for _, r := range inProfile(profile) {
			if fakeServes(r.ID) {
				served = append(served, r)
			}
		}
		// The checks that wait about 2 s each on the clock run each on a
		// fake of its own, beside the rest: the profile takes 2 s of
		// waiting, not 8.
		groups := waitingGroups(served)
		reports := make([]Report, len(groups))
		fakes := make([]*fakeServer, len(groups))
		var wg sync.WaitGroup
		for g, reqs := range groups {
			fakes[g] = newFakeServer(testEmail, testPassword)
			srv := newFakeHTTPServer(fakes[g])
			t.Cleanup(srv.Close)
			wg.Go(func() {
				reports[g] = runRequirements(t.Context(), Config{BaseURL: srv.URL, Email: testEmail, Password: testPassword,
					Destructive: true, Profile: profile}, reqs)
			})
		}
		wg.Wait()
		var rep Report
		for _, r := range reports {
			rep.Results = append(rep.Results, r.Results...)
		}
		if want := len(served); len(rep.Results) != want {
			t.Fatalf("got %d results for the %d requirements of the profile", len(rep.Results), want)
		}
		reportAsSubtests(t, rep)
		for _, fake := range fakes {
			checkFakeLeftClean(t, fake)
		}
	})
}

// waitingChecks are the requirements that wait about 2 s each for a token,
// a code or a mail to age (main's TestConformance runs them apart too).
var waitingChecks = []string{"OTP-006", "AUTH-ALERT-001", "FLOW-MAIL-004", "AUTH-TAMPER-006"}

// waitingGroups splits reqs for runs at once, each on servers of its
// own: the rest first, then each of waitingChecks alone.
func waitingGroups(reqs []*Requirement) [][]*Requirement {
	groups := [][]*Requirement{nil}
	for _, r := range reqs {
		if slices.Contains(waitingChecks, r.ID) {
			groups = append(groups, []*Requirement{r})
		} else {
			groups[0] = append(groups[0], r)
		}
	}
	return groups
}

// inProfile returns the requirements the profile runs.
func inProfile(profile Source) []*Requirement {
	var reqs []*Requirement
	for _, r := range Requirements {
		if profile.includes(r.Source) {
			reqs = append(reqs, r)
		}
	}
	return reqs
}

// checkFakeLeftClean requires the suite to have removed what it created:
// only the two built-in collections and the superuser remain, and the
// settings and the options of users are as they were.
func checkFakeLeftClean(t *testing.T, fake *fakeServer) {
	t.Helper()
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.collections) != 2 {
		var names []string
		for _, c := range fake.collections {
			names = append(names, c.name)
		}
		t.Errorf("collections left behind: %v", names)
	}
	if n := len(fake.collection("users").records); n != 0 {
		t.Errorf("%d users left behind", n)
	}
	if got, want := mustJSON(fake.settings), mustJSON(fakeDefaultSettings()); got != want {
		t.Errorf("settings left changed: %s, want %s", got, want)
	}
	// The OTP and MFA checks turn the options back off.
	fresh := newFakeServer("x@example.com", "x").collection("users")
	if users := fake.collection("users"); mustJSON(users.otp) != mustJSON(fresh.otp) || mustJSON(users.mfa) != mustJSON(fresh.mfa) {
		t.Errorf("users options left changed: otp %s, mfa %s", mustJSON(users.otp), mustJSON(users.mfa))
	}
}

// TestLogsSkippedWhenLoggingOff runs the logs checks against a strongbox
// whose settings turn request logging off: the checks that need logged
// requests are skipped with the reason, the others still pass, and nothing
// fails.
func TestLogsSkippedWhenLoggingOff(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the logs checks")
	}
	base := startStrongbox(t)
	x := &front{base: base}
	req, _ := http.NewRequest(http.MethodPatch, base+"/api/settings", strings.NewReader(`{"logs":{"maxDays":0}}`))
	req.Header.Set("Authorization", x.superuser())
	req.Header.Set("Content-Type", "application/json")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 200 {
		t.Fatalf("turning request logging off: %v %v", res, err)
	}
	start := time.Now()
	rep := Run(t.Context(), Config{BaseURL: base, Email: testEmail, Password: testPassword, Only: "LOG-",
		Profile: SourceStrongbox})
	if d := time.Since(start); d > DefaultWaitTimeout {
		t.Errorf("the run took %s: the fixture waited for entries that cannot appear", d)
	}
	outcomes := map[string]Result{}
	for _, res := range rep.Results {
		outcomes[res.Req.ID] = res
		switch res.Outcome {
		case Fail, Error:
			t.Errorf("%s: %v %s", res.Req.ID, res.Outcome, res.Detail)
		case Skip:
			if !strings.Contains(res.Detail, msgLoggingOff) {
				t.Errorf("%s: skipped with %q, want the reason %q", res.Req.ID, res.Detail, msgLoggingOff)
			}
		}
	}
	for _, id := range []string{"LOG-ENTRY-001", "LOG-LIST-001", "LOG-FILTER-001", "LOG-STATS-001", "LOG-SECRET-001", "LOG-SECRET-002",
		"LOG-EVENT-001", "LOG-EVENT-002", "LOG-EVENT-003", "LOG-TEXT-001"} {
		if res := outcomes[id]; res.Outcome != Skip {
			t.Errorf("%s: %v, want SKIP", id, res.Outcome)
		}
	}
	for _, id := range []string{"LOG-AUTH-001", "LOG-VIEW-002", "LOG-FILTER-030"} {
		if res := outcomes[id]; res.Outcome != Pass {
			t.Errorf("%s: %v %s, want PASS (it needs no logged requests)", id, res.Outcome, res.Detail)
		}
	}
}

// TestMailChecksSkip runs the checks that read mail against fakes whose
// mail the suite cannot redirect to its sink: one refuses the smtp PATCH,
// one holds SMTP credentials the suite could not put back. Those checks
// are skipped with the reason; the OTP and MFA checks that need no mail
// still pass; the settings are left as they were.
func TestMailChecksSkip(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the mail checks")
	}
	needsMail := map[string]bool{"MFA-002": true, "MFA-005": true, "MFA-006": true, "OTP-007": false,
		"MFA-001": false, "MFA-003": false, "MFA-004": false, "OTP-507": false, "MFA-501": false, "MFA-503": false,
		"MFA-007": false, "MFA-008": false, "MFA-009": false}
	for _, tc := range []struct {
		name   string
		setup  func(*fakeServer)
		reason string
	}{
		{"smtp PATCH refused", func(f *fakeServer) { f.refuseSMTP = true }, "the server refused to send its mail to the suite's SMTP sink"},
		{"smtp credentials", func(f *fakeServer) { f.settings["smtp"].(map[string]any)["username"] = "mailer" }, `hold credentials (username "mailer")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFakeServer("admin@example.com", "Passw0rd!123")
			tc.setup(fake)
			before := mustJSON(fake.settings)
			srv := newFakeHTTPServer(fake)
			defer srv.Close()
			var reqs []*Requirement
			for _, r := range Requirements {
				if strings.HasPrefix(r.ID, "FLOW-MAIL-") || strings.HasPrefix(r.ID, "OTP-") || strings.HasPrefix(r.ID, "MFA-") {
					reqs = append(reqs, r)
				}
			}
			rep := runRequirements(t.Context(), Config{BaseURL: srv.URL, Email: "admin@example.com", Password: "Passw0rd!123",
				Profile: SourceStrongbox}, reqs)
			for _, res := range rep.Results {
				mail, listed := needsMail[res.Req.ID]
				mail = mail || !listed
				switch {
				case mail && (res.Outcome != Skip || !strings.Contains(res.Detail, tc.reason)):
					t.Errorf("%s: %v %q, want SKIP with %q", res.Req.ID, res.Outcome, res.Detail, tc.reason)
				case !mail && res.Outcome != Pass:
					t.Errorf("%s: %v %q, want PASS (it reads no mail)", res.Req.ID, res.Outcome, res.Detail)
				}
			}
			fake.mu.Lock()
			defer fake.mu.Unlock()
			if after := mustJSON(fake.settings); after != before {
				t.Errorf("settings changed: %s, want %s", after, before)
			}
		})
	}
}

// TestOAuth2ChecksSkipAndRestore runs the OAuth2 checks against fakes
// whose users collection the suite must not or cannot configure: one
// already has a provider (whose clientSecret GET never shows), one refuses
// any oauth2 PATCH. The checks of users are skipped with the reason and
// AUTH-OAUTH2-009 (on _superusers) still passes. Against a plain fake
// every check passes. Either way the oauth2 options of users and
// _superusers are left as they were, and no user is left behind.
func TestOAuth2ChecksSkipAndRestore(t *testing.T) {
	existing := []map[string]any{{"name": "google", "clientId": "id", "clientSecret": "secret", "authURL": "",
		"tokenURL": "", "userInfoURL": "", "displayName": "", "pkce": nil, "extra": nil}}
	for _, tc := range []struct {
		name   string
		setup  func(*fakeServer)
		reason string // "" = every check passes
	}{
		{"plain", func(*fakeServer) {}, ""},
		{"users has providers", func(f *fakeServer) { f.collection("users").oauth2Providers = existing }, "users already has OAuth2 providers"},
		{"oauth2 PATCH refused", func(f *fakeServer) { f.refuseOAuth2 = true }, "the server refused the suite's OAuth2 provider on users"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFakeServer("admin@example.com", "Passw0rd!123")
			tc.setup(fake)
			state := func() string {
				users := fake.collection("users")
				return mustJSON([]any{users.oauth2View(), users.oauth2Providers, fake.collection("_superusers").oauth2View(), len(users.records)})
			}
			before := state()
			srv := newFakeHTTPServer(fake)
			defer srv.Close()
			rep := runRequirements(t.Context(), Config{BaseURL: srv.URL, Email: "admin@example.com", Password: "Passw0rd!123",
				Only: "AUTH-OAUTH2-", Profile: SourceStrongbox}, Requirements)
			if len(rep.Results) != 14 {
				t.Fatalf("%d results, want 14 (11 and 3 pocketbase twins)", len(rep.Results))
			}
			for _, res := range rep.Results {
				skips := tc.reason != "" && res.Req.ID != "AUTH-OAUTH2-009" && res.Req.ID != "AUTH-OAUTH2-509"
				switch {
				case skips && (res.Outcome != Skip || !strings.Contains(res.Detail, tc.reason)):
					t.Errorf("%s: %v %q, want SKIP with %q", res.Req.ID, res.Outcome, res.Detail, tc.reason)
				case !skips && res.Outcome != Pass:
					t.Errorf("%s: %v %q, want PASS", res.Req.ID, res.Outcome, res.Detail)
				}
			}
			fake.mu.Lock()
			defer fake.mu.Unlock()
			if after := state(); after != before {
				t.Errorf("users and _superusers now %s, want %s", after, before)
			}
		})
	}
}
