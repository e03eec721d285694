package authn

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// MFA errors of SignIn, in the order finishMFA checks them, as
// PocketBase v0.31.0 does.
var (
	// ErrMFAInvalid: no such MFA session in the collection, or expired.
	ErrMFAInvalid = errors.New("authn: invalid or expired MFA session")
	// ErrMFAOtherRecord: the session was opened by another record.
	ErrMFAOtherRecord = errors.New("authn: MFA session of another record")
	// ErrMFASameMethod: the second factor used the first one's method.
	ErrMFASameMethod = errors.New("authn: MFA needs a different method")
	// ErrMFAFactor: the record has enrolled second factors (TOTP), and
	// neither factor of the sign-in is one of them.
	ErrMFAFactor = errors.New("authn: MFA needs one of the record's own second factors")
)

// ErrMFARule reports an mfa.rule that cannot be evaluated: a collection
// stored by another version, whose rule no longer compiles against its
// fields. The sign-in fails (PocketBase answers a rule error with 400
// "Failed to authenticate.").
var ErrMFARule = errors.New("authn: mfa.rule cannot be evaluated")

// mfaRequired reports whether a sign-in of r into c with request req
// (whose Context is the login method) needs a second factor: MFA is
// enabled and r satisfies mfa.rule, the empty rule being satisfied by
// every record. The rule is compiled with c's API rules and evaluated as
// they are, its date macros at req's time. A rule that does not compile
// is an error wrapping ErrMFARule.
func (s *Store) mfaRequired(c *Collection, r *Record, req *Request) (bool, error) {
	if !c.IsAuth() || !c.MFA.Enabled {
		return false, nil
	}
	if c.MFA.Rule == "" {
		return true, nil
	}
	rule := &s.apiRules.get(c).mfa
	if rule.err != nil {
		return false, fmt.Errorf("%w: collection %s: %v", ErrMFARule, c.Name, rule.err)
	}
	return rule.pred(ruleSubject{rec: r, req: s.bindRequest(req)}), nil
}

// The sign-in methods MFA tells apart.
const (
	MethodPassword = "password"
	MethodOTP      = "otp"
	MethodOAuth2   = "oauth2"
	MethodTOTP     = "totp" // a second factor only: auth-with-totp takes an mfaId
)

// mfaEntry is an MFA session: record RecordID of CollectionID passed its
// first factor, Method, at Created.
type mfaEntry struct {
	ID           string    `json:"id"`
	CollectionID string    `json:"collectionId"`
	RecordID     string    `json:"recordId"`
	Method       string    `json:"method"`
	Created      time.Time `json:"created"`

	totpFails int // wrong TOTP codes presented with it (memory only)
}

// expired reports whether the session is past the collection's
// mfa.duration at now.
func (m *mfaEntry) expired(c *Collection, now time.Time) bool {
	d := c.MFA.Duration
	if d <= 0 {
		d = 1800
	}
	return !now.Before(m.Created.Add(time.Duration(d) * time.Second))
}

// beginMFA records that r passed its first factor by method and returns
// the id of the MFA session, durably stored, that its second factor must
// present.
func (s *Store) beginMFA(c *Collection, r *Record, method string) (string, error) {
	id, err := s.rnd.ID()
	if err != nil {
		return "", err
	}
	m := &mfaEntry{ID: id, CollectionID: c.ID, RecordID: r.ID, Method: method, Created: s.now().UTC()}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byCol[c.ID][r.ID]; !ok {
		return "", ErrNotFound
	}
	if err := s.commit(&op{Op: "mfa", MFA: m}); err != nil {
		return "", err
	}
	return id, nil
}

// finishMFA completes MFA session mfaID of c with record r's second
// factor, method. It returns ErrMFAInvalid for an unknown or expired
// session (an expired one is deleted), ErrMFAOtherRecord for another
// record's (of any collection), ErrMFASameMethod when method is the first factor's,
// ErrMFAFactor when r has enrolled second factors (enrolled) and neither
// method is one of them (the session stays usable); otherwise it deletes
// the session durably (single use) and returns nil.
func (s *Store) finishMFA(c *Collection, r *Record, mfaID, method string, enrolled []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.mfas[mfaID]
	if !ok {
		return ErrMFAInvalid
	}
	if mc, ok := s.cols[m.CollectionID]; !ok || !mc.IsAuth() || m.expired(mc, s.now()) {
		if err := s.commit(&op{Op: "deleteMFA", ID: m.ID}); err != nil {
			s.log.Warn("could not delete an expired MFA session", "err", err)
		}
		return ErrMFAInvalid
	}
	if m.CollectionID != c.ID || m.RecordID != r.ID {
		return ErrMFAOtherRecord
	}
	if m.Method == method {
		return ErrMFASameMethod
	}
	if len(enrolled) > 0 && !slices.Contains(enrolled, m.Method) && !slices.Contains(enrolled, method) {
		return ErrMFAFactor
	}
	return s.commit(&op{Op: "deleteMFA", ID: m.ID})
}

// mfaMethod returns the first factor's method of MFA session id, "" for
// none.
func (s *Store) mfaMethod(id string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if m, ok := s.mfas[id]; ok {
		return m.Method
	}
	return ""
}

// dropMFAs removes the MFA sessions that match from memory. The caller
// holds s.mu.
func (s *Store) dropMFAs(match func(*mfaEntry) bool) {
	for id, m := range s.mfas {
		if match(m) {
			s.forget("m:" + id)
			delete(s.mfas, id)
		}
	}
}
