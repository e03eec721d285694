package conformance

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// A check that can never fail proves nothing. For every requirement, the
// table below names a deliberate violation the fake can commit (a bug, see
// fakeServer.bugs) that makes the check fail, or exemptions says in words
// why no violation of the fake can. TestEveryRequirementCanFail keeps the
// two lists complete, so a requirement added without either fails it;
// TestChecksCatchViolations turns each bug on in a fake of its own and
// requires every requirement it names to FAIL (not pass, not error).

// violation is one deliberate bug of the fake and the requirements it must
// make fail.
type violation struct {
	bug   string
	fails []string
}

// violations follows the order of Requirements, grouped by the file of the
// checks.
var violations = []violation{
	// errors (errors.go)
	{"envelope-text-plain", []string{"ERR-001"}},
	{"envelope-order", []string{"ERR-501"}},
	{"unknown-post-file-message", []string{"ERR-002"}},
	{"405", []string{"ERR-003"}},
	{"plain-text-404", []string{"ERR-004"}},

	// headers and body limit (http.go)
	{"no-security-headers", []string{"HTTP-HEADERS-001"}},
	{"no-body-limit", []string{"HTTP-LIMIT-001", "HTTP-LIMIT-002"}},

	// hostile clients (hostile.go)
	{"plain-text-redirect", []string{"HTTP-PATH-001"}},
	{"redirect-drops-query", []string{"HTTP-PATH-001"}},
	{"plain-text-431", []string{"HTTP-RAW-001"}},
	{"plain-text-400", []string{"HTTP-RAW-002"}},
	{"auth-body-32mib", []string{"HTTP-LIMIT-002"}},

	// password login (auth_password.go)
	{"superuser-record-without-email", []string{"AUTH-PW-001"}},
	{"login-shows-token-key", []string{"AUTH-PW-002"}},
	{"wrong-password-says-why", []string{"AUTH-PW-003"}},
	{"unknown-identity-404", []string{"AUTH-PW-004"}},
	{"blank-login-as-failed-auth", []string{"AUTH-PW-005"}},
	{"no-collection-message", []string{"AUTH-PW-006", "AUTH-REFRESH-007", "AUTH-METHODS-003"}},
	{"base-collection-message", []string{"AUTH-PW-007", "AUTH-METHODS-004"}},
	{"ignore-password-disabled", []string{"AUTH-PW-008"}},
	{"json-only", []string{"AUTH-PW-009"}},
	{"collection-by-name-only", []string{"AUTH-PW-010", "COLL-CRUD-003"}},

	// records (records.go)
	{"signup-email-optional", []string{"REC-SIGNUP-001"}},
	{"lax-password", []string{"REC-SIGNUP-002", "REC-SIGNUP-003"}},
	{"no-confirm-check", []string{"REC-SIGNUP-004"}},
	{"signup-all-at-once", []string{"REC-SIGNUP-009"}},
	{"lax-email", []string{"REC-SIGNUP-005"}},
	{"duplicate-emails", []string{"REC-SIGNUP-006"}},
	{"signup-shows-email", []string{"REC-SIGNUP-007"}},
	{"ignore-email-visibility", []string{"REC-SIGNUP-008"}},
	{"superusers-list-open", []string{"REC-ACCESS-001"}},
	{"owner-email-hidden", []string{"REC-ACCESS-002"}},
	{"records-visible", []string{"REC-ACCESS-003"}},
	{"superuser-sees-no-email", []string{"REC-ACCESS-004"}},

	// collections (collections.go)
	{"collections-guest-403", []string{"COLL-AUTH-001"}},
	{"collections-message", []string{"COLL-AUTH-002"}},
	{"create-ignores-type", []string{"COLL-CRUD-001"}},
	{"create-base-as-auth", []string{"COLL-CRUD-002"}},
	{"list-hides-system", []string{"COLL-CRUD-004"}},

	// system collections (collections_system.go)
	{"system-rules-open", []string{"COLL-SYS-001", "COLL-SYS-002"}},
	{"system-rename", []string{"COLL-SYS-003"}},
	{"superusers-static", []string{"COLL-SYS-004"}},
	{"durations-min-unchecked", []string{"COLL-SYS-005"}},
	{"superusers-oauth2", []string{"COLL-SYS-006", "AUTH-OAUTH2-009"}},
	{"pk-change", []string{"REC-PK-001"}},

	// tokens (auth_tokens.go)
	{"refresh-empty-token", []string{"AUTH-REFRESH-001"}},
	{"no-bearer", []string{"AUTH-REFRESH-002"}},
	{"guest-refresh-400", []string{"AUTH-REFRESH-003"}},
	{"bad-token-400", []string{"AUTH-REFRESH-004"}},
	{"refresh-cross-collection", []string{"AUTH-REFRESH-005"}},
	{"always-refresh", []string{"AUTH-REFRESH-006"}},
	{"superuser-refresh-static", []string{"AUTH-REFRESH-008"}},
	{"any-scheme", []string{"AUTH-REFRESH-009"}},
	{"users-exp", []string{"AUTH-TOKEN-001"}},
	{"superuser-static-login", []string{"AUTH-TOKEN-002"}},
	{"no-refreshable-claim", []string{"AUTH-TOKEN-003"}},
	{"no-signature-check", []string{"AUTH-TAMPER-001", "AUTH-TAMPER-004", "BKP-DL-005"}},
	{"trust-alg-header", []string{"AUTH-TAMPER-002", "AUTH-TAMPER-003"}},
	{"ignore-extra-segments", []string{"AUTH-TAMPER-005"}},
	{"ignore-exp", []string{"AUTH-TAMPER-006"}},
	{"any-token-type", []string{"AUTH-TAMPER-007", "BKP-DL-006"}},
	{"no-key-rotation", []string{"AUTH-TAMPER-008"}},
	{"deleted-records-authenticate", []string{"AUTH-TAMPER-009"}},
	{"impersonate-refreshable", []string{"AUTH-IMP-001"}},
	{"impersonate-ignore-duration", []string{"AUTH-IMP-002"}},
	{"impersonate-negative-ok", []string{"AUTH-IMP-003"}},
	{"users-impersonate", []string{"AUTH-IMP-004"}},
	{"impersonate-guest-403", []string{"AUTH-IMP-005"}},
	{"impersonate-unknown-message", []string{"AUTH-IMP-006"}},
	{"impersonate-collection-message", []string{"AUTH-IMP-007"}},
	{"file-token-type-auth", []string{"AUTH-FILE-001"}},
	{"guest-file-token", []string{"AUTH-FILE-002"}},

	// auth-methods (auth_methods.go)
	{"methods-no-mfa", []string{"AUTH-METHODS-001", "AUTH-METHODS-002"}},
	{"superusers-oauth2-listed", []string{"AUTH-METHODS-002"}},
	{"methods-ignore-options", []string{"AUTH-METHODS-005"}},
	{"methods-ignore-fields", []string{"AUTH-METHODS-006"}},

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

	// account flows (account_flows.go)
	{"unknown-email-404", []string{"FLOW-001"}},
	{"blank-email-204", []string{"FLOW-002"}},
	{"superusers-verification-204", []string{"FLOW-003"}},
	{"email-change-any-auth", []string{"FLOW-004"}},
	{"confirm-any-token", []string{"FLOW-005"}},

	// account flows with a mailbox (account_flows_mail.go)
	{"verification-not-applied", []string{"FLOW-MAIL-001"}},
	{"reset-keeps-token-key", []string{"FLOW-MAIL-002"}},
	{"email-change-not-applied", []string{"FLOW-MAIL-003"}},
	{"mail-unknown-email", []string{"FLOW-MAIL-004"}},

	// settings (settings.go)
	{"settings-guest-403", []string{"SETTINGS-001"}},
	{"test-email-for-guests", []string{"SETTINGS-MAIL-001"}},
	{"test-email-for-users", []string{"SETTINGS-MAIL-002"}},
	{"test-email-accepts-blank", []string{"SETTINGS-MAIL-003"}},
	{"settings-for-users", []string{"SETTINGS-002"}},
	{"settings-maxdays-string", []string{"SETTINGS-003"}},
	{"settings-accept-negative", []string{"SETTINGS-004"}},

	// rate limits and the login throttle (ratelimits.go)
	{"rate-rules-without-audience", []string{"RATE-001"}},
	{"lax-rate-rules", []string{"RATE-002", "RATE-003"}},
	{"limit-superusers", []string{"RATE-004"}},
	{"wildcard-auth-first", []string{"RATE-005"}},
	{"no-login-throttle", []string{"LOGIN-THROTTLE-001"}},
	{"count-logins", []string{"LOGIN-THROTTLE-002"}},

	// logs (logs_*.go)
	{"logs-guest-403", []string{"LOG-AUTH-001", "LOG-AUTH-003", "LOG-AUTH-005", "LOG-AUTH-007"}},
	{"users-read-logs", []string{"LOG-AUTH-002", "LOG-AUTH-004", "LOG-AUTH-006"}},
	{"filter-before-auth", []string{"LOG-AUTH-008"}},
	{"entry-without-useragent", []string{"LOG-ENTRY-001"}},
	{"log-auth-id", []string{"LOG-ENTRY-002"}},
	{"errors-level-0", []string{"LOG-ENTRY-003", "LOG-ENTRY-004"}},
	{"log-log-reads", []string{"LOG-ENTRY-005"}},
	{"view-drops-level", []string{"LOG-VIEW-001"}},
	{"view-unknown-400", []string{"LOG-VIEW-002"}},
	{"view-ignores-fields", []string{"LOG-VIEW-003", "LOG-VIEW-004"}},
	{"no-ellipsis", []string{"LOG-VIEW-004", "LOG-FIELDS-002"}},
	{"list-extra-key", []string{"LOG-LIST-001", "LOG-FIELDS-001"}},
	{"default-perpage-50", []string{"LOG-LIST-002", "LOG-LIST-004"}},
	{"no-perpage-cap", []string{"LOG-LIST-003"}},
	{"page-below-1-kept", []string{"LOG-LIST-005"}},
	{"lax-page-number", []string{"LOG-LIST-006", "LOG-LIST-007"}},
	{"ignore-skiptotal", []string{"LOG-LIST-008"}},
	{"page-offset-off-by-one", []string{"LOG-LIST-009"}},
	{"default-newest-first", []string{"LOG-LIST-010"}},
	{"plus-prefix-refused", []string{"LOG-SORT-001"}},
	{"ignore-descending", []string{"LOG-SORT-002", "LOG-SORT-006", "LOG-SORT-007"}},
	{"unknown-sort-ignored", []string{"LOG-SORT-003"}},
	{"random-refused", []string{"LOG-SORT-004"}},
	{"rowid-sort-refused", []string{"LOG-SORT-008"}},
	{"updated-sort-refused", []string{"LOG-SORT-009"}},
	{"data-sort-refused", []string{"LOG-SORT-005"}},
	{"message-sort-refused", []string{"LOG-SORT-010"}},
	{"eq-as-ge", []string{"LOG-FILTER-001"}},
	{"ne-as-eq", []string{"LOG-FILTER-002"}},
	{"gt-as-ge", []string{"LOG-FILTER-003"}},
	{"ge-as-gt", []string{"LOG-FILTER-004", "LOG-FILTER-022"}},
	{"lt-as-le", []string{"LOG-FILTER-005"}},
	{"le-as-lt", []string{"LOG-FILTER-006"}},
	{"like-whole-value", []string{"LOG-FILTER-007"}},
	{"not-like-as-like", []string{"LOG-FILTER-008"}},
	{"any-of-negated", []string{"LOG-FILTER-009", "LOG-FILTER-010", "LOG-FILTER-011", "LOG-FILTER-012", "LOG-FILTER-013",
		"LOG-FILTER-014", "LOG-FILTER-015", "LOG-FILTER-016"}},
	{"and-as-or", []string{"LOG-FILTER-017"}},
	{"or-as-and", []string{"LOG-FILTER-018"}},
	{"groups-ignored", []string{"LOG-FILTER-019"}},
	{"comment-to-end", []string{"LOG-FILTER-020"}},
	{"null-never-equal", []string{"LOG-FILTER-021"}},
	{"false-as-true", []string{"LOG-FILTER-026"}},
	{"fraction-refused", []string{"LOG-FILTER-027"}},
	{"id-filter-ignored", []string{"LOG-FILTER-022"}},
	{"updated-filter-ignored", []string{"LOG-FILTER-025"}},
	{"empty-filter-drops-errors", []string{"LOG-FILTER-023"}},
	{"percent-literal", []string{"LOG-FILTER-024"}},
	{"lenient-filter", []string{"LOG-FILTER-030", "LOG-FILTER-031", "LOG-FILTER-032", "LOG-FILTER-033", "LOG-FILTER-034",
		"LOG-STATS-010", "LOG-STATS-011", "LOG-STATS-012", "LOG-STATS-013", "LOG-STATS-014"}},
	{"reference-filter-message", []string{"LOG-FILTER-030", "LOG-FILTER-033", "LOG-STATS-010", "LOG-STATS-014"}},
	{"stats-without-z", []string{"LOG-STATS-501"}},
	{"stats-date-iso", []string{"LOG-STATS-001", "LOG-STATS-002"}},
	{"stats-empty-null", []string{"LOG-STATS-003"}},
	{"stats-ignore-fields", []string{"LOG-STATS-004"}},
	{"stats-refuse-rowid", []string{"LOG-STATS-005"}},
	{"stats-fields-refused", []string{"LOG-STATS-006"}},
	{"stats-updated-refused", []string{"LOG-STATS-007"}},
	{"fields-drop-envelope", []string{"LOG-FIELDS-001"}},
	{"excerpt-always-ellipsis", []string{"LOG-FIELDS-003"}},
	{"fields-no-nesting", []string{"LOG-FIELDS-004"}},
	{"fields-no-star", []string{"LOG-FIELDS-005"}},

	// log secrecy (logs_secrecy.go)
	{"log-token", []string{"LOG-SECRET-001", "LOG-SECRET-002"}},
	{"log-secret-names", []string{"LOG-SECRET-002"}},

	// backups (backups.go)
	{"backups-list-descending", []string{"BKP-LIST-501"}},
	{"backups-modified-iso", []string{"BKP-LIST-001"}},
	{"backups-ignore-fields", []string{"BKP-LIST-002"}},
	{"backups-guest-403", []string{"BKP-LIST-003", "BKP-CREATE-008", "BKP-UPLOAD-005", "BKP-DEL-003", "BKP-RESTORE-002"}},
	{"backups-list-reference-message", []string{"BKP-LIST-004"}},
	{"backups-users-allowed", []string{"BKP-LIST-004", "BKP-CREATE-009", "BKP-UPLOAD-006", "BKP-DEL-004", "BKP-RESTORE-003"}},
	{"create-returns-200", []string{"BKP-CREATE-001", "BKP-CREATE-002"}},
	{"create-requires-name", []string{"BKP-CREATE-002", "BKP-CREATE-007"}},
	{"lax-backup-name", []string{"BKP-CREATE-003", "BKP-CREATE-004", "BKP-CREATE-010"}},
	{"no-length-check", []string{"BKP-CREATE-005"}},
	{"create-overwrites", []string{"BKP-CREATE-006"}},
	{"generated-names-collide", []string{"BKP-CREATE-007"}},
	{"upload-trusts-extension", []string{"BKP-UPLOAD-001"}},
	{"upload-missing-file-500", []string{"BKP-UPLOAD-002"}},
	{"upload-overwrites", []string{"BKP-UPLOAD-003"}},
	{"upload-drops-file", []string{"BKP-UPLOAD-004"}},
	{"upload-accepts-raw", []string{"BKP-UPLOAD-007"}},
	{"download-octet-stream", []string{"BKP-DL-501"}},
	{"download-truncated", []string{"BKP-DL-001"}},
	{"download-open", []string{"BKP-DL-002", "BKP-DL-003", "BKP-DL-008"}},
	{"download-any-file-token", []string{"BKP-DL-004"}},
	{"download-unknown-400", []string{"BKP-DL-007"}},
	{"delete-keeps-file", []string{"BKP-DEL-001"}},
	{"delete-leaks-path", []string{"BKP-DEL-002"}},
	{"restore-missing-204", []string{"BKP-RESTORE-001"}},
	{"restore-noop", []string{"BKP-FULLRESTORE-001"}},

	// the choices the document leaves open, taken otherwise than PocketBase
	// (requirements.go, stricterReadings): only the pocketbase twins fail
	{"document-readings", stricterTwinIDs()},
}

// stricterTwinIDs returns the IDs of the pocketbase twins of
// stricterReadings.
func stricterTwinIDs() []string {
	var ids []string
	for _, sr := range stricterReadings {
		ids = append(ids, twinID(sr.of))
	}
	return ids
}

// exemptions lists the requirements no violation of the fake can make fail,
// each with the reason.
var exemptions = map[string]string{}

// TestEveryRequirementCanFail requires every requirement to be named by a
// violation or exempted with a reason (not both), and every name in the two
// tables to be a requirement.
func TestEveryRequirementCanFail(t *testing.T) {
	known := map[string]bool{}
	for _, r := range Requirements {
		known[r.ID] = true
	}
	shown := map[string][]string{}
	bugs := map[string]bool{}
	for _, v := range violations {
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
		t.Errorf("%d requirements have no violation in the fake that makes them fail and no written exemption "+
			"(add a bug to the fake and a line to violations, or a reason to exemptions): %s",
			len(missing), strings.Join(missing, " "))
	}
	t.Logf("%d requirements: %d shown able to fail by %d bugs, %d exempted, %d neither",
		len(Requirements), len(Requirements)-len(missing)-len(exemptions), len(violations), len(exemptions), len(missing))
}

// reBugName finds the bugs the fake's source consults: bug("name") calls and the
// bug field of fakeFilters.
var reBugName = regexp.MustCompile(`(?:\bbug\(|\bbug:\s*)"([a-z0-9-]+)"`)

// TestEveryBugIsListed requires every bug the fake can commit to be in
// violations, so that none sits unused and unchecked.
func TestEveryBugIsListed(t *testing.T) {
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
	byID := map[string]*Requirement{}
	for _, r := range Requirements {
		byID[r.ID] = r
	}
	for _, v := range violations {
		t.Run(v.bug, func(t *testing.T) {
			t.Parallel()
			var reqs []*Requirement
			for _, id := range v.fails {
				if r := byID[id]; r != nil {
					reqs = append(reqs, r)
				}
			}
			fake := newFakeServer("admin@example.com", "Passw0rd!123")
			fake.bugs[v.bug] = true
			srv := newFakeHTTPServer(fake)
			defer srv.Close()
			rep := runRequirements(t.Context(), Config{BaseURL: srv.URL, Email: "admin@example.com", Password: "Passw0rd!123",
				Profile:     SourceStrongbox,
				Destructive: true, RestartTimeout: time.Second}, reqs)
			var passed []string
			for _, res := range rep.Results {
				switch res.Outcome {
				case Fail:
					t.Logf("%s: %s", res.Req.ID, res.Detail)
					if res.Expected == "" || res.Actual == "" {
						t.Errorf("%s: a failure without a structured expected and actual (report it with Mismatch): %s",
							res.Req.ID, res.Detail)
					}
				case Pass:
					passed = append(passed, res.Req.ID)
				default:
					t.Errorf("%s: %v with bug %q, want FAIL (detail %q)", res.Req.ID, res.Outcome, v.bug, res.Detail)
				}
			}
			if len(passed) > 0 {
				sort.Strings(passed)
				t.Errorf("with bug %q these checks still pass: %s", v.bug, strings.Join(slices.Compact(passed), " "))
			}
		})
	}
}
