package conformance

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Requirements is the whole suite, in the order it runs: errors, headers
// and body limit, hostile clients (issue 8), password login, records
// (sign-up, access), collections, system collections, tokens (refresh,
// tampering, impersonation, file tokens), auth-methods, OTP and MFA, TOTP
// (issue 34's authenticator apps, totp.go), OAuth2
// sign-in, the account flows (account_flows.go), settings, rate limits and
// the login throttle, logs and log secrecy, then backups. Issue 19 adds,
// after the records, the refusals of input that would otherwise be
// dropped (nodrop.go), and after the system collections the API rules
// (rules.go) and the auth system collections' records (records_system.go).
// Issue 29's hidden fields (hidden.go) follow nodrop.go; one of them runs
// the OAuth2 provider.
// Issue 20's new-login alert (auth_alert.go) follows the account flows.
// The checks that
// read mail (account_flows_mail.go, otp.go, auth_alert.go) run the suite's SMTP sink and
// point the server at it for their duration (mail.go); the OAuth2 checks
// (oauth2.go) run the suite's own provider (oauth2provider.go) and
// configure it on users for theirs. Each area keeps its table in the file
// named after it (hostile.go for issue 8's hostile clients); the logs have
// one file per section (logs_auth.go … logs_fields.go), concatenated in
// logs.go, and the backups one file per route (backups_list.go …
// backups_restore.go), concatenated in backups.go. IDs are stable: a
// requirement that is dropped leaves its ID unused, and
// testdata/requirements.txt (checked by a test) lists every ID.
//
// Backups (§4.2) run last: a full restore (only with
// Config.Destructive) restarts the server.
//
// Where the document leaves a choice open, a document requirement accepts
// every reading it allows and a pocketbase twin demands PocketBase's
// (stricterReadings).
var Requirements = withStricterReadings(slices.Concat(
	errorRequirements,
	httpRequirements,
	hostileRequirements,
	authPasswordRequirements,
	recordRequirements,
	noDropRequirements,
	hiddenRequirements,
	collectionRequirements,
	systemCollectionRequirements,
	ruleRequirements,
	systemRecordRequirements,
	authTokenRequirements,
	authMethodsRequirements,
	otpRequirements,
	mfaRequirements,
	totpRequirements,
	passkeyRequirements,
	oauth2Requirements,
	accountFlowRequirements,
	accountFlowMailRequirements,
	authAlertRequirements,
	settingsRequirements,
	settingsMailRequirements,
	settingsS3Requirements,
	backupKeepRequirements,
	backupStreamRequirements,
	rateLimitRequirements,
	logsRequirements,
	logSecrecyRequirements,
	logEventRequirements,
	backupRequirements,
	dashboardRequirements,
), stricterReadings)

// stricterReading names a document requirement whose check accepts every
// reading of something the document leaves open, and states PocketBase's
// reading of it, which the requirement's pocketbase twin demands.
type stricterReading struct {
	of   string // the document requirement
	what string // what the document leaves open, and PocketBase's choice
}

// stricterReadings are the document requirements that have a pocketbase
// twin. The twin runs the same check with Client.strict true, and its ID is
// the original's with 500 added (AUTH-PW-003 → AUTH-PW-503), so that the
// pair reads as one. The checks consult Client.strict for these things
// only: the key order of the error envelope, the messages §7 does not name
// (expectError), the Z of stats dates, totalPages in the list envelope, the
// auth-methods keys §2.7 leaves open, the order of the backup list, the
// 204 of a backup operation whose body §4.2 calls null, the headers of a
// backup download, the case of the Bearer scheme, the body of an MFA challenge, and the
// collectionId and collectionName of an authenticated record, the form of
// log ids, the exact form of an :excerpt, and validation codes and messages
// §7 does not name.
var stricterReadings = []stricterReading{
	{"ERR-001", "the error envelope's keys in the order data, message, status (§2.5 lists the fields, not an order)"},
	{"AUTH-PW-001", "the record's collectionId and collectionName (§2.6 leaves the record's other fields open)"},
	{"AUTH-PW-002", "the record's collectionId and collectionName (§2.6 leaves the record's other fields open)"},
	{"AUTH-PW-003", "the message " + quote(msgFailedAuth) + " (§5 fixes the status only)"},
	{"AUTH-PW-004", "the message " + quote(msgFailedAuth) + " (§5 fixes the status only)"},
	{"AUTH-PW-008", "the message " + quote(msgPasswordOff) + " (§5 fixes the status only)"},
	{"AUTH-REFRESH-009", "the scheme matched case-sensitively: lowercase \"bearer <token>\" refused with 401 too (§5.1 names no scheme; RFC 9110 makes schemes case-insensitive, and PocketBase from v0.36.4 accepts any case)"},
	{"AUTH-METHODS-001", "the descriptor's further keys password.identityFields (strings) and otp.enabled (§2.7 leaves further keys open)"},
	{"OTP-003", "the message " + quote(msgOTPInvalid) + " (§5 fixes the status only)"},
	{"OTP-004", "the message " + quote(msgOTPInvalid) + " (§5 fixes the status only)"},
	{"OTP-005", "the messages " + quote(msgOTPInvalid) + " and " + quote(msgOTPTooMany) + ", and the 429 from the 6th attempt, the right code's (§5 fixes the statuses only, and names no number)"},
	{"OTP-007", "the message " + quote(msgOTPOff) + " (§5 fixes the status only)"},
	{"MFA-001", "a first factor's 401 body of exactly {\"mfaId\"} (§5.6: the body contains mfaId)"},
	{"MFA-003", "the message " + quote(msgMFASame) + " (§5 fixes the status only)"},
	{"AUTH-OAUTH2-004", "the message \"Failed to fetch OAuth2 token.\" (§5 fixes the status only)"},
	{"AUTH-OAUTH2-006", "the message \"The collection is not configured to allow OAuth2 authentication.\" (§5 fixes the status only)"},
	{"AUTH-OAUTH2-009", "the message \"The collection is not configured to allow OAuth2 authentication.\" (§5 fixes the status only)"},
	{"LOG-ENTRY-001", "log ids of 15 characters [a-z0-9] (§2.2: an identifier)"},
	{"LOG-VIEW-004", "the excerpt's exact form: the first characters trimmed, then \"...\" (§4.1: a short plain-text version)"},
	{"LOG-LIST-001", "the list envelope with totalPages beside the keys of §2.4"},
	{"LOG-LIST-009", "totalPages, which §2.4 does not list, counting the pages (2)"},
	{"LOG-FIELDS-001", "the list envelope with totalPages beside the keys of §2.4"},
	{"LOG-FIELDS-002", "the excerpt's exact form: the first characters trimmed, then \"...\" (§4.1: a short plain-text version)"},
	{"LOG-FIELDS-003", "the excerpt's exact form: the first characters trimmed (§4.1: a short plain-text version)"},
	{"LOG-STATS-001", "dates with a trailing Z, YYYY-MM-DD HH:00:00.000Z (§2.3 writes the format without one)"},
	{"BKP-LIST-001", "the list ascending by key (§4.2 names no order)"},
	{"BKP-CREATE-001", "204 with no body (§4.2: the body is null)"},
	{"BKP-CREATE-002", "204 with no body (§4.2: the body is null)"},
	{"BKP-UPLOAD-001", "the message of data.file ending \"mime type must be one of: application/zip.\" (§4.2: it states the allowed type)"},
	{"BKP-UPLOAD-002", "data.file.code validation_required (§7 names no code but validation_invalid_mime_type)"},
	{"BKP-UPLOAD-003", "data.file.code validation_backup_name_exists (§7 names no code but validation_invalid_mime_type)"},
	{"BKP-UPLOAD-004", "204 with no body (§4.2: the body is null)"},
	{"BKP-DL-001", "Content-Type application/zip and a Content-Disposition attachment (§4.2 promises the file content only)"},
	{"BKP-DEL-001", "204 with no body (§4.2: the body is null)"},
}

// withStricterReadings returns reqs with the pocketbase twin of each
// reading inserted right after its document requirement, whose Text then
// says what it leaves to the twin.
func withStricterReadings(reqs []*Requirement, readings []stricterReading) []*Requirement {
	twins := map[string]*Requirement{}
	for _, sr := range readings {
		i := slices.IndexFunc(reqs, func(r *Requirement) bool { return r.ID == sr.of })
		if i < 0 || reqs[i].Source != SourceDocument {
			panic("conformance: stricter reading of " + sr.of + ", which is not a document requirement")
		}
		doc := *reqs[i]
		id := twinID(doc.ID)
		twins[doc.ID] = &Requirement{
			ID:      id,
			Source:  SourcePocketBase,
			Section: doc.Section + "; PocketBase v0.31.0 (where the document leaves it open: " + sr.what + ")",
			Name:    doc.Name + ", as PocketBase",
			Text:    doc.Text + " PocketBase's reading, demanded here: " + sr.what + ".",
			Run:     doc.Run,
		}
		doc.Text += " Where the document leaves a choice open this accepts every reading; " + id +
			" demands PocketBase's: " + sr.what + "."
		reqs[i] = &doc
	}
	out := make([]*Requirement, 0, len(reqs)+len(twins))
	for _, r := range reqs {
		out = append(out, r)
		if t := twins[r.ID]; t != nil {
			out = append(out, t)
		}
	}
	return out
}

// twinID adds 500 to the number that ends id: AUTH-PW-003 → AUTH-PW-503.
func twinID(id string) string {
	i := strings.LastIndexByte(id, '-')
	n, err := strconv.Atoi(id[i+1:])
	if err != nil || n >= 500 {
		panic("conformance: no twin ID for " + id)
	}
	return fmt.Sprintf("%s-%03d", id[:i], n+500)
}

// quote writes a message as the requirement texts do, in double quotes.
func quote(s string) string { return `"` + s + `"` }
