// Package authn holds strongbox's auth collections and records and
// authenticates them: bcrypt password hashes, and hand-written HS256 JWTs.
//
// # Storage
//
// A Store keeps every collection and record in memory and persists each
// change as one frame of an append-only journal (package
// strongbox/logstore/journal): the new full state of the collection or
// record, or its deletion, as JSON with a format version (see "Journal
// records" below; package journal documents the frames). The frame is
// fsynced before the change is acknowledged. At start the journal is replayed in order; a torn last frame
// (a crash during an append) is dropped, and damage in the middle is refused
// with its offset rather than silently losing a record. When the journal has
// grown to four times its live data it is compacted: the live state is
// written to a new file that is renamed over the old one.
//
// Records are immutable once stored, so readers hold no locks while they use
// one; an update stores a new *Record.
//
// # Tokens
//
// Tokens are compact JWTs (RFC 7519) with the header {"alg":"HS256",
// "typ":"JWT"} and the claims PocketBase uses: id, type, collectionId, exp
// and, for auth tokens, refreshable. The signing key of a token is the
// record's token key followed by the collection's secret for the token's
// type, so that
//
//   - rotating the record's token key (on a password or email change) ends
//     every token of the record, and
//   - a token of one type can never pass as another: the verifier picks the
//     secret of the type it expects, not the one the token claims.
//
// VerifyToken accepts only three segments of unpadded base64url, a header
// whose alg is exactly HS256 (RFC 8725 §2.1: the verifier, not the token,
// chooses the algorithm), a signature compared with hmac.Equal before any
// claim is trusted, the expected type, and an exp in the future when exp is
// present. The unverified id and collectionId serve only to find the key.
//
// The account flows' tokens (verification, passwordReset, emailChange; see
// flows.go) also carry email, the address they were mailed for, and the
// email-change token newEmail: verification lasts
// verificationToken.duration (3 days by default), passwordReset
// passwordResetToken.duration (30 minutes), emailChange
// emailChangeToken.duration (30 minutes). They always expire, and a token
// of one type never verifies as another or for another collection.
// Confirming a password reset or an email change rotates the record's
// token key, which is what makes each of them single-use: that token,
// every auth token and every other pending token of the record stop
// working, with no token state stored.
//
// Password tokens of the users collection carry no exp (§5.9 of the
// interface document) unless the collection sets authToken.duration, and a
// token without exp stops verifying once it does; those of _superusers last
// a day and those of other auth collections a week, and no other token is
// ever issued or accepted without exp. Impersonation tokens (not
// refreshable) last the requested duration, else the collection's, else a
// week. Changing a record's password or email ends all its tokens.
//
// # Sign-in
//
// Every sign-in by a login method checks its first factor with the
// method's own call (AuthWithPassword, AuthWithOTP, SignInOAuth2) and ends
// in Store.SignIn: the collection's authRule, then MFA, then the auth
// token, or an MFA challenge. Store.Refresh applies the same authRule to
// an auth-refresh. The HTTP layer only binds, throttles and renders.
//
// # API rules
//
// The rules of a collection (listRule, viewRule, createRule, updateRule,
// deleteRule, authRule, manageRule) are null (superusers only), "" (anyone)
// or a filter of package filterlang, the language of the filter
// parameter, over a record and a Request, evaluated as PocketBase v0.31.0
// does (package strongbox/httpapi/api has what each refusal answers). The
// operands are the record's own fields; @request.auth.* (the signed-in
// record's id, collectionId, collectionName and fields; empty for guests);
// @request.body.*, @request.query.*, @request.headers.* (lowercase, "-" as
// "_"), @request.method and @request.context (default, password, otp,
// oauth2, …), bound per evaluation as PocketBase binds request values
// (filterlang's Param fields); the date macros (@now, @todayStart, @hour,
// …) taken at the request's time; the modifiers :isset, :lower and
// :length; and the any-of operators (?=, ?~, …). Hidden fields are read,
// of the record and of @request.auth, as PocketBase's rules read them;
// password and tokenKey never. Joins (@collection.*, a related record's
// fields such as author.name) are not supported and are refused at save
// (validation_invalid_rule, saying joins are not supported), like a rule
// naming an unknown field, password, tokenKey, or an @request.auth field
// that no auth collection of the store has (PocketBase reads that as
// empty). Each stored version of a collection has its
// rules, and its mfa.rule, compiled once (on save and at start) and again
// when the auth collections' field names change, so that a rule whose
// @request.auth field has gone from all of them lets nobody through;
// RuleAllows and FilterByRule evaluate them.
//
// # One-time passwords and MFA
//
// An OTP is a code of otp.length digits drawn from the injected randomness,
// stored only as HMAC-SHA256 keyed by a per-OTP random salt (compared with
// hmac.Equal), bound to its record, valid otp.duration seconds from its
// creation and consumed by its first successful use; a record holds at
// most MaxLiveOTPs unexpired ones. RequestOTP answers before the OTP is on
// disk but hands the code to its caller (to mail it) only once it is
// fsynced, so that no code ever leaves the server that a crash could lose;
// DecoyOTP does the same work for an address no record has. An MFA session
// records that a record passed its first factor by one method; the second
// factor must present it with another method, once, within mfa.duration.
// Both are journal ops ("otp", "mfa" and their deletions), fsynced, so a
// restart loses none, and go with their record: deleting the record
// deletes them, and a new password ends the record's MFA sessions.
// Expired OTPs and sessions are refused at use, deleted at start and every
// hour, and never carried over by a compaction. The code is hashed with
// HMAC rather than a slow hash because whoever reads auth.journal also
// reads every token key and signing secret, so a slow hash would protect
// nothing more; OTPs live minutes. The defaults are PocketBase's: 8 digits
// valid 180 s, MFA sessions valid 1800 s. MFA needs two methods enabled,
// and applies to no auth-refresh or impersonation. On _superusers, OTP is
// only ever a second factor: enabling OTP enables MFA.
//
// SignIn decides who needs the second factor: everyone when
// mfa.rule is "", otherwise the records that satisfy the rule. The rule is
// read as an API rule is, against the record signing in and the sign-in's
// Request (@request.context is the sign-in method), as PocketBase
// evaluates it with the full request info; it is checked at save like
// the API rules (validation_invalid_rule), against the fields the
// collection will have, MFA on or off, and compiled and cached with them.
// It may name the record's fields (hidden ones too), @request.auth.* (the
// caller of the sign-in request, if it carries a token),
// @request.body.*, @request.query.*, @request.headers.*, @request.method,
// @request.context (the method of the factor being checked: password,
// otp, oauth2; so @request.context != 'otp' asks a second factor only of
// password sign-ins), the date macros (UTC, taken at each sign-in) and the
// modifiers. For example verified = false || created > @yesterday, or
// email ~ '@example.com' && level >= 5 (with a custom number field level).
//
// # Authenticator apps (TOTP)
//
// With an auth collection's totp.enabled (strongbox's own option, off by
// default; _superusers may have it too), a record may enrol an
// authenticator app: SetupTOTP draws a secret of 20 random bytes, pending
// until ConfirmTOTP gets a current code of it, which also returns the
// record's 10 recovery codes (xxxx-xxxx-xxxx, 59 bits each; stored only
// as SHA-256 hashes, compared in constant time, each usable once). The
// codes are package strongbox/authn/totp's: RFC 6238 with SHA-1, 6 digits,
// 30 s steps, one step of skew either side, the step of the store's
// injected clock.
//
// From confirmation on, every first factor of the record (password, OTP,
// OAuth2) opens an MFA session as mfa does, even with the collection's
// mfa off, and the sign-in completes only when one of its two factors is
// the record's own: AuthWithTOTP takes the session's id and a code (or a
// recovery code) and SignIn with MethodTOTP consumes the session. With mfa
// on, a password and an emailed OTP are not enough for such a record
// (ErrMFAFactor). TOTP is only ever a second factor, and does not count
// towards mfa's two methods: a record that has not enrolled could never
// sign in. Turning totp off keeps every record's TOTP but asks for none;
// turning it on again brings them back.
//
// A code is accepted at most once: the record's last accepted step is
// stored (durably, before the answer), and codes of that step and earlier
// are refused. Wrong codes are capped in memory: an MFA session dies
// after 5 (ErrTOTPTooMany, sign in again) and a record takes 10 an hour
// from all sessions and clients together (TooManyError.RetryAfter), both
// checked before a code is compared, confirm and disable included; a
// restart forgets the counts. So someone who has the password guesses
// the code with odds of about 3 in 100,000 an hour.
//
// The secret is sealed with AES-256-GCM under a key drawn by HKDF-SHA256
// from the collection's authToken secret and id, its collection and record
// ids as associated data (a sealed secret copied to another record does
// not open), and is never returned after SetupTOTP. Whoever reads the
// whole journal reads that secret too, as with the OTPs' hashes; the
// sealing keeps the secret out of anything that holds the TOTP's frame
// without the collection's (a copied frame, a dump of the in-memory
// state). A new authToken secret (set by a superuser, or drawn when
// authRule changes) ends every token, and UpdateCollection seals every
// TOTP secret of the collection again under the new key in the same
// commit, so the authenticators keep working. A password change keeps
// the TOTP; DisableTOTP with a current or recovery code deletes it, and
// a superuser may delete another record's without one (force).
//
// # OAuth2 sign-in
//
// A collection's oauth2.providers are checked when it is saved, each
// error under oauth2.providers.<index>.<key>: name is required and one of
// the names PocketBase v0.31 registers ([ProviderNames], each with a
// preset in package strongbox/authn/oauth2), else
// validation_missing_provider "Invalid or missing provider with name X.";
// a name given twice is validation_duplicated_provider; clientId and
// clientSecret are required; authURL, tokenURL and userInfoURL are empty
// (the preset's) or an absolute http or https URL (validation_is_url);
// pkce null is the provider's default. clientSecret is never reported.
// _superusers never has OAuth2.
//
// [Store.SignInOAuth2] resolves a sign-in to a record and links it, in
// PocketBase's order (see it for the steps). Pre-account takeover (RFC
// 9700): someone may register victim@example.com with a password before
// the victim signs in with a provider that verifies that address. When the
// record found (already linked, or matched by the provider's email) is not
// the signed-in record, has an email and is not verified, strongbox does
// what PocketBase does: it gives the record a new random password (which
// also ends all its tokens and MFA sessions) and signs the provider's user
// in, so the squatter's password no longer works. An unverified record
// whose email is empty or the provider's becomes verified (one without an
// email gets the provider's); a verified record is signed in and linked
// unchanged, and the signed-in record linking a provider to itself keeps
// its password. Only an email the provider says is verified matches or is
// stored. Deleting a record deletes its links.
//
// # Passkeys
//
// With passkey.enabled (off by default; _superusers may use it too), a
// record registers WebAuthn credentials and signs in with them (method
// "passkey": one method for MFA, user verification or not). The checks of
// the ceremonies are package strongbox/authn/webauthn's; the store keeps
// the passkeys (journal op "passkey", with their record) and the
// challenges: 32 random bytes each, for one ceremony of one collection
// (and, for a registration, one record), used up by the first answer
// whatever it is, refused after PasskeyChallengeTTL (5 minutes), at most
// MaxPasskeyChallenges outstanding (the oldest dropped past it), in memory
// only (a restart ends the ceremonies under way). The user handle is the
// record id; a record has at most MaxPasskeys (20). Sign-in options for an
// identity list its record's passkeys; an identity no record has, or a
// record without passkeys, gets one made-up credential id (HMAC-SHA256 of
// the identity under the collection's auth token secret), the same at every
// request, so the answer does not tell who has an account (a record with
// several passkeys does list several). A counter that does not increase
// (unless both it and the stored one are 0) is logged as a possibly cloned
// authenticator and refused; every sign-in saves the new counter and the
// time of use (one journal write). Registrations, deletions and refused
// sign-ins are logged (info and warn events).
//
// # Passwords
//
// Passwords are 8 to 71 characters, as PocketBase's password field takes
// them, and at most 72 bytes, all of which bcrypt reads (longer input is
// refused, never truncated). They are hashed with bcrypt through a
// Hasher, which bounds how many bcrypt computations run at once so that a
// login flood queues instead of starving every other request of CPU: at
// most one computation per CPU, each on its own lower-priority thread,
// and at most 64 per CPU waiting (beyond that [ErrBusy]). A login for an
// unknown identity spends one computation at the median cost of its
// collection's stored hashes (imported PocketBase hashes keep cost 10
// whatever STRONGBOX_BCRYPT_COST is), at most 14 unless the Hasher's cost
// is higher, so its time does not tell it from a known one.
//
// # Journal records
//
// The payload of one frame of auth.journal is a JSON array of the changes
// (ops) of one commit. Every op carries its format version in the field
// "v", so that a later change of the format can tell old ops from new ones
// and migrate them (when replaying, and by compaction, which rewrites every
// live op in the current version). An op without "v" was written before
// the field existed, and is version 1. The store refuses an op of a
// version newer than it reads, with the frame's offset, rather than
// misread it. The ops of version 1:
//
//	{"v":1,"op":"collection","collection":C}: the new state of a collection,
//	{"v":1,"op":"record","record":R}: the new state of a record,
//	{"v":1,"op":"deleteCollection","id":ID} or {"v":1,"op":"deleteRecord","id":ID},
//	{"v":1,"op":"otp","otp":O}: a one-time password, O = {id, collectionId,
//	recordId, salt, hash, sentTo, created} where hash is the hex
//	HMAC-SHA256 of the code keyed by salt (the code itself is never written),
//	{"v":1,"op":"mfa","mfa":M}: an MFA session, M = {id, collectionId,
//	recordId, method, created},
//	{"v":1,"op":"deleteOTP","id":ID} or {"v":1,"op":"deleteMFA","id":ID},
//	{"v":1,"op":"externalAuth","externalAuth":L}: an OAuth2 link, L = {id,
//	collectionId, recordId, provider, providerId, created, updated},
//	unique per (collectionId, provider, providerId) and per (recordId, provider),
//	{"v":1,"op":"deleteExternalAuth","id":ID},
//	{"v":1,"op":"authOrigin","authOrigin":A}: a sign-in origin, A = {id,
//	collectionId, recordId, fingerprint, created, updated}, unique per
//	(collectionId, recordId, fingerprint), at most 5 per record,
//	{"v":1,"op":"deleteAuthOrigin","id":ID},
//	{"v":1,"op":"totp","totp":T}: a record's authenticator, T = {recordId,
//	collectionId, secret, confirmed, lastStep, recovery, created, updated}
//	where secret is the base64 of the nonce and the AES-256-GCM sealed
//	secret, lastStep the last step accepted (-1: none) and recovery the hex
//	SHA-256 of each unused recovery code; one per record,
//	{"v":1,"op":"deleteTOTP","id":RECORD_ID}.
//	{"v":1,"op":"passkey","passkey":P}: a passkey, P = {id, collectionId,
//	recordId, credentialId, publicKey (the COSE_Key), alg, signCount,
//	transports, name, created, lastUsed}, byte strings in standard base64,
//	unique per (collectionId, credentialId),
//	{"v":1,"op":"deletePasskey","id":ID}.
//
// (A strongbox older than TOTP or passkeys refuses a journal holding
// their ops as malformed: it does not know them.) Deleting a record or
// collection deletes its OTPs, MFA sessions, links, origins, TOTP and
// passkeys, and a record's new password hash ends its MFA sessions and
// origins. C is the collection as the API reports it, with its secrets
// (token secrets, OAuth2 client secrets); R is Record's JSON: id,
// collectionId, email, emailVisibility, verified, passwordHash, tokenKey,
// created, updated and fields (the custom fields by name).
package authn
