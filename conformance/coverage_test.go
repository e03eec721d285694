package conformance

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// specCase is one (endpoint, status, message) case that §4, §5 or §7 of the
// interface document names. Reqs lists the requirements that check it;
// Pending, when set, says why none does yet.
type specCase struct {
	Section  string
	Endpoint string
	Status   int    // 0 when the case is about behaviour rather than a status
	Message  string // the exact message the document names, if any
	Reqs     []string
	Pending  string
}

const (
	// The storage failures of §7 rows 1 and 5 cannot be caused from
	// outside: a black-box check has no way to break the server's disk.
	pendingStorage = "backups: needs the server's backup storage to fail, which no request can cause"
	// A create, delete or restore while another operation runs needs an
	// operation that lasts long enough to overlap, which a black-box check
	// cannot guarantee (BKP-CREATE-007 checks the answers when it happens);
	// a delete during an operation is refused only for the archive in use
	// (as in PocketBase), with its own message.
	pendingBackupBusy = "backups: needs a create or restore that overlaps, which no request can guarantee"
	// Statements of the document that no request can observe.
	unobservable = "not observable from outside: no request can tell"
)

// documentCases is every case the interface document names: the shapes of
// §2, the rules of §3, each endpoint's (status, message) cases of §4 with
// every field, sort field, operand and operator §4.1, §4.3 and §4.4 allow,
// the rules of §5, the rows of §7, the limits of §8 and §9's one statement.
// Keep it in step with the document: a case without a requirement and
// without a pending reason fails TestCoverage.
var documentCases = []specCase{
	// §2 shapes
	{Section: "§2.2", Endpoint: "log entry", Reqs: []string{"LOG-ENTRY-001", "LOG-ENTRY-002", "LOG-ENTRY-003"}},
	{Section: "§2.3", Endpoint: "log statistics entry", Reqs: []string{"LOG-STATS-001"}},
	{Section: "§2.4", Endpoint: "paginated list envelope", Reqs: []string{"LOG-LIST-001"}},
	{Section: "§2.5", Endpoint: "error envelope", Reqs: []string{"ERR-001"}},
	{Section: "§2.6", Endpoint: "authentication result", Reqs: []string{"AUTH-PW-001", "AUTH-PW-002"}},
	{Section: "§2.7", Endpoint: "auth methods descriptor", Reqs: []string{"AUTH-METHODS-001", "AUTH-METHODS-002"}},
	{Section: "§2.7 (PocketBase v0.31.0)", Endpoint: "oauth2.providers with name, displayName, state, authURL, codeVerifier, codeChallenge, codeChallengeMethod", Reqs: []string{"AUTH-OAUTH2-001"}},
	{Section: "§2.6", Endpoint: "authentication result meta.isNew (OAuth2)", Reqs: []string{"AUTH-OAUTH2-002", "AUTH-OAUTH2-003"}},
	{Section: "§2.1", Endpoint: "backup entry", Reqs: []string{"BKP-LIST-001"}},
	{Section: "§2.8", Endpoint: "OTP request result", Reqs: []string{"OTP-001", "OTP-006"}},

	// §4.1 fields
	{Section: "§4.1", Endpoint: "GET /api/logs fields", Status: 200, Reqs: []string{"LOG-FIELDS-001", "LOG-FIELDS-004"}},
	{Section: "§4.1", Endpoint: "GET /api/logs fields :excerpt", Status: 200, Reqs: []string{"LOG-FIELDS-002", "LOG-FIELDS-003"}},
	{Section: "§4.1", Endpoint: "GET /api/logs/{id} fields", Status: 200, Reqs: []string{"LOG-VIEW-003", "LOG-VIEW-004"}},
	{Section: "§4.1", Endpoint: "GET /api/logs/stats fields", Status: 200, Reqs: []string{"LOG-STATS-004"}},
	{Section: "§4.1", Endpoint: "GET /api/backups fields", Status: 200, Reqs: []string{"BKP-LIST-002"}},
	{Section: "§4.1", Endpoint: "GET /api/collections/{collection}/auth-methods fields", Status: 200, Reqs: []string{"AUTH-METHODS-006"}},
	{Section: "§4.1", Endpoint: "fields * (every key at its depth)", Status: 200, Reqs: []string{"LOG-FIELDS-005"}},
	{Section: "§4.1", Endpoint: "fields by dotted path", Status: 200, Reqs: []string{"LOG-FIELDS-004"}},

	// §4.2 backups
	{Section: "§4.2", Endpoint: "GET /api/backups", Status: 200, Reqs: []string{"BKP-LIST-001"}},
	{Section: "§4.2; §7 row 1", Endpoint: "GET /api/backups", Status: 400, Message: "Failed to load backups filesystem.", Pending: pendingStorage},
	{Section: "§4.2", Endpoint: "GET /api/backups", Status: 401, Message: msgNeedsToken, Reqs: []string{"BKP-LIST-003"}},
	{Section: "§4.2; §7 row 7", Endpoint: "GET /api/backups", Status: 403, Message: "Only superusers can perform this action.", Reqs: []string{"BKP-LIST-004"}},
	{Section: "§4.2", Endpoint: "POST /api/backups", Status: 204, Reqs: []string{"BKP-CREATE-001", "BKP-CREATE-002"}},
	{Section: "§4.2; §8 (name format; codes: PocketBase's)", Endpoint: "POST /api/backups invalid name", Status: 400, Message: msgValidation,
		Reqs: []string{"BKP-CREATE-003", "BKP-CREATE-004", "BKP-CREATE-005", "BKP-CREATE-006"}},
	{Section: "§4.2; §7 row 2", Endpoint: "POST /api/backups", Status: 400, Message: "Try again later - another backup/restore process has already been started.", Reqs: []string{"BKP-CREATE-007"}},
	{Section: "§4.2", Endpoint: "POST /api/backups", Status: 401, Message: msgNeedsToken, Reqs: []string{"BKP-CREATE-008"}},
	{Section: "§4.2; §7 row 8", Endpoint: "POST /api/backups", Status: 403, Message: msgNotAllowed, Reqs: []string{"BKP-CREATE-009"}},
	{Section: "§4.2", Endpoint: "POST /api/backups/upload", Status: 204, Reqs: []string{"BKP-UPLOAD-004"}},
	{Section: "§4.2; §7 row 3", Endpoint: "POST /api/backups/upload", Status: 400, Message: msgGenericBad + " (data.file validation_invalid_mime_type)", Reqs: []string{"BKP-UPLOAD-001"}},
	{Section: "§4.2; §7 row 3", Endpoint: "POST /api/backups/upload missing file, existing name", Status: 400, Message: msgGenericBad, Reqs: []string{"BKP-UPLOAD-002", "BKP-UPLOAD-003"}},
	{Section: "§4.2", Endpoint: "POST /api/backups/upload", Status: 401, Message: msgNeedsToken, Reqs: []string{"BKP-UPLOAD-005"}},
	{Section: "§4.2; §7 row 8", Endpoint: "POST /api/backups/upload", Status: 403, Message: msgNotAllowed, Reqs: []string{"BKP-UPLOAD-006"}},
	{Section: "§4.2", Endpoint: "DELETE /api/backups/{key}", Status: 204, Reqs: []string{"BKP-DEL-001"}},
	{Section: "§4.2 (message: PocketBase's, without its path)", Endpoint: "DELETE /api/backups/{key} missing", Status: 400, Reqs: []string{"BKP-DEL-002"}},
	{Section: "§4.2; §7 row 2", Endpoint: "DELETE /api/backups/{key}", Status: 400, Message: "Try again later - another backup/restore process has already been started.", Pending: pendingBackupBusy},
	{Section: "§4.2", Endpoint: "DELETE /api/backups/{key}", Status: 401, Message: msgNeedsToken, Reqs: []string{"BKP-DEL-003"}},
	{Section: "§4.2; §7 row 8", Endpoint: "DELETE /api/backups/{key}", Status: 403, Message: msgNotAllowed, Reqs: []string{"BKP-DEL-004"}},
	{Section: "§4.2; §3 rule 3", Endpoint: "POST /api/backups/{key}/restore", Status: 204, Reqs: []string{"BKP-FULLRESTORE-001"}},
	{Section: "§4.2 (message: PocketBase's)", Endpoint: "POST /api/backups/{key}/restore missing key", Status: 400, Message: "Missing or invalid backup file.", Reqs: []string{"BKP-RESTORE-001"}},
	{Section: "§4.2; §7 row 2", Endpoint: "POST /api/backups/{key}/restore", Status: 400, Message: "Try again later - another backup/restore process has already been started.", Pending: pendingBackupBusy},
	{Section: "§4.2", Endpoint: "POST /api/backups/{key}/restore", Status: 401, Message: msgNeedsToken, Reqs: []string{"BKP-RESTORE-002"}},
	{Section: "§4.2; §7 row 8", Endpoint: "POST /api/backups/{key}/restore", Status: 403, Message: msgNotAllowed, Reqs: []string{"BKP-RESTORE-003"}},
	{Section: "§4.2", Endpoint: "GET /api/backups/{key}", Status: 200, Reqs: []string{"BKP-DL-001"}},
	{Section: "§4.2; §5.10", Endpoint: "GET /api/backups/{key} without a superuser file token: an error, never the file", Reqs: []string{"BKP-DL-008"}},
	{Section: "§4.2; §5.10 (message: PocketBase's)", Endpoint: "GET /api/backups/{key} without a superuser file token", Status: 403, Message: "Insufficient permissions to access the resource.",
		Reqs: []string{"BKP-DL-002", "BKP-DL-003", "BKP-DL-004", "BKP-DL-005", "BKP-DL-006"}},
	{Section: "§4.2; §7 row 5", Endpoint: "GET /api/backups/{key}", Status: 400, Message: "Filesystem initialization failure.", Pending: pendingStorage},
	{Section: "§4.2; §7 row 9", Endpoint: "GET /api/backups/{key}", Status: 404, Message: msgNotFound, Reqs: []string{"BKP-DL-007"}},
	{Section: "§4.2 POST /api/backups", Endpoint: "body as JSON or multipart/form-data", Reqs: []string{"BKP-CREATE-001", "COLL-CRUD-001"}},
	{Section: "§8", Endpoint: "one backup/restore operation at a time", Reqs: []string{"BKP-CREATE-007"}},
	{Section: "§8", Endpoint: "backup name format [a-z0-9_-].zip", Status: 400, Reqs: []string{"BKP-CREATE-010", "BKP-CREATE-003", "BKP-CREATE-004"}},
	{Section: "§8", Endpoint: "upload: multipart/form-data only", Status: 400, Message: msgGenericBad, Reqs: []string{"BKP-UPLOAD-007"}},
	{Section: "§8", Endpoint: "upload: MIME type application/zip", Status: 400, Message: msgGenericBad, Reqs: []string{"BKP-UPLOAD-001"}},

	// §4.3 logs
	{Section: "§4.3", Endpoint: "GET /api/logs", Status: 200, Reqs: []string{"LOG-LIST-001", "LOG-LIST-002"}},
	{Section: "§4.3; §7 row 4", Endpoint: "GET /api/logs", Status: 400, Message: msgInvalidFilter,
		Reqs: []string{"LOG-FILTER-030", "LOG-FILTER-031", "LOG-FILTER-032", "LOG-FILTER-033", "LOG-FILTER-034"}},
	{Section: "§4.3; §7 row 6", Endpoint: "GET /api/logs", Status: 401, Message: msgNeedsToken, Reqs: []string{"LOG-AUTH-001", "LOG-AUTH-007", "LOG-AUTH-008"}},
	{Section: "§4.3; §7 row 8", Endpoint: "GET /api/logs", Status: 403, Message: msgNotAllowed, Reqs: []string{"LOG-AUTH-002"}},
	{Section: "§4.3", Endpoint: "GET /api/logs page/perPage", Status: 200, Reqs: []string{"LOG-LIST-003", "LOG-LIST-004", "LOG-LIST-005", "LOG-LIST-009"}},
	{Section: "§4.3", Endpoint: "GET /api/logs sort, no prefix and + (ascending)", Status: 200, Reqs: []string{"LOG-SORT-001"}},
	{Section: "§4.3", Endpoint: "GET /api/logs sort, - (descending)", Status: 200, Reqs: []string{"LOG-SORT-002"}},
	{Section: "§4.3", Endpoint: "GET /api/logs sort, comma-separated attributes", Status: 200, Reqs: []string{"LOG-SORT-006"}},
	{Section: "§4.3", Endpoint: "GET /api/logs sort field @random", Status: 200, Reqs: []string{"LOG-SORT-004"}},
	{Section: "§4.3", Endpoint: "GET /api/logs sort field rowid", Status: 200, Reqs: []string{"LOG-SORT-008"}},
	{Section: "§4.3", Endpoint: "GET /api/logs sort field id", Status: 200, Reqs: []string{"LOG-SORT-007"}},
	{Section: "§4.3", Endpoint: "GET /api/logs sort field created", Status: 200, Reqs: []string{"LOG-SORT-001", "LOG-SORT-002"}},
	{Section: "§4.3; §2.2", Endpoint: "GET /api/logs sort field updated", Status: 200, Reqs: []string{"LOG-SORT-009"}},
	{Section: "§4.3", Endpoint: "GET /api/logs sort field level", Status: 200, Reqs: []string{"LOG-SORT-006"}},
	{Section: "§4.3", Endpoint: "GET /api/logs sort field message", Status: 200, Reqs: []string{"LOG-SORT-010"}},
	{Section: "§4.3; §2.2", Endpoint: "GET /api/logs sort field data.*", Status: 200, Reqs: []string{"LOG-SORT-005"}},
	{Section: "§4.3", Endpoint: "GET /api/logs sort (unsupported field)", Status: 400, Message: msgGenericBad, Reqs: []string{"LOG-SORT-003"}},
	{Section: "§4.3", Endpoint: "GET /api/logs filter field id", Status: 200, Reqs: []string{"LOG-FILTER-022"}},
	{Section: "§4.3", Endpoint: "GET /api/logs filter field created", Status: 200, Reqs: []string{"LOG-FILTER-022"}},
	{Section: "§4.3; §2.2", Endpoint: "GET /api/logs filter field updated", Status: 200, Reqs: []string{"LOG-FILTER-025"}},
	{Section: "§4.3", Endpoint: "GET /api/logs filter field level", Status: 200, Reqs: []string{"LOG-FILTER-019", "LOG-FILTER-021"}},
	{Section: "§4.3", Endpoint: "GET /api/logs filter field message", Status: 200, Reqs: []string{"LOG-FILTER-007", "LOG-FILTER-008"}},
	{Section: "§4.3; §2.2", Endpoint: "GET /api/logs filter field data.*", Status: 200, Reqs: []string{"LOG-FILTER-001", "LOG-FILTER-027"}},
	{Section: "§4.3", Endpoint: "GET /api/logs filter optional (empty)", Status: 200, Reqs: []string{"LOG-FILTER-023"}},
	{Section: "§4.3", Endpoint: "GET /api/logs/{id}", Status: 200, Reqs: []string{"LOG-VIEW-001"}},
	{Section: "§4.3; §7 row 6", Endpoint: "GET /api/logs/{id}", Status: 401, Message: msgNeedsToken, Reqs: []string{"LOG-AUTH-003"}},
	{Section: "§4.3; §7 row 8", Endpoint: "GET /api/logs/{id}", Status: 403, Message: msgNotAllowed, Reqs: []string{"LOG-AUTH-004"}},
	{Section: "§4.3; §7 row 9", Endpoint: "GET /api/logs/{id}", Status: 404, Message: msgNotFound, Reqs: []string{"LOG-VIEW-002"}},
	{Section: "§4.3", Endpoint: "GET /api/logs/stats", Status: 200, Reqs: []string{"LOG-STATS-001", "LOG-STATS-002", "LOG-STATS-003"}},
	{Section: "§4.3", Endpoint: "GET /api/logs/stats one entry per hour with logs, ascending date", Status: 200, Reqs: []string{"LOG-STATS-001", "LOG-STATS-002"}},
	{Section: "§4.3", Endpoint: "GET /api/logs/stats filter fields id, created, level, message, data.*", Status: 200, Reqs: []string{"LOG-STATS-006"}},
	{Section: "§4.3; §2.2", Endpoint: "GET /api/logs/stats filter field updated", Status: 200, Reqs: []string{"LOG-STATS-007"}},
	{Section: "§4.3", Endpoint: "GET /api/logs/stats filter field rowid", Status: 200, Reqs: []string{"LOG-STATS-005"}},
	{Section: "§4.3; §7 row 4", Endpoint: "GET /api/logs/stats", Status: 400, Message: msgInvalidFilter,
		Reqs: []string{"LOG-STATS-010", "LOG-STATS-011", "LOG-STATS-012", "LOG-STATS-013", "LOG-STATS-014"}},
	{Section: "§4.3; §7 row 6", Endpoint: "GET /api/logs/stats", Status: 401, Message: msgNeedsToken, Reqs: []string{"LOG-AUTH-005"}},
	{Section: "§4.3; §7 row 8", Endpoint: "GET /api/logs/stats", Status: 403, Message: msgNotAllowed, Reqs: []string{"LOG-AUTH-006"}},
	{Section: "§8", Endpoint: "GET /api/logs page default 1, perPage default 30", Status: 200, Reqs: []string{"LOG-LIST-002"}},

	// §4.4 filter syntax, one case per operator and construct
	{Section: "§4.4", Endpoint: "filter =", Status: 200, Reqs: []string{"LOG-FILTER-001"}},
	{Section: "§4.4", Endpoint: "filter !=", Status: 200, Reqs: []string{"LOG-FILTER-002"}},
	{Section: "§4.4", Endpoint: "filter >", Status: 200, Reqs: []string{"LOG-FILTER-003"}},
	{Section: "§4.4", Endpoint: "filter >=", Status: 200, Reqs: []string{"LOG-FILTER-004"}},
	{Section: "§4.4", Endpoint: "filter <", Status: 200, Reqs: []string{"LOG-FILTER-005"}},
	{Section: "§4.4", Endpoint: "filter <=", Status: 200, Reqs: []string{"LOG-FILTER-006"}},
	{Section: "§4.4", Endpoint: "filter ~", Status: 200, Reqs: []string{"LOG-FILTER-007", "LOG-FILTER-024"}},
	{Section: "§4.4", Endpoint: "filter !~", Status: 200, Reqs: []string{"LOG-FILTER-008"}},
	{Section: "§4.4", Endpoint: "filter ?=", Status: 200, Reqs: []string{"LOG-FILTER-009"}},
	{Section: "§4.4", Endpoint: "filter ?!=", Status: 200, Reqs: []string{"LOG-FILTER-010"}},
	{Section: "§4.4", Endpoint: "filter ?>", Status: 200, Reqs: []string{"LOG-FILTER-011"}},
	{Section: "§4.4", Endpoint: "filter ?>=", Status: 200, Reqs: []string{"LOG-FILTER-012"}},
	{Section: "§4.4", Endpoint: "filter ?<", Status: 200, Reqs: []string{"LOG-FILTER-013"}},
	{Section: "§4.4", Endpoint: "filter ?<=", Status: 200, Reqs: []string{"LOG-FILTER-014"}},
	{Section: "§4.4", Endpoint: "filter ?~", Status: 200, Reqs: []string{"LOG-FILTER-015"}},
	{Section: "§4.4", Endpoint: "filter ?!~", Status: 200, Reqs: []string{"LOG-FILTER-016"}},
	{Section: "§4.4", Endpoint: "filter &&", Status: 200, Reqs: []string{"LOG-FILTER-017"}},
	{Section: "§4.4", Endpoint: "filter ||", Status: 200, Reqs: []string{"LOG-FILTER-018"}},
	{Section: "§4.4", Endpoint: "filter parentheses, nested", Status: 200, Reqs: []string{"LOG-FILTER-018", "LOG-FILTER-019"}},
	{Section: "§4.4", Endpoint: "the same filter syntax on log stats", Status: 200, Reqs: []string{"LOG-STATS-002", "LOG-STATS-006"}},
	{Section: "§4.4", Endpoint: "filter // comment", Status: 200, Reqs: []string{"LOG-FILTER-020"}},
	{Section: "§4.4", Endpoint: "filter operand: a field name", Status: 200, Reqs: []string{"LOG-FILTER-001"}},
	{Section: "§4.4", Endpoint: "filter operand: a single-quoted string", Status: 200, Reqs: []string{"LOG-FILTER-021", "LOG-FILTER-019"}},
	{Section: "§4.4", Endpoint: "filter operand: a double-quoted string", Status: 200, Reqs: []string{"LOG-FILTER-021", "LOG-FILTER-007"}},
	{Section: "§4.4", Endpoint: "filter operand: an integer", Status: 200, Reqs: []string{"LOG-FILTER-001"}},
	{Section: "§4.4", Endpoint: "filter operand: a number with a fraction", Status: 200, Reqs: []string{"LOG-FILTER-027"}},
	{Section: "§4.4", Endpoint: "filter operand: null", Status: 200, Reqs: []string{"LOG-FILTER-021"}},
	{Section: "§4.4", Endpoint: "filter operand: true", Status: 200, Reqs: []string{"LOG-FILTER-026"}},
	{Section: "§4.4", Endpoint: "filter operand: false", Status: 200, Reqs: []string{"LOG-FILTER-026"}},
	{Section: "§4.4", Endpoint: "filter ~ without % wraps the operand in %", Status: 200, Reqs: []string{"LOG-FILTER-007", "LOG-FILTER-008"}},
	{Section: "§4.4", Endpoint: "filter ~ with % uses the operand as the pattern", Status: 200, Reqs: []string{"LOG-FILTER-024"}},
	{Section: "§4.4", Endpoint: "malformed filter", Status: 400, Message: msgInvalidFilter, Reqs: []string{"LOG-FILTER-030", "LOG-STATS-010"}},

	// §4.5 auth endpoints
	{Section: "§4.5", Endpoint: "POST /api/collections/{collection}/auth-with-password", Status: 200, Reqs: []string{"AUTH-PW-001", "AUTH-PW-002", "AUTH-PW-009", "AUTH-PW-010"}},
	{Section: "§4.5", Endpoint: "POST /api/collections/{collection}/request-otp", Status: 200, Reqs: []string{"OTP-001", "OTP-006"}},
	{Section: "§4.5", Endpoint: "POST /api/collections/{collection}/auth-with-otp", Status: 200, Reqs: []string{"OTP-002", "MFA-002"}},
	{Section: "§4.5 (message: PocketBase's)", Endpoint: "POST /api/collections/{collection}/auth-with-otp wrong, used code", Status: 400, Message: msgOTPInvalid, Reqs: []string{"OTP-003", "OTP-004"}},
	{Section: "§4.5", Endpoint: "POST /api/collections/{collection}/auth-with-oauth2 (meta.isNew)", Status: 200, Reqs: []string{"AUTH-OAUTH2-002", "AUTH-OAUTH2-003"}},
	{Section: "§4.5 (message: PocketBase's)", Endpoint: "POST /api/collections/{collection}/auth-with-oauth2 code refused by the provider", Status: 400, Message: msgOAuth2Token, Reqs: []string{"AUTH-OAUTH2-004"}},
	{Section: "§4.5 (message: PocketBase's)", Endpoint: "POST /api/collections/{collection}/auth-with-oauth2 user endpoint failing", Status: 400, Message: msgOAuth2User, Reqs: []string{"AUTH-OAUTH2-005"}},
	{Section: "§4.5 (message: PocketBase's)", Endpoint: "POST /api/collections/{collection}/auth-with-oauth2 provider not configured", Status: 400, Message: msgLoadFailed + " (data.provider " + codeInvalidProvider + ")", Reqs: []string{"AUTH-OAUTH2-007"}},
	{Section: "§4.5 (message: PocketBase's)", Endpoint: "POST /api/collections/{collection}/auth-with-oauth2 without code, redirectURL", Status: 400, Message: msgLoadFailed, Reqs: []string{"AUTH-OAUTH2-008"}},
	{Section: "§4.5", Endpoint: "POST /api/collections/{collection}/impersonate/{id}", Status: 200, Reqs: []string{"AUTH-IMP-001", "AUTH-IMP-002"}},
	{Section: "§4.5", Endpoint: "POST /api/collections/{collection}/auth-refresh", Status: 200, Reqs: []string{"AUTH-REFRESH-001", "AUTH-REFRESH-006", "AUTH-REFRESH-008"}},
	{Section: "§4.5", Endpoint: "GET /api/collections/{collection}/auth-methods", Status: 200, Reqs: []string{"AUTH-METHODS-001", "AUTH-METHODS-002", "AUTH-METHODS-005"}},

	// §3 states and transitions
	{Section: "§3 rule 1", Endpoint: "one backup/restore at a time: create fails while another runs", Status: 400, Message: "Try again later - another backup/restore process has already been started.", Reqs: []string{"BKP-CREATE-007"}},
	{Section: "§3 rule 2", Endpoint: "delete fails while the target is being generated or restored", Status: 400, Pending: pendingBackupBusy},
	{Section: "§3 rule 3", Endpoint: "a successful restore restarts the process", Reqs: []string{"BKP-FULLRESTORE-001"}},
	{Section: "§3", Endpoint: "no state field on a backup entry", Reqs: []string{"BKP-LIST-001"}},
	{Section: "§3", Endpoint: "authentication is stateless; tokens are not stored", Pending: unobservable + " where a server keeps what it knows of its tokens"},

	// §5 authentication
	{Section: "§5.1", Endpoint: "Authorization: <token> (and Bearer)", Status: 200, Reqs: []string{"AUTH-REFRESH-001", "AUTH-REFRESH-002"}},
	{Section: "§5.2", Endpoint: "no logout endpoint; a client logs out by discarding its token", Pending: unobservable + " that an endpoint is absent under every name"},
	{Section: "§5.3", Endpoint: "tokens issued by the authentication endpoints", Reqs: []string{"AUTH-PW-001", "OTP-002", "AUTH-OAUTH2-002", "AUTH-IMP-001", "AUTH-REFRESH-001"}},
	{Section: "§5.4", Endpoint: "_superusers: full access, API rules ignored", Reqs: []string{"REC-ACCESS-004", "LOG-LIST-001", "BKP-LIST-001"}},
	{Section: "§5.4", Endpoint: "OAuth2 not supported for _superusers", Reqs: []string{"AUTH-METHODS-002", "AUTH-OAUTH2-009"}},
	{Section: "§5.4 (message: PocketBase's)", Endpoint: "auth-with-oauth2 on _superusers", Status: 403, Message: msgOAuth2Off, Reqs: []string{"AUTH-OAUTH2-009"}},
	{Section: "§5.5", Endpoint: "OAuth2 providers listed by auth-methods", Reqs: []string{"AUTH-OAUTH2-001"}},
	{Section: "§5.11", Endpoint: "state handed out for the client to check (fresh on every call, in the authURL)", Reqs: []string{"AUTH-OAUTH2-001"}},
	{Section: "§5.5", Endpoint: "OTP two steps", Reqs: []string{"OTP-001", "OTP-002"}},
	{Section: "§5.6", Endpoint: "MFA: 401 with mfaId, then mfaId on the second method", Status: 401, Reqs: []string{"MFA-001", "MFA-002"}},
	{Section: "§5.6 (message: PocketBase's)", Endpoint: "MFA second factor with the first factor's method", Status: 400, Message: msgMFASame, Reqs: []string{"MFA-003"}},
	{Section: "§5.6 (message: PocketBase's)", Endpoint: "MFA with an unknown mfaId", Status: 400, Message: msgMFAInvalid, Reqs: []string{"MFA-004"}},
	{Section: "§5.6 (message: PocketBase's)", Endpoint: "MFA with another record's mfaId", Status: 400, Message: msgMFAOther, Reqs: []string{"MFA-005"}},
	{Section: "§5.6; §5.8", Endpoint: "auth-refresh is not subject to MFA", Status: 200, Reqs: []string{"MFA-006"}},
	{Section: "§5.7", Endpoint: "impersonate: superuser only, duration", Status: 403, Message: msgNotAllowed, Reqs: []string{"AUTH-IMP-004", "AUTH-IMP-002"}},
	{Section: "§5.8", Endpoint: "auth-refresh rejects invalid tokens", Status: 401, Message: msgNeedsToken,
		Reqs: []string{"AUTH-TAMPER-001", "AUTH-TAMPER-002", "AUTH-TAMPER-003", "AUTH-TAMPER-004", "AUTH-TAMPER-005",
			"AUTH-TAMPER-006", "AUTH-TAMPER-007", "AUTH-TAMPER-008", "AUTH-TAMPER-009"}},
	{Section: "§5.9", Endpoint: "users password tokens are static", Reqs: []string{"AUTH-TOKEN-001"}},
	{Section: "§5.10", Endpoint: "log endpoints need a superuser token", Status: 403, Message: msgNotAllowed, Reqs: []string{"LOG-AUTH-002", "LOG-AUTH-004", "LOG-AUTH-006"}},
	{Section: "§5.10", Endpoint: "backup download takes a superuser file token", Reqs: []string{"BKP-DL-001", "BKP-DL-003", "BKP-DL-004"}},
	{Section: "§5", Endpoint: "400 invalid credentials", Status: 400, Message: msgFailedAuth, Reqs: []string{"AUTH-PW-003", "AUTH-PW-004"}},
	{Section: "§5", Endpoint: "401 missing or invalid token", Status: 401, Message: msgNeedsToken, Reqs: []string{"AUTH-REFRESH-003", "AUTH-REFRESH-004"}},
	{Section: "§5", Endpoint: "403 method not enabled for the collection", Status: 403, Message: msgPasswordOff, Reqs: []string{"AUTH-PW-008"}},
	{Section: "§5", Endpoint: "403 method not enabled for the collection (OTP)", Status: 403, Message: msgOTPOff, Reqs: []string{"OTP-007"}},
	{Section: "§5", Endpoint: "403 method not enabled for the collection (OAuth2)", Status: 403, Message: msgOAuth2Off, Reqs: []string{"AUTH-OAUTH2-006"}},
	{Section: "§5", Endpoint: "429 too many OTP attempts", Status: 429, Message: msgOTPTooMany, Reqs: []string{"OTP-005"}},

	// §9
	{Section: "§9", Endpoint: "paths carry no version segment", Reqs: []string{"LOG-LIST-001", "BKP-LIST-001", "AUTH-PW-001"}},

	// §7 rows not already named above
	{Section: "§7 row 6", Endpoint: "any endpoint needing a token", Status: 401, Message: msgNeedsToken,
		Reqs: []string{"LOG-AUTH-001", "AUTH-REFRESH-003", "AUTH-IMP-005", "AUTH-FILE-002", "COLL-AUTH-001", "SETTINGS-001"}},
	{Section: "§7 row 8", Endpoint: "log operations by a non-superuser", Status: 403, Message: msgNotAllowed, Reqs: []string{"LOG-AUTH-002", "LOG-AUTH-004", "LOG-AUTH-006"}},
	{Section: "§7 row 9", Endpoint: "GET /api/logs/{id} unknown id", Status: 404, Message: msgNotFound, Reqs: []string{"LOG-VIEW-002"}},
}

// beyondCases are the cases of areas the document leaves "not shown",
// checked against PocketBase v0.31.0, and the promises of the issues.
var beyondCases = []specCase{
	// Beyond the document: areas §1 says exist but whose contract is "not
	// shown", where PocketBase v0.31.0 decides, and what the issues add to the document.
	{Section: "§1 records (PocketBase v0.31.0)", Endpoint: "POST /api/collections/users/records (sign-up)", Status: 200,
		Reqs: []string{"REC-SIGNUP-002", "REC-SIGNUP-003", "REC-SIGNUP-007", "REC-SIGNUP-008"}},
	{Section: "§1 records (PocketBase v0.31.0)", Endpoint: "POST /api/collections/users/records (invalid sign-up)", Status: 400, Message: msgCreateFailed,
		Reqs: []string{"REC-SIGNUP-001", "REC-SIGNUP-002", "REC-SIGNUP-003", "REC-SIGNUP-004", "REC-SIGNUP-005", "REC-SIGNUP-006", "REC-SIGNUP-009"}},
	{Section: "§1 records (PocketBase v0.31.0)", Endpoint: "GET /api/collections/_superusers/records as a guest", Status: 403, Message: msgOnlySuperusers, Reqs: []string{"REC-ACCESS-001"}},
	{Section: "§1 records (PocketBase v0.31.0)", Endpoint: "GET /api/collections/users/records/{id} (owner, superuser)", Status: 200, Reqs: []string{"REC-ACCESS-002", "REC-ACCESS-004"}},
	{Section: "§1 records (PocketBase v0.31.0)", Endpoint: "GET /api/collections/users/records/{id} (another user, guest)", Status: 404, Message: msgNotFound, Reqs: []string{"REC-ACCESS-003"}},
	{Section: "§1 collections (PocketBase v0.31.0)", Endpoint: "/api/collections without a token", Status: 401, Message: msgNeedsToken, Reqs: []string{"COLL-AUTH-001"}},
	{Section: "§1 collections (PocketBase v0.31.0)", Endpoint: "/api/collections as a regular user", Status: 403, Message: msgNotAllowed, Reqs: []string{"COLL-AUTH-002"}},
	{Section: "§1 collections (PocketBase v0.31.0)", Endpoint: "POST /api/collections (auth, base)", Status: 200, Reqs: []string{"COLL-CRUD-001", "COLL-CRUD-002"}},
	{Section: "issue 19", Endpoint: "POST /api/collections type base refused on type (strongbox stores auth collections)", Status: 400, Reqs: []string{"COLL-BASE-001", "COLL-CRUD-002"}},
	{Section: "§1 collections (PocketBase v0.31.0)", Endpoint: "GET /api/collections", Status: 200, Reqs: []string{"COLL-CRUD-004"}},
	{Section: "§1 collections (PocketBase v0.31.0)", Endpoint: "GET, PATCH /api/collections/{idOrName}", Status: 200, Reqs: []string{"COLL-CRUD-003"}},
	{Section: "§1 collections (PocketBase v0.31.0)", Endpoint: "DELETE /api/collections/{idOrName}", Status: 204, Reqs: []string{"COLL-CRUD-003"}},
	{Section: "§1 collections (PocketBase v0.31.0)", Endpoint: "GET, DELETE /api/collections/{idOrName} unknown", Status: 404, Message: msgNotFound, Reqs: []string{"COLL-CRUD-003"}},
	{Section: "§4.5 account flows (PocketBase v0.31.0)", Endpoint: "request-verification, request-password-reset unknown email", Status: 204, Reqs: []string{"FLOW-001", "FLOW-MAIL-004"}},
	{Section: "§4.5 account flows (PocketBase v0.31.0)", Endpoint: "request-verification, then confirm-verification with the mailed token", Status: 204, Reqs: []string{"FLOW-MAIL-001"}},
	{Section: "§4.5 account flows (PocketBase v0.31.0)", Endpoint: "request-password-reset, then confirm-password-reset with the mailed token", Status: 204, Reqs: []string{"FLOW-MAIL-002"}},
	{Section: "§4.5 account flows (PocketBase v0.31.0)", Endpoint: "request-email-change, then confirm-email-change with the token mailed to the new address", Status: 204, Reqs: []string{"FLOW-MAIL-003"}},
	{Section: "§1 settings (PocketBase v0.31.0)", Endpoint: "GET /api/settings without a token", Status: 401, Message: msgNeedsToken, Reqs: []string{"SETTINGS-001"}},
	{Section: "§1 settings (PocketBase v0.31.0)", Endpoint: "GET /api/settings as a regular user", Status: 403, Message: msgNotAllowed, Reqs: []string{"SETTINGS-002"}},
	{Section: "§1 settings (PocketBase v0.31.0)", Endpoint: "GET /api/settings", Status: 200, Reqs: []string{"SETTINGS-003"}},
	{Section: "§1 settings (PocketBase v0.31.0)", Endpoint: "PATCH /api/settings invalid logs.maxDays", Status: 400, Message: msgSettingsSave, Reqs: []string{"SETTINGS-004"}},
	{Section: "§1 settings (PocketBase v0.31.0)", Endpoint: "POST /api/settings/test/email without a token", Status: 401, Message: msgNeedsToken, Reqs: []string{"SETTINGS-MAIL-001"}},
	{Section: "§1 settings (PocketBase v0.31.0)", Endpoint: "POST /api/settings/test/email as a regular user", Status: 403, Message: msgNotAllowed, Reqs: []string{"SETTINGS-MAIL-002"}},
	{Section: "§1 settings (PocketBase v0.31.0)", Endpoint: "POST /api/settings/test/email blank body", Status: 400, Message: msgTestEmailFailed, Reqs: []string{"SETTINGS-MAIL-003"}},
	{Section: "§1 settings (PocketBase v0.31.0)", Endpoint: "GET /api/settings backups.s3", Status: 200, Reqs: []string{"SETTINGS-S3-001"}},
	{Section: "§1 settings (PocketBase v0.31.0)", Endpoint: "PATCH /api/settings invalid backups.s3", Status: 400, Message: msgSettingsSave, Reqs: []string{"SETTINGS-S3-002"}},
	{Section: "§1 settings (PocketBase v0.31.0)", Endpoint: "POST /api/settings/test/s3 without a token", Status: 401, Message: msgNeedsToken, Reqs: []string{"SETTINGS-S3-003"}},
	{Section: "§1 settings (PocketBase v0.31.0)", Endpoint: "POST /api/settings/test/s3 as a regular user", Status: 403, Message: msgNotAllowed, Reqs: []string{"SETTINGS-S3-003"}},
	{Section: "§1 settings (PocketBase v0.31.0)", Endpoint: "POST /api/settings/test/s3 blank or bad filesystem", Status: 400, Message: msgTestS3Failed, Reqs: []string{"SETTINGS-S3-004"}},
	{Section: "§1 settings (PocketBase v0.31.0)", Endpoint: "GET /api/settings rateLimits", Status: 200, Reqs: []string{"RATE-001"}},
	{Section: "§1 settings (PocketBase v0.31.0)", Endpoint: "PATCH /api/settings invalid rateLimits", Status: 400, Message: msgSettingsSave, Reqs: []string{"RATE-002", "RATE-003"}},
	{Section: "§1 rate limits (PocketBase v0.31.0)", Endpoint: "a request over an enabled rule's limit", Status: 429, Message: msgTooManyRequests, Reqs: []string{"RATE-004", "RATE-005"}},
	{Section: "§1 (PocketBase v0.31.0)", Endpoint: "security headers on every response", Reqs: []string{"HTTP-HEADERS-001"}},
	{Section: "§8 (PocketBase v0.31.0's body limit)", Endpoint: "request body over 32 MiB", Status: 413, Message: msgTooLarge, Reqs: []string{"HTTP-LIMIT-001"}},
	{Section: "issue 8", Endpoint: "GET of a path that is not canonical (//, /./, /../) redirected with the envelope", Status: 307, Reqs: []string{"HTTP-PATH-001"}},
	{Section: "issue 8", Endpoint: "a request header line of 40,000 bytes", Status: 431, Reqs: []string{"HTTP-RAW-001"}},
	{Section: "issue 8", Endpoint: "a malformed request line", Status: 400, Message: msgGenericBad, Reqs: []string{"HTTP-RAW-002"}},
	{Section: "issue 8", Endpoint: "POST auth-with-password with a 2 MiB body", Status: 413, Message: msgTooLarge, Reqs: []string{"HTTP-LIMIT-002"}},
	{Section: "issue 4", Endpoint: "token query parameter and Authorization redacted in request logs", Reqs: []string{"LOG-SECRET-001"}},
	{Section: "issue 8", Endpoint: "secret parameters by a name rule and Referer userinfo redacted in request logs", Reqs: []string{"LOG-SECRET-002"}},
	{Section: "issue 21", Endpoint: "POST /api/backups/{key}/restore of a missing archive: an event of level 4 or more", Status: 400, Reqs: []string{"LOG-EVENT-001"}},
	{Section: "issue 21", Endpoint: "PATCH /api/settings: an audit entry naming the superuser and the keys changed", Status: 200, Reqs: []string{"LOG-EVENT-002"}},
	{Section: "issue 21", Endpoint: "no log entry holds an OAuth2 clientSecret set", Reqs: []string{"LOG-EVENT-003"}},
	{Section: "issue 21", Endpoint: "a CR LF in the URL is not a line break in a request log's message", Status: 404, Reqs: []string{"LOG-TEXT-001"}},
	{Section: "issue 23 (PocketBase v0.31.0)", Endpoint: "GET /_ and GET /_/: the dashboard", Status: 307, Reqs: []string{"DASH-001"}},
	{Section: "issue 23", Endpoint: "GET /_/: Content-Security-Policy, nosniff, ETag and 304", Status: 304, Reqs: []string{"DASH-002"}},
	{Section: "issue 8 (PocketBase v0.31.0)", Endpoint: "PATCH /api/collections/_superusers rules, name, type", Status: 400, Reqs: []string{"COLL-SYS-001", "COLL-SYS-003"}},
	{Section: "issue 8 (PocketBase v0.31.0)", Endpoint: "POST, GET /api/collections/_superusers/records as a guest after a refused rule change", Status: 403, Message: msgOnlySuperusers, Reqs: []string{"COLL-SYS-002"}},
	{Section: "issue 8 (PocketBase v0.31.0)", Endpoint: "PATCH /api/collections/{c} token duration out of range", Status: 400, Reqs: []string{"COLL-SYS-004", "COLL-SYS-005"}},
	{Section: "issue 8 (PocketBase v0.31.0)", Endpoint: "PATCH /api/collections/_superusers oauth2, passwordAuth", Reqs: []string{"COLL-SYS-006"}},
	{Section: "issue 8 (PocketBase v0.31.0: a record id cannot change)", Endpoint: "PATCH /api/collections/users/records/{id} with another id", Status: 400, Reqs: []string{"REC-PK-001"}},
	{Section: "issue 8", Endpoint: "POST auth-with-password after failed attempts from one client", Status: 429, Message: msgTooManyLogins, Reqs: []string{"LOGIN-THROTTLE-001", "LOGIN-THROTTLE-002"}},
	{Section: "issue 20", Endpoint: "POST auth-with-password with the right password, 16 at once from one client or after failures from other clients", Status: 200, Reqs: []string{"LOGIN-THROTTLE-003", "LOGIN-THROTTLE-004"}},
	{Section: "issue 30", Endpoint: "POST request-password-reset over the mail limit of one client: Retry-After", Status: 429, Message: msgTooManyRequests, Reqs: []string{"RATE-MAIL-001"}},
	{Section: "§5 rule 6 (PocketBase v0.31.0)", Endpoint: "mfa.rule: MFA only for the records it matches", Status: 401, Reqs: []string{"MFA-007"}},
	{Section: "§5 rule 5 (PocketBase v0.31.0; issue 11)", Endpoint: "PATCH /api/collections/users with an invalid mfa.rule", Status: 400, Message: msgCollUpdate, Reqs: []string{"MFA-008", "MFA-009"}},
	{Section: "§4.5 auth-with-oauth2 (PocketBase v0.31.0)", Endpoint: "OAuth2 sign-in with an existing user's email: that user, takeover protection", Status: 200, Reqs: []string{"AUTH-OAUTH2-010", "AUTH-OAUTH2-011"}},

	// issue 19: API rules, the auth system collections, no dropped input
	{Section: "issue 19 (PocketBase v0.31.0)", Endpoint: "GET /api/collections/{c}/records through listRule (guest, signed in)", Status: 200, Reqs: []string{"RULE-LIST-001", "RULE-HEADER-001"}},
	{Section: "issue 19 (PocketBase v0.31.0)", Endpoint: "GET, PATCH, DELETE /api/collections/{c}/records/{id} denied by viewRule, updateRule, deleteRule", Status: 404, Message: msgNotFound,
		Reqs: []string{"RULE-VIEW-001", "RULE-UPDATE-001", "RULE-DELETE-001", "RULE-QUERY-001"}},
	{Section: "issue 19 (PocketBase v0.31.0)", Endpoint: "POST /api/collections/{c}/records denied by createRule", Status: 400, Message: msgCreateFailed, Reqs: []string{"RULE-CREATE-001", "RULE-BODY-001"}},
	{Section: "issue 19 (PocketBase v0.31.0)", Endpoint: "auth-with-password, auth-with-otp denied by authRule (before MFA)", Status: 403, Message: msgAuthRule, Reqs: []string{"RULE-AUTH-001", "RULE-AUTH-002", "RULE-AUTH-003"}},
	{Section: "issue 19 (PocketBase v0.31.0)", Endpoint: "PATCH /api/collections/{c}/records/{id} by a manager (manageRule)", Status: 200, Reqs: []string{"RULE-MANAGE-001"}},
	{Section: "issue 19 (PocketBase v0.31.0)", Endpoint: "PATCH of another's password without oldPassword by a non-manager", Status: 400, Message: msgUpdateFailed, Reqs: []string{"RULE-MANAGE-001"}},
	{Section: "issue 19 (PocketBase v0.31.0)", Endpoint: "_authOrigins, _mfas, _otps records: list, view, delete by superusers", Status: 204,
		Reqs: []string{"SYSREC-001", "SYSREC-003", "SYSREC-004"}},
	{Section: "issue 19 (PocketBase v0.31.0)", Endpoint: "_authOrigins records by the record they belong to", Status: 404, Message: msgNotFound, Reqs: []string{"SYSREC-002"}},
	{Section: "issue 19", Endpoint: "multipart record create, update with a file part", Status: 400, Reqs: []string{"NODROP-001", "NODROP-002"}},
	{Section: "issue 19", Endpoint: "a query pair Go's URL parser refuses", Status: 400, Reqs: []string{"NODROP-003"}},
	{Section: "issue 19 (PocketBase v0.31.0)", Endpoint: "GET /api/health realIP through trustedProxy", Status: 200, Reqs: []string{"NODROP-004"}},
	// issue 20: the new-login alert
	{Section: "issue 20 (PocketBase v0.31.0)", Endpoint: "POST /api/collections/users/auth-with-password from a new device (authAlert mail)", Status: 200, Reqs: []string{"AUTH-ALERT-001"}},
	// issue 20: public auth endpoints under abuse
	{Section: "issue 20", Endpoint: "POST /api/collections/users/auth-with-otp after 5 wrong codes from 5 addresses", Status: 429, Message: msgOTPTooMany, Reqs: []string{"OTP-ATTEMPTS-001"}},
	// issue 29: hidden fields
	{Section: "issue 29 (PocketBase v0.31.0)", Endpoint: "POST, PATCH /api/collections/{c}/records and auth-with-oauth2 createData with a hidden field, by a non-superuser and a superuser", Status: 200,
		Reqs: []string{"HIDDEN-001", "HIDDEN-002", "HIDDEN-003", "HIDDEN-004"}},
}

// TestCoverage fails when a case the interface document names has no
// requirement checking it (pending cases excepted and listed), when a case
// cites a requirement that does not exist, or when none of a case's
// requirements states its exact status and message.
func TestCoverage(t *testing.T) {
	specCases := slices.Concat(documentCases, beyondCases)
	byID := map[string]*Requirement{}
	for _, r := range Requirements {
		byID[r.ID] = r
	}
	var pending []string
	for _, sc := range specCases {
		name := fmt.Sprintf("%s %s", sc.Section, sc.Endpoint)
		if sc.Status != 0 {
			name += fmt.Sprintf(" %d", sc.Status)
		}
		if sc.Message != "" {
			name += fmt.Sprintf(" %q", sc.Message)
		}
		if sc.Pending != "" {
			if len(sc.Reqs) != 0 {
				t.Errorf("%s: pending (%s) but also lists requirements %v", name, sc.Pending, sc.Reqs)
			}
			pending = append(pending, name+" — "+sc.Pending)
			continue
		}
		if len(sc.Reqs) == 0 {
			t.Errorf("%s: no requirement checks this case", name)
			continue
		}
		stated := false
		for _, id := range sc.Reqs {
			r := byID[id]
			if r == nil {
				t.Errorf("%s: cites requirement %s, which does not exist", name, id)
				continue
			}
			if sc.Status != 0 && !strings.Contains(r.Text, fmt.Sprint(sc.Status)) {
				continue
			}
			msg, _, _ := strings.Cut(sc.Message, " (")
			if msg != "" && !strings.Contains(r.Text, `"`+msg+`"`) {
				continue
			}
			stated = true
		}
		if !stated {
			t.Errorf("%s: none of %v states the status and exact message in its Text", name, sc.Reqs)
		}
	}
	docPending := 0
	for _, sc := range documentCases {
		if sc.Pending != "" {
			docPending++
		}
	}
	t.Logf("the document's cases: %d, checked by a requirement: %d, pending: %d; cases beyond the document: %d",
		len(documentCases), len(documentCases)-docPending, docPending, len(beyondCases))
	t.Logf("%d cases pending:\n  %s", len(pending), strings.Join(pending, "\n  "))

	// Every requirement should be reachable from some case, so that the
	// case list stays an honest index of the suite.
	cited := map[string]bool{}
	for _, sc := range specCases {
		for _, id := range sc.Reqs {
			cited[id] = true
		}
	}
	var uncited []string
	for _, r := range Requirements {
		if !cited[r.ID] {
			uncited = append(uncited, r.ID)
		}
	}
	if len(uncited) > 0 {
		t.Logf("requirements not cited by any case (extra checks beyond the named cases): %v", uncited)
	}
}
