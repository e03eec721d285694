package conformance

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// documentSections are the sections of the interface document a Section
// may cite: its nine parts, the subsections of §2 and §4, and the rules of
// §3 and §5 (cited as §3.N and §5.N).
var documentSections = func() map[string]bool {
	m := map[string]bool{}
	add := func(prefix string, n int) {
		for i := 1; i <= n; i++ {
			m[prefix+strconv.Itoa(i)] = true
		}
	}
	add("§", 9)
	add("§2.", 8)
	add("§3.", 3)
	add("§4.", 5)
	add("§5.", 11)
	return m
}()

var reSectionCite = regexp.MustCompile(`§\d+(\.\d+)?`)

// TestRequirementSources requires every requirement to name a known source,
// and its Section to say where the rule comes from: a document requirement
// starts with a § of the interface document (and cites only sections the
// document has), a pocketbase requirement names PocketBase, and a
// strongbox requirement names the issue or the promise.
func TestRequirementSources(t *testing.T) {
	for _, r := range Requirements {
		switch r.Source {
		case SourceDocument:
			if !strings.HasPrefix(r.Section, "§") {
				t.Errorf("%s: a document requirement whose Section %q does not start with a § of the document", r.ID, r.Section)
			}
			// What follows "PocketBase" is about PocketBase, not the document.
			own, _, _ := strings.Cut(r.Section, "PocketBase")
			for _, cite := range reSectionCite.FindAllString(own, -1) {
				if !documentSections[cite] {
					t.Errorf("%s: Section %q cites %s, which the interface document does not have", r.ID, r.Section, cite)
				}
			}
		case SourcePocketBase:
			if !strings.Contains(r.Section, "PocketBase") {
				t.Errorf("%s: a pocketbase requirement whose Section %q does not name PocketBase", r.ID, r.Section)
			}
		case SourceStrongbox:
			if !strings.Contains(r.Section, "issue") && !strings.Contains(r.Section, "strongbox") {
				t.Errorf("%s: a strongbox requirement whose Section %q names neither the issue nor the promise", r.ID, r.Section)
			}
		default:
			t.Errorf("%s: Source %q, want document, pocketbase or strongbox", r.ID, r.Source)
		}
	}
}

// TestRunProfile checks the runner's filter: each profile runs the
// requirements of its source and of the looser ones, the default is
// document, and an unknown profile runs nothing and reports every selected
// requirement as Error with the reason.
func TestRunProfile(t *testing.T) {
	srv := stubServer(t, http.StatusOK)
	pass := func(context.Context, *Client) error { return nil }
	src := func(id string, s Source) *Requirement { r := stubReq(id, pass); r.Source = s; return r }
	reqs := []*Requirement{
		src("D-X-001", SourceDocument), src("P-X-001", SourcePocketBase), src("S-X-001", SourceStrongbox),
		src("D-X-002", SourceDocument),
	}
	for _, tc := range []struct {
		profile Source
		want    string
	}{
		{"", "D-X-001,D-X-002"},
		{SourceDocument, "D-X-001,D-X-002"},
		{SourcePocketBase, "D-X-001,P-X-001,D-X-002"},
		{SourceStrongbox, "D-X-001,P-X-001,S-X-001,D-X-002"},
	} {
		rep := runRequirements(t.Context(), Config{BaseURL: srv.URL, Email: "a@b.c", Password: "p", Profile: tc.profile}, reqs)
		var ids []string
		for _, res := range rep.Results {
			ids = append(ids, res.Req.ID)
		}
		if got := strings.Join(ids, ","); got != tc.want {
			t.Errorf("profile %q ran %s, want %s", tc.profile, got, tc.want)
		}
		if !rep.OK() {
			t.Errorf("profile %q: OK() = false for an all-pass run", tc.profile)
		}
	}

	ran := false
	reqs = append(reqs, src("D-X-003", SourceDocument))
	reqs[len(reqs)-1].Run = func(context.Context, *Client) error { ran = true; return nil }
	rep := runRequirements(t.Context(), Config{BaseURL: srv.URL, Email: "a@b.c", Password: "p", Profile: "strict"}, reqs)
	if ran {
		t.Errorf("a check ran under an unknown profile")
	}
	if len(rep.Results) != len(reqs) || rep.OK() {
		t.Fatalf("unknown profile: %d results, OK %v; want every requirement as Error", len(rep.Results), rep.OK())
	}
	for _, res := range rep.Results {
		if res.Outcome != Error || !strings.Contains(res.Detail, `unknown profile "strict"`) {
			t.Errorf("%s: %v %q, want ERROR naming the unknown profile", res.Req.ID, res.Outcome, res.Detail)
		}
	}
	if _, err := ParseProfile("strict"); err == nil {
		t.Errorf("ParseProfile(%q) = nil error", "strict")
	}
	for _, name := range []string{"", "document", "pocketbase", "strongbox"} {
		if _, err := ParseProfile(name); err != nil {
			t.Errorf("ParseProfile(%q) = %v", name, err)
		}
	}
}

// TestDocumentProfileAcceptsOpenReadings runs the suite against a fake that
// differs from PocketBase only where the document leaves a choice open
// (the bug document-readings: the envelope's keys in another order, its
// own words where §7 names no message, stats dates without a Z). The
// document profile passes it; the pocketbase profile fails it, on
// pocketbase requirements only, every twin of stricterReadings among them.
func TestDocumentProfileAcceptsOpenReadings(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole suite twice")
	}
	run := func(t *testing.T, profile Source) Report {
		return runOtherReadings(t, Config{Profile: profile}, Requirements)
	}
	t.Parallel()
	t.Run("document passes", func(t *testing.T) {
		t.Parallel()
		rep := run(t, SourceDocument)
		if len(rep.Results) != len(inProfile(SourceDocument)) {
			t.Fatalf("got %d results for the %d document requirements", len(rep.Results), len(inProfile(SourceDocument)))
		}
		reportAsSubtests(t, rep)
	})
	t.Run("pocketbase fails", func(t *testing.T) {
		t.Parallel()
		rep := run(t, SourcePocketBase)
		failed := map[string]bool{}
		for _, res := range rep.Results {
			switch {
			case res.Outcome == Error:
				t.Errorf("%s: ERROR %s", res.Req.ID, res.Detail)
			case res.Outcome == Fail && res.Req.Source != SourcePocketBase:
				t.Errorf("%s (%s) fails on a choice the document leaves open: %s", res.Req.ID, res.Req.Source, res.Detail)
			case res.Outcome == Fail:
				failed[res.Req.ID] = true
			}
		}
		for _, id := range twinsOf(func(string) bool { return true }) {
			if !failed[id] {
				t.Errorf("%s passes a server that takes another reading than PocketBase's", id)
			}
		}
		t.Logf("%d pocketbase requirements fail", len(failed))
	})
}

// TestStricterReadingsComplete runs every document requirement as if it
// were PocketBase's (Client.strict true) against the fake that takes the
// other readings the document allows. The ones that then fail are those
// whose check leaves something to a pocketbase twin: each must be in
// stricterReadings, or have its stricter part checked by a twin named
// here, so that the pocketbase profile loses nothing the document profile
// lets through.
func TestStricterReadingsComplete(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the document requirements")
	}
	t.Parallel()
	// The form of stats dates is the same check (Client.stats) in every
	// stats requirement, and the descriptor's shape the same
	// (fetchAuthMethods) in both auth-methods requirements, and the MFA
	// challenge (firstFactor) in every MFA requirement, and the record of
	// an authentication result (checkAuthResult) everywhere: one twin
	// demands PocketBase's reading. A document check that is the looser
	// form of a pocketbase requirement names that requirement.
	sharedTwin := map[string]string{"LOG-STATS-002": "LOG-STATS-501", "LOG-STATS-005": "LOG-STATS-501",
		"AUTH-METHODS-002": "AUTH-METHODS-501", "MFA-002": "MFA-501", "MFA-006": "MFA-501",
		"AUTH-PW-010": "AUTH-PW-502", "OTP-002": "AUTH-PW-502", "AUTH-OAUTH2-003": "AUTH-PW-502",
		"LOG-STATS-006": "LOG-STATS-501", "LOG-STATS-007": "LOG-STATS-501",
		// The document's looser checks of PocketBase requirements: the
		// stricter part is the named requirement's own.
		"BKP-CREATE-010": "BKP-CREATE-003", "BKP-UPLOAD-007": "BKP-UPLOAD-502"}
	twinned := map[string]bool{}
	for _, sr := range stricterReadings {
		twinned[sr.of] = true
	}
	var reqs []*Requirement
	for _, r := range Requirements {
		if r.Source == SourceDocument {
			strict := *r
			strict.Source = SourcePocketBase
			reqs = append(reqs, &strict)
		}
	}
	rep := runOtherReadings(t, Config{Profile: SourcePocketBase}, reqs)
	failed := map[string]bool{}
	for _, res := range rep.Results {
		switch res.Outcome {
		case Fail:
			failed[res.Req.ID] = true
			if !twinned[res.Req.ID] && sharedTwin[res.Req.ID] == "" {
				t.Errorf("%s checks PocketBase's reading of a choice the document leaves open, and has no pocketbase twin "+
					"(add it to stricterReadings): %s", res.Req.ID, res.Detail)
			}
		case Error:
			t.Errorf("%s: ERROR %s", res.Req.ID, res.Detail)
		}
	}
	for id := range twinned {
		if !failed[id] {
			t.Errorf("%s is in stricterReadings, but its check demands nothing more under PocketBase's readings", id)
		}
	}
}

// TestProfileCounts prints the number of requirements per profile and, per
// section of the interface document (the first one a requirement cites),
// per source. It is the figure issue 13 asks for:
//
//	go test ./conformance -run TestProfileCounts -v
func TestProfileCounts(t *testing.T) {
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s %s\n", "profile", "requirements")
	for _, p := range []Source{SourceDocument, SourcePocketBase, SourceStrongbox} {
		fmt.Fprintf(&b, "%-12s %d\n", p, len(inProfile(p)))
	}
	counts := map[string]map[Source]int{}
	for _, r := range Requirements {
		sec := firstDocumentCite(r.Section)
		if counts[sec] == nil {
			counts[sec] = map[Source]int{}
		}
		counts[sec][r.Source]++
	}
	secs := slices.SortedFunc(maps.Keys(counts), compareSections)
	fmt.Fprintf(&b, "\n%-8s %8s %10s %9s %6s\n", "section", "document", "pocketbase", "strongbox", "total")
	total := map[Source]int{}
	for _, sec := range secs {
		c := counts[sec]
		fmt.Fprintf(&b, "%-8s %8d %10d %9d %6d\n", sec, c[SourceDocument], c[SourcePocketBase], c[SourceStrongbox],
			c[SourceDocument]+c[SourcePocketBase]+c[SourceStrongbox])
		for s, n := range c {
			total[s] += n
		}
	}
	fmt.Fprintf(&b, "%-8s %8d %10d %9d %6d\n", "all", total[SourceDocument], total[SourcePocketBase], total[SourceStrongbox],
		len(Requirements))
	t.Logf("requirements per profile and per section:\n%s", b.String())
	if sum := total[SourceDocument] + total[SourcePocketBase] + total[SourceStrongbox]; sum != len(Requirements) {
		t.Errorf("the sources count %d requirements, the table holds %d", sum, len(Requirements))
	}
}

var reIssueNote = regexp.MustCompile(`issue \d+ \([^)]*\)`)

// firstDocumentCite returns the first section of the interface document
// that section cites, leaving out what an "issue N (…)" note and the
// part about PocketBase cite; "(none)" when it cites none.
func firstDocumentCite(section string) string {
	own, _, _ := strings.Cut(reIssueNote.ReplaceAllString(section, ""), "PocketBase")
	if sec := reSectionCite.FindString(own); sec != "" {
		return sec
	}
	return "(none)"
}

// runOtherReadings runs reqs under cfg against servers that take the other
// readings the document leaves open: the fake (bug document-readings) for
// the requirements it serves, a strongbox behind otherReadings for the
// logs and backups. The full restore needs a server that can restart, so
// it is not run against the strongbox served in process. Each of
// waitingChecks runs on servers of its own, beside the rest, so that a
// run takes as long as its slowest check (some 2 s) rather than the sum
// of their waits (9 s). The results are in the order of reqs.
func runOtherReadings(t *testing.T, cfg Config, reqs []*Requirement) Report {
	groups := waitingGroups(reqs)
	cfg.Email, cfg.Password = testEmail, testPassword
	// The servers start here, on the test's goroutine (startStrongbox
	// may fail the test); the runs, below, at once.
	type run struct {
		cfg  Config
		reqs []*Requirement
	}
	var runs []run
	for _, group := range groups {
		var onFake, onReal []*Requirement
		for _, r := range group {
			if fakeServes(r.ID) {
				onFake = append(onFake, r)
			} else {
				onReal = append(onReal, r)
			}
		}
		if len(onFake) > 0 {
			fake := newFakeServer(testEmail, testPassword)
			fake.bugs["document-readings"] = true
			srv := newFakeHTTPServer(fake)
			t.Cleanup(srv.Close)
			c := cfg
			c.BaseURL, c.Destructive = srv.URL, true
			runs = append(runs, run{c, onFake})
		}
		if len(onReal) > 0 {
			c := cfg
			c.BaseURL, c.Destructive = startFront(t, startStrongbox(t), otherReadings), false
			runs = append(runs, run{c, onReal})
		}
	}
	reports := make([]Report, len(runs))
	var wg sync.WaitGroup
	for i, r := range runs {
		wg.Go(func() { reports[i] = runRequirements(t.Context(), r.cfg, r.reqs) })
	}
	wg.Wait()
	byID := map[string]Result{}
	for _, r := range reports {
		for _, res := range r.Results {
			byID[res.Req.ID] = res
		}
	}
	var rep Report
	for _, r := range reqs {
		if res, ok := byID[r.ID]; ok {
			rep.Results = append(rep.Results, res)
		}
	}
	return rep
}
