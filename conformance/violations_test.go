package conformance

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// A check that can never fail proves nothing. For every requirement, a
// mutator in front of the real strongbox (mutators_test.go) or a
// deliberate violation the fake can commit (a bug, see fakeServer.bugs,
// kept for what the real server cannot be made to show) makes the check
// fail, or exemptions says in words why neither can.
// TestEveryRequirementCanFail keeps the lists complete, so a requirement
// added without any fails it; TestChecksCatchViolations turns each bug on
// in a fake of its own and TestMutatorsCatchViolations each mutator in
// front of a strongbox of its own, and both require every requirement
// named to FAIL (not pass, not error).

// violation is one deliberate bug of the fake and the requirements it must
// make fail.
type violation struct {
	bug   string
	fails []string
}

// violations are the bugs left to the fake: those that need a state of
// the server the real strongbox cannot be made to show through its
// answers alone (tokens of the fake's own making and what it accepts, the
// OTP, MFA and OAuth2 states, the mail it sends, what an update or a
// disabled option does). They follow the order of Requirements, grouped by
// the file of the checks.
var violations = []violation{
	// password login (auth_password.go)
	{"ignore-password-disabled", []string{"AUTH-PW-008"}},

	// system collections (collections_system.go)
	{"superusers-oauth2", []string{"COLL-SYS-006", "AUTH-OAUTH2-009"}},
	{"pk-change", []string{"REC-PK-001"}},

	// tokens (auth_tokens.go)
	{"always-refresh", []string{"AUTH-REFRESH-006"}},
	{"superuser-refresh-static", []string{"AUTH-REFRESH-008"}},
	{"users-exp", []string{"AUTH-TOKEN-001"}},
	{"superuser-static-login", []string{"AUTH-TOKEN-002"}},
	{"no-refreshable-claim", []string{"AUTH-TOKEN-003"}},
	{"no-signature-check", []string{"AUTH-TAMPER-001", "AUTH-TAMPER-004"}},
	{"trust-alg-header", []string{"AUTH-TAMPER-002", "AUTH-TAMPER-003"}},
	{"ignore-extra-segments", []string{"AUTH-TAMPER-005"}},
	{"ignore-exp", []string{"AUTH-TAMPER-006"}},
	{"any-token-type", []string{"AUTH-TAMPER-007"}},
	{"no-key-rotation", []string{"AUTH-TAMPER-008"}},
	{"deleted-records-authenticate", []string{"AUTH-TAMPER-009"}},
	{"impersonate-refreshable", []string{"AUTH-IMP-001"}},

	// OTP and MFA (otp.go)
	{"otp-mail-without-code", []string{"OTP-001"}},
	{"otp-result-without-record", []string{"OTP-002"}},
	{"otp-wrong-code-message", []string{"OTP-503"}},
	{"otp-wrong-code-data", []string{"OTP-003"}},
	{"otp-reusable", []string{"OTP-004"}},
	{"no-otp-attempt-limit", []string{"OTP-005"}},
	{"otp-unknown-email-404", []string{"OTP-006"}},
	{"otp-mail-unknown", []string{"OTP-006"}},
	{"otp-always-enabled", []string{"OTP-007"}},
	{"mfa-challenge-envelope", []string{"MFA-001"}},
	{"mfa-second-factor-challenged", []string{"MFA-002", "MFA-006"}},
	{"mfa-same-method-ok", []string{"MFA-003"}},
	{"mfa-bogus-message", []string{"MFA-004"}},
	{"mfa-any-record", []string{"MFA-005"}},
	{"mfa-on-refresh", []string{"MFA-006"}},
	{"mfa-rule-ignored", []string{"MFA-007"}},
	{"mfa-rule-unchecked", []string{"MFA-008"}},
	{"mfa-rule-reads-secrets", []string{"MFA-009"}},

	// OAuth2 sign-in (oauth2.go)
	{"oauth2-plain-pkce", []string{"AUTH-OAUTH2-001"}},
	{"oauth2-meta-without-isnew", []string{"AUTH-OAUTH2-002"}},
	{"oauth2-isnew-always", []string{"AUTH-OAUTH2-003"}},
	{"oauth2-no-email-match", []string{"AUTH-OAUTH2-010", "AUTH-OAUTH2-011"}},
	{"oauth2-takeover", []string{"AUTH-OAUTH2-010"}},
	{"oauth2-token-failure-500", []string{"AUTH-OAUTH2-004"}},
	{"oauth2-user-failure-as-token", []string{"AUTH-OAUTH2-005"}},
	{"oauth2-ignore-enabled", []string{"AUTH-OAUTH2-006"}},
	{"oauth2-any-provider", []string{"AUTH-OAUTH2-007"}},
	{"oauth2-validation-message", []string{"AUTH-OAUTH2-007", "AUTH-OAUTH2-008"}},

	// account flows with a mailbox (account_flows_mail.go)
	{"verification-not-applied", []string{"FLOW-MAIL-001"}},
	{"reset-keeps-token-key", []string{"FLOW-MAIL-002"}},
	{"email-change-not-applied", []string{"FLOW-MAIL-003"}},
	{"mail-unknown-email", []string{"FLOW-MAIL-004"}},

	// the choices the document leaves open, taken otherwise than PocketBase
	// (requirements.go, stricterReadings): only the pocketbase twins fail
	// (those of the logs and backups: other-readings, mutators_test.go)
	{"document-readings", twinsOf(fakeServes)},
}

// exemptions lists the requirements no mutator and no violation of the
// fake can make fail, each with the reason.
var exemptions = map[string]string{}

// TestEveryRequirementCanFail requires every requirement to be named by a
// violation or a mutator or exempted with a reason (not both), every bug
// to be named once across violations and mutators, and every name in the
// tables to be a requirement.
func TestEveryRequirementCanFail(t *testing.T) {
	known := map[string]bool{}
	for _, r := range Requirements {
		known[r.ID] = true
	}
	shown := map[string][]string{}
	bugs := map[string]bool{}
	all := slices.Clone(violations)
	for _, mu := range mutators() {
		all = append(all, violation{mu.bug, mu.fails})
	}
	for _, v := range all {
		if bugs[v.bug] {
			t.Errorf("bug %q is listed twice", v.bug)
		}
		bugs[v.bug] = true
		if len(v.fails) == 0 {
			t.Errorf("bug %q names no requirement", v.bug)
		}
		for _, id := range v.fails {
			if !known[id] {
				t.Errorf("bug %q names %s, which is not a requirement", v.bug, id)
			}
			shown[id] = append(shown[id], v.bug)
		}
	}
	for id, why := range exemptions {
		if !known[id] {
			t.Errorf("exemption for %s, which is not a requirement", id)
		}
		if strings.TrimSpace(why) == "" {
			t.Errorf("exemption for %s gives no reason", id)
		}
		if len(shown[id]) > 0 {
			t.Errorf("%s is exempted (%s) but bugs %v make it fail: drop the exemption", id, why, shown[id])
		}
	}
	var missing []string
	for _, r := range Requirements {
		if len(shown[r.ID]) == 0 && exemptions[r.ID] == "" {
			missing = append(missing, r.ID)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d requirements have no mutator or violation in the fake that makes them fail and no written exemption "+
			"(add a mutator, or a bug to the fake and a line to violations, or a reason to exemptions): %s",
			len(missing), strings.Join(missing, " "))
	}
	t.Logf("%d requirements: %d shown able to fail by %d mutators and %d bugs of the fake, %d exempted, %d neither",
		len(Requirements), len(Requirements)-len(missing)-len(exemptions), len(all)-len(violations), len(violations),
		len(exemptions), len(missing))
}

// reBugName finds the bugs the fake's source consults: bug("name") calls.
var reBugName = regexp.MustCompile(`\bbug\("([a-z0-9-]+)"`)

// reMutatorGroup finds the tables of mutators the mutators_*_test.go files
// declare.
var reMutatorGroup = regexp.MustCompile(`(?m)^var (\w+Mutators) = `)

// TestEveryBugIsListed requires every bug the fake can commit to be in
// violations, and every table of mutators to be in mutators, so that none
// sits unused and unchecked.
func TestEveryBugIsListed(t *testing.T) {
	groups, _ := filepath.Glob("mutators_*_test.go")
	all, err := os.ReadFile("mutators_test.go")
	if err != nil || len(groups) == 0 {
		t.Fatalf("no mutator sources found: %v", err)
	}
	for _, fn := range groups {
		src, err := os.ReadFile(fn)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range reMutatorGroup.FindAllSubmatch(src, -1) {
			if !regexp.MustCompile(`slices\.Concat\([^)]*\b` + string(m[1]) + `\b`).Match(all) {
				t.Errorf("%s: %s is not among the mutators (mutators_test.go)", fn, m[1])
			}
		}
	}
	files, err := filepath.Glob("fake*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fake sources found: %v", err)
	}
	listed := map[string]bool{}
	for _, v := range violations {
		listed[v.bug] = true
	}
	seen := map[string]bool{}
	for _, fn := range files {
		src, err := os.ReadFile(fn)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range reBugName.FindAllSubmatch(src, -1) {
			name := string(m[1])
			if !listed[name] && !seen[name] {
				t.Errorf("%s: bug %q is in the fake but not in violations", fn, name)
			}
			seen[name] = true
		}
	}
	for _, v := range violations {
		if !seen[v.bug] {
			t.Errorf("violations lists bug %q, which no fake source consults", v.bug)
		}
	}
}

// TestChecksCatchViolations turns on one bug at a time, in a fake of its own,
// runs only the requirements the bug names, and requires each to FAIL with
// a structured expected and actual. It runs them under the strongbox
// profile, which includes every requirement: a violation that only a
// stricter profile catches (document-readings) names the pocketbase
// requirements that catch it.
func TestChecksCatchViolations(t *testing.T) {
	if testing.Short() {
		t.Skip("runs parts of the suite many times")
	}
	t.Parallel()
	runConcurrently(t, len(violations), func(i int) string { return violations[i].bug }, func(t *testing.T, i int) {
		v := violations[i]
		fake := newFakeServer(testEmail, testPassword)
		fake.bugs[v.bug] = true
		srv := newFakeHTTPServer(fake)
		defer srv.Close()
		expectFailures(t, v.bug, v.fails, Config{BaseURL: srv.URL, Email: testEmail, Password: testPassword,
			Profile: SourceStrongbox, Destructive: true, RestartTimeout: time.Second})
	})
}
