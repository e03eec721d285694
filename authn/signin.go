package authn

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
)

// Refusals and failures of SignIn and Refresh that are theirs alone; the
// others are the MFA errors (ErrMFARule, ErrMFAInvalid, ErrMFAOtherRecord,
// ErrMFASameMethod).
var (
	// ErrAuthRule: the collection's authRule does not let the request
	// sign in (a null rule lets only superusers).
	ErrAuthRule = errors.New("authn: the collection's authRule refuses the sign-in")
	// ErrMFABegin wraps the failure to store the MFA session of a first
	// factor.
	ErrMFABegin = errors.New("authn: could not create the MFA session")
	// ErrTokenIssue wraps the failure to sign an auth token.
	ErrTokenIssue = errors.New("authn: could not issue the auth token")
)

// SignIn is one sign-in by a login method whose first factor has passed:
// the password checked, the OTP consumed, the OAuth2 identity resolved.
type SignIn struct {
	Collection *Collection
	Record     *Record
	Method     string // MethodPassword, MethodOTP, MethodOAuth2 or MethodTOTP (second factor only)
	// MFAID is the MFA session a second factor presents, or "" for a
	// first factor.
	MFAID string
	// Superuser marks a request authenticated as a superuser, which
	// every authRule, even null, lets sign in.
	Superuser bool
	// Request is the sign-in request as the authRule reads it (nil: a
	// guest's, with nothing in it); its Context defaults to Method.
	Request *Request
	// Origin is the device the request comes from (Fingerprint of its
	// client IP and user agent), recorded as an auth origin of the record
	// when the sign-in completes and the collection's authAlert is
	// enabled, as PocketBase does; "" records none.
	Origin string
}

// Fingerprint is PocketBase's fingerprint of a sign-in's device: the hex
// MD5 of the client IP followed by the first 300 bytes of the user agent.
// It identifies a device for the auth origins; it protects nothing, so MD5
// is enough (and is what PocketBase stores).
func Fingerprint(ip, userAgent string) string {
	if len(userAgent) > 300 {
		userAgent = userAgent[:300]
	}
	sum := md5.Sum([]byte(ip + userAgent))
	return hex.EncodeToString(sum[:])
}

// Outcome is the result of a SignIn: exactly one of Token and MFAID is
// set.
type Outcome struct {
	// Token is the auth token (refreshable) of a completed sign-in.
	Token string
	// MFAID is the MFA session a first factor opened: the record must
	// sign in again by another method, presenting it.
	MFAID string
	// Alert tells that the completed sign-in warrants the collection's
	// authAlert mail to the record's email, as PocketBase v0.31.0 sends
	// it: authAlert is enabled, the sign-in's origin is new for the
	// record, the record had signed in from another origin before (its
	// first sign-in alerts nobody), and it has an email. Sending the mail
	// is the caller's.
	Alert bool
	// Methods are the factors of a completed sign-in: the first factor's
	// method and the second's, or the one method without MFA (for the
	// events and alerts that name them).
	Methods []string
}

// SignIn ends every sign-in by a login method, in PocketBase v0.31.0's
// order: the collection's authRule, then MFA, then the token.
//
//  1. ErrAuthRule when the authRule refuses the request.
//  2. With MFA required for the record and request (mfaRequired; an error
//     wrapping ErrMFARule when mfa.rule cannot be evaluated), or second
//     factors enrolled by the record (a confirmed TOTP while the
//     collection's totp is on), whatever mfa says, a first factor (no
//     MFAID) opens an MFA session and returns its id (a failure wraps
//     ErrMFABegin); a second factor must present a session of the same
//     record opened by another method, which it consumes (ErrMFAInvalid,
//     ErrMFAOtherRecord, ErrMFASameMethod, or the journal's error); when
//     the record enrolled factors, one of the two methods must be one of
//     them (ErrMFAFactor): a password and an emailed OTP do not pass for
//     a record that set up an authenticator.
//  3. The auth token (a failure wraps ErrTokenIssue).
//  4. The auth origin (in.Origin), when authAlert is enabled, and whether
//     it warrants the alert mail (Outcome.Alert). Failing to record it is
//     logged and does not fail the sign-in (nor alerts), as in PocketBase.
//
// The first factor's effects (an OTP consumed, an OAuth2 record created or
// linked) stay whatever SignIn returns, as in PocketBase.
func (s *Store) SignIn(ctx context.Context, in SignIn) (Outcome, error) {
	c, r := in.Collection, in.Record
	req := s.bindRequest(in.Request)
	if req.Context == "" {
		req.Context = in.Method
	}
	if err := s.authRuleAllows(c, r, in.Superuser, req); err != nil {
		return Outcome{}, err
	}
	mfa, err := s.mfaRequired(c, r, req)
	if err != nil {
		return Outcome{}, err
	}
	enrolled := s.enrolledFactors(c, r)
	methods := []string{in.Method}
	if mfa || len(enrolled) > 0 {
		if in.MFAID == "" {
			id, err := s.beginMFA(c, r, in.Method)
			if err != nil {
				return Outcome{}, fmt.Errorf("%w: %w", ErrMFABegin, err)
			}
			return Outcome{MFAID: id}, nil
		}
		first := s.mfaMethod(in.MFAID)
		if err := s.finishMFA(c, r, in.MFAID, in.Method, enrolled); err != nil {
			return Outcome{}, err
		}
		methods = []string{first, in.Method}
	}
	token, err := s.NewAuthToken(c, r, true, 0)
	if err != nil {
		return Outcome{}, fmt.Errorf("%w: %w", ErrTokenIssue, err)
	}
	return Outcome{Token: token, Alert: s.recordOrigin(c, r, in.Origin), Methods: methods}, nil
}

// recordOrigin records origin as an auth origin of r when c's authAlert is
// enabled, and reports whether the sign-in warrants the alert mail: the
// origin is new, r had others before, and r has an email.
func (s *Store) recordOrigin(c *Collection, r *Record, origin string) bool {
	if !c.AuthAlert.Enabled || origin == "" {
		return false
	}
	_, isNew, before, err := s.saveAuthOrigin(c, r.ID, origin)
	if err != nil {
		s.log.Warn("authn: could not record the sign-in's auth origin", "collection", c.Name, "record", r.ID, "err", err)
		return false
	}
	return isNew && before > 0 && r.Email != ""
}

// Refresh is an auth-refresh: the record signed in to its collection by
// the token Token, whose verified claims are Claims.
type Refresh struct {
	Collection *Collection
	Record     *Record
	Token      string
	Claims     *Claims
	Superuser  bool     // as in SignIn
	Request    *Request // as in SignIn; its Context defaults to ContextDefault
}

// Refresh applies the authRule to the record signed in (ErrAuthRule) and
// returns its new auth token when the token presented is refreshable, or
// that token unchanged (impersonation). A failure to sign wraps
// ErrTokenIssue.
func (s *Store) Refresh(ctx context.Context, in Refresh) (string, error) {
	if err := s.authRuleAllows(in.Collection, in.Record, in.Superuser, in.Request); err != nil {
		return "", err
	}
	if in.Claims.Refreshable == nil || !*in.Claims.Refreshable {
		return in.Token, nil
	}
	token, err := s.NewAuthToken(in.Collection, in.Record, true, 0)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrTokenIssue, err)
	}
	return token, nil
}

// authRuleAllows applies c's authRule to the sign-in of rec by req, as
// PocketBase v0.31.0 does for every login method and refresh: a request
// authenticated as a superuser always passes; otherwise a null rule
// refuses, "" admits, and a filter admits when rec and req satisfy it
// (a stored rule that no longer compiles refuses).
func (s *Store) authRuleAllows(c *Collection, rec *Record, superuser bool, req *Request) error {
	if superuser || s.RuleAllows(c, RuleAuth, rec, req) {
		return nil
	}
	return ErrAuthRule
}
