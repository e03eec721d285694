// Package totp computes and checks the codes of authenticator apps: HOTP
// (RFC 4226) and TOTP (RFC 6238) with the parameters every app reads from
// an otpauth URI without asking, HMAC-SHA1, 6 digits and a 30-second step
// counted from the Unix epoch. It holds no state and knows nothing of
// records or storage: package strongbox/authn keeps the secrets, the last
// step each record used and the attempt counts.
//
// A secret is 20 random bytes (RFC 4226 §4 asks for at least 128 bits and
// recommends 160), shown to the user as unpadded base32 (RFC 4648 §6, the
// alphabet every app reads). Verify accepts the step of the time given and
// one step either side (RFC 6238 §5.2: a code typed just before a step
// ends, or on a phone whose clock is a little off), and returns the step
// that matched so that its caller can refuse any step up to it afterwards:
// a code is then accepted at most once. Codes are compared in constant
// time, and every step of the window is computed whether or not an earlier
// one matched.
//
// URI writes the Key URI Format of Google Authenticator
// (otpauth://totp/ISSUER:ACCOUNT?secret=…&issuer=…), which the other apps
// follow: the label's issuer and account are path-escaped apart (a colon
// in either is escaped, the one between them is not), the query values
// query-escaped. Only the secret and the issuer are written: the
// algorithm, digits and period are the defaults, which some apps ignore
// when written and others refuse when unusual.
package totp
