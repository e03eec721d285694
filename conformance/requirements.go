package conformance

import "slices"

// Requirements is the whole suite, in the order it runs: errors, headers
// and body limit, hostile clients (issue 8), password login, records
// (sign-up, access), collections, system collections, tokens (refresh,
// tampering, impersonation, file tokens), auth-methods, OTP and MFA, OAuth2
// sign-in, the account flows (account_flows.go), settings, rate limits and
// the login throttle, logs and log secrecy, then backups. The checks that
// read mail (account_flows_mail.go, otp.go) run the suite's SMTP sink and
// point the server at it for their duration (mail.go); the OAuth2 checks
// (oauth2.go) run the suite's own provider (oauth2provider.go) and
// configure it on users for theirs. Each area keeps its table in the file
// named after it (hostile.go for issue 8's hostile clients); the logs have
// one file per section (logs_auth.go … logs_fields.go), concatenated in
// logs.go. IDs are stable: a requirement that is dropped leaves its ID
// unused, and testdata/requirements.txt (checked by a test) lists every ID.
//
// Backups (§4.2, backups.go) run last: a full restore (only with
// Config.Destructive) restarts the server.
var Requirements = slices.Concat(
	errorRequirements,
	httpRequirements,
	hostileRequirements,
	authPasswordRequirements,
	recordRequirements,
	collectionRequirements,
	systemCollectionRequirements,
	authTokenRequirements,
	authMethodsRequirements,
	otpRequirements,
	mfaRequirements,
	oauth2Requirements,
	accountFlowRequirements,
	accountFlowMailRequirements,
	settingsRequirements,
	settingsMailRequirements,
	rateLimitRequirements,
	logsRequirements,
	logSecrecyRequirements,
	backupRequirements,
)
