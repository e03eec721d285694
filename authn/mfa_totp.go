package authn

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"strongbox/authn/totp"
)

// TOTP errors.
var (
	// ErrTOTPOff: the collection's totp option is off.
	ErrTOTPOff = errors.New("authn: TOTP is disabled for the collection")
	// ErrTOTPEnabled: the record already has a confirmed TOTP.
	ErrTOTPEnabled = errors.New("authn: TOTP is already enabled for the record")
	// ErrTOTPNotEnabled: the record has no confirmed TOTP (or, for
	// DisableTOTP, none at all).
	ErrTOTPNotEnabled = errors.New("authn: TOTP is not enabled for the record")
	// ErrTOTPNoSetup: ConfirmTOTP without a pending SetupTOTP.
	ErrTOTPNoSetup = errors.New("authn: no TOTP setup to confirm")
	// ErrTOTPInvalid: the wrong code, a code already used, or an unknown
	// or used recovery code (all one answer).
	ErrTOTPInvalid = errors.New("authn: invalid TOTP code")
	// ErrTOTPTooMany: too many wrong codes; errors.As gives the
	// *TooManyError with the time to wait.
	ErrTOTPTooMany = errors.New("authn: too many wrong TOTP codes")
)

// TooManyError is the ErrTOTPTooMany of one refusal: RetryAfter is how
// long until the record's count of wrong codes starts again, 0 when the
// MFA session is dead (sign in again).
type TooManyError struct{ RetryAfter time.Duration }

func (e *TooManyError) Error() string { return ErrTOTPTooMany.Error() }

// Is makes errors.Is(err, ErrTOTPTooMany) hold.
func (e *TooManyError) Is(target error) bool { return target == ErrTOTPTooMany }

// The limits on wrong TOTP and recovery codes (strongbox's own): an MFA
// session dies after MaxTOTPSessionFailures of them, and a record takes at
// most MaxTOTPRecordFailures in a TOTPFailureWindow opened by the first,
// from all clients and sessions together. With three codes valid at a
// time (the ±1 step), a guesser who has the password thus finds the code
// with odds of 3 in 100,000 per window.
const (
	MaxTOTPSessionFailures = 5
	MaxTOTPRecordFailures  = 10
	TOTPFailureWindow      = time.Hour
)

// RecoveryCodes is how many recovery codes a confirmed TOTP gets.
const RecoveryCodes = 10

// recoveryAlphabet spells recovery codes: lower-case letters and digits
// without 0, 1, i, l and o, which are read for one another. Twelve of
// them hold 59 bits.
const recoveryAlphabet = "23456789abcdefghjkmnpqrstuvwxyz"

const recoveryLength = 12

// TOTP configures authenticator-app codes as a second factor (strongbox's
// own option). Off, the records' TOTPs are kept but not asked for, and
// none can be set up or used.
type TOTP struct {
	Enabled bool `json:"enabled"`
}

// totpEntry is a record's authenticator: its secret, sealed under the
// collection's key (sealTOTP), pending until confirmed; the last time step
// a code of it was accepted at, so that none is accepted twice; and the
// SHA-256 of its unused recovery codes. Entries are replaced, never
// changed, once stored.
type totpEntry struct {
	RecordID     string    `json:"recordId"`
	CollectionID string    `json:"collectionId"`
	Secret       string    `json:"secret"` // base64 of the nonce and the AES-256-GCM ciphertext
	Confirmed    bool      `json:"confirmed"`
	LastStep     int64     `json:"lastStep"`           // -1: none yet
	Recovery     []string  `json:"recovery,omitempty"` // hex SHA-256 of each unused recovery code
	Created      time.Time `json:"created"`
	Updated      time.Time `json:"updated"`
}

// failWindow counts a record's wrong codes since start.
type failWindow struct {
	start time.Time
	n     int
}

// totpAEAD is the cipher of c's TOTP secrets: AES-256-GCM under a key
// drawn by HKDF-SHA256 from c's authToken secret, for c's id. The
// collection passed must be the one stored now (s.cols): a new authToken
// secret is a new key, under which UpdateCollection seals every secret
// again in the same commit.
func totpAEAD(c *Collection) (cipher.AEAD, error) {
	key, err := hkdf.Key(sha256.New, []byte(c.AuthToken.Secret), nil, "strongbox totp secret v1 "+c.ID, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// totpAAD binds a sealed secret to its collection and record: moved to
// another, it does not open.
func totpAAD(colID, recID string) []byte { return []byte(colID + "\x00" + recID) }

// sealTOTP seals key for record recID of c with nonce (12 random bytes).
func sealTOTP(c *Collection, recID string, key, nonce []byte) (string, error) {
	aead, err := totpAEAD(c)
	if err != nil {
		return "", err
	}
	return base64.RawStdEncoding.EncodeToString(aead.Seal(slices.Clip(nonce), nonce, key, totpAAD(c.ID, recID))), nil
}

// openTOTP returns the secret sealed in sealed for record recID of c.
func openTOTP(c *Collection, recID, sealed string) ([]byte, error) {
	aead, err := totpAEAD(c)
	if err != nil {
		return nil, err
	}
	b, err := base64.RawStdEncoding.DecodeString(sealed)
	if err != nil || len(b) < aead.NonceSize()+aead.Overhead() {
		return nil, errors.New("authn: malformed sealed TOTP secret")
	}
	key, err := aead.Open(nil, b[:aead.NonceSize()], b[aead.NonceSize():], totpAAD(c.ID, recID))
	if err != nil {
		return nil, fmt.Errorf("authn: the TOTP secret of record %s does not open under collection %s's key: %w", recID, c.ID, err)
	}
	return key, nil
}

// normalizeRecovery returns a recovery code as typed (any case, with or
// without dashes and spaces) in its stored spelling, or "" when it cannot
// be one.
func normalizeRecovery(s string) string {
	if len(s) > 64 {
		return ""
	}
	s = strings.Map(func(r rune) rune {
		if r == '-' || r == ' ' {
			return -1
		}
		return r
	}, strings.ToLower(s))
	if len(s) != recoveryLength || strings.Trim(s, recoveryAlphabet) != "" {
		return ""
	}
	return s
}

func recoveryHash(code string) string {
	sum := sha256.Sum256([]byte(code))
	return hex.EncodeToString(sum[:])
}

// newRecoveryCodes draws RecoveryCodes codes, spelled xxxx-xxxx-xxxx, and
// their hashes.
func (s *Store) newRecoveryCodes() (codes, hashes []string, err error) {
	for range RecoveryCodes {
		c, err := s.rnd.String(recoveryAlphabet, recoveryLength)
		if err != nil {
			return nil, nil, err
		}
		codes = append(codes, c[:4]+"-"+c[4:8]+"-"+c[8:])
		hashes = append(hashes, recoveryHash(c))
	}
	return codes, hashes, nil
}

// TOTPStatus is what a record may know of its own TOTP.
type TOTPStatus struct {
	Enabled       bool `json:"enabled"`       // confirmed: asked for after every first factor
	Pending       bool `json:"pending"`       // set up, not confirmed
	RecoveryCodes int  `json:"recoveryCodes"` // unused recovery codes
}

// TOTPStatus returns the state of r's TOTP in c.
func (s *Store) TOTPStatus(c *Collection, r *Record) TOTPStatus {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e := s.totps[r.ID]
	if e == nil || e.CollectionID != c.ID {
		return TOTPStatus{}
	}
	return TOTPStatus{Enabled: e.Confirmed, Pending: !e.Confirmed, RecoveryCodes: len(e.Recovery)}
}

// enrolledFactors returns the second factors r has enrolled that c asks
// for now: MethodTOTP when r's TOTP is confirmed and c's totp is on.
func (s *Store) enrolledFactors(c *Collection, r *Record) []string {
	if !c.IsAuth() || !c.TOTP.Enabled {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e := s.totps[r.ID]; e != nil && e.Confirmed && e.CollectionID == c.ID {
		return []string{MethodTOTP}
	}
	return nil
}

// liveCollection is the stored version of auth collection c (the caller's
// may be older, with an older key). The caller holds s.mu.
func (s *Store) liveCollection(c *Collection) (*Collection, error) {
	cur, ok := s.cols[c.ID]
	if !ok || !cur.IsAuth() {
		return nil, ErrNotFound
	}
	return cur, nil
}

// SetupTOTP gives record r of c a new authenticator secret, pending until
// ConfirmTOTP, and returns it in base32 with its otpauth URI (issuer: the
// application's name, account: r's email). A pending one is replaced.
// ErrTOTPOff when c's totp is off, ErrTOTPEnabled when r's TOTP is
// confirmed (disable it first).
func (s *Store) SetupTOTP(c *Collection, r *Record, issuer string) (secret, uri string, err error) {
	key, err := s.rnd.Bytes(totp.SecretSize)
	if err != nil {
		return "", "", err
	}
	nonce, err := s.rnd.Bytes(12)
	if err != nil {
		return "", "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, err := s.liveCollection(c)
	if err != nil {
		return "", "", err
	}
	if !cur.TOTP.Enabled {
		return "", "", ErrTOTPOff
	}
	rec, ok := s.byCol[cur.ID][r.ID]
	if !ok {
		return "", "", ErrNotFound
	}
	if e := s.totps[r.ID]; e != nil && e.Confirmed {
		return "", "", ErrTOTPEnabled
	}
	sealed, err := sealTOTP(cur, r.ID, key, nonce)
	if err != nil {
		return "", "", err
	}
	now := s.now().UTC()
	e := &totpEntry{RecordID: r.ID, CollectionID: cur.ID, Secret: sealed, LastStep: -1, Created: now, Updated: now}
	if err := s.commit(&op{Op: "totp", TOTP: e}); err != nil {
		return "", "", err
	}
	return totp.EncodeSecret(key), totp.URI(issuer, rec.Email, key), nil
}

// ConfirmTOTP confirms r's pending TOTP with a current code of it, and
// returns the RecoveryCodes recovery codes, which are stored only as
// hashes: this is the one time they are shown. From then on every first
// factor of r asks for a second (SignIn). ErrTOTPNoSetup without a pending
// setup, ErrTOTPEnabled when already confirmed, ErrTOTPInvalid for a
// wrong code (counted, see MaxTOTPRecordFailures), ErrTOTPTooMany.
func (s *Store) ConfirmTOTP(c *Collection, r *Record, code string) ([]string, error) {
	codes, hashes, err := s.newRecoveryCodes()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, err := s.liveCollection(c)
	if err != nil {
		return nil, err
	}
	if !cur.TOTP.Enabled {
		return nil, ErrTOTPOff
	}
	e := s.totps[r.ID]
	switch {
	case e == nil || e.CollectionID != cur.ID:
		return nil, ErrTOTPNoSetup
	case e.Confirmed:
		return nil, ErrTOTPEnabled
	}
	next, err := s.checkTOTP(cur, e, code, false)
	if err != nil {
		return nil, err
	}
	next.Confirmed, next.Recovery = true, hashes
	if err := s.commit(&op{Op: "totp", TOTP: next}); err != nil {
		return nil, err
	}
	return codes, nil
}

// DisableTOTP deletes r's TOTP, confirmed or pending. A confirmed one
// needs a current code or an unused recovery code, unless force (a
// superuser clearing another record's). ErrTOTPNotEnabled when r has
// none; ErrTOTPInvalid, ErrTOTPTooMany as ConfirmTOTP.
func (s *Store) DisableTOTP(c *Collection, r *Record, code string, force bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, err := s.liveCollection(c)
	if err != nil {
		return err
	}
	e := s.totps[r.ID]
	if e == nil || e.CollectionID != cur.ID {
		return ErrTOTPNotEnabled
	}
	if e.Confirmed && !force {
		if _, err := s.checkTOTP(cur, e, code, true); err != nil {
			return err
		}
	}
	return s.commit(&op{Op: "deleteTOTP", ID: r.ID})
}

// MFARecord returns the record whose MFA session mfaID of c is: unknown
// or expired is ErrMFAInvalid, a session of another collection
// ErrMFAOtherRecord, as SignIn refuses them.
func (s *Store) MFARecord(c *Collection, mfaID string) (*Record, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m, err := s.openMFA(c, mfaID)
	if err != nil {
		return nil, err
	}
	return s.byCol[c.ID][m.RecordID], nil
}

// openMFA is MFARecord's check. The caller holds s.mu.
func (s *Store) openMFA(c *Collection, mfaID string) (*mfaEntry, error) {
	m, ok := s.mfas[mfaID]
	if !ok {
		return nil, ErrMFAInvalid
	}
	if mc, ok := s.cols[m.CollectionID]; !ok || !mc.IsAuth() || m.expired(mc, s.now()) {
		return nil, ErrMFAInvalid
	}
	if m.CollectionID != c.ID {
		return nil, ErrMFAOtherRecord
	}
	if _, ok := s.byCol[c.ID][m.RecordID]; !ok {
		return nil, ErrMFAInvalid
	}
	return m, nil
}

// AuthWithTOTP checks a second factor: code, a current code of the TOTP
// of the record whose MFA session mfaID is, or one of its unused recovery
// codes, which is then used up. It returns that record, and whether a
// recovery code was used, once the step of the code (or the recovery
// code's use) is durably stored; SignIn then completes the sign-in,
// consuming the session. The session's errors are MFARecord's;
// ErrTOTPOff, ErrTOTPNotEnabled (the record has no confirmed TOTP),
// ErrTOTPInvalid, and ErrTOTPTooMany once the session had
// MaxTOTPSessionFailures wrong codes or the record MaxTOTPRecordFailures
// within TOTPFailureWindow (checked before the code is compared).
func (s *Store) AuthWithTOTP(c *Collection, mfaID, code string) (*Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, err := s.liveCollection(c)
	if err != nil {
		return nil, false, err
	}
	if !cur.TOTP.Enabled {
		return nil, false, ErrTOTPOff
	}
	m, err := s.openMFA(cur, mfaID)
	if err != nil {
		return nil, false, err
	}
	if m.totpFails >= MaxTOTPSessionFailures {
		return nil, false, &TooManyError{}
	}
	rec := s.byCol[cur.ID][m.RecordID]
	e := s.totps[rec.ID]
	if e == nil || !e.Confirmed || e.CollectionID != cur.ID {
		return nil, false, ErrTOTPNotEnabled
	}
	next, err := s.checkTOTP(cur, e, code, true)
	if errors.Is(err, ErrTOTPInvalid) {
		m.totpFails++
	}
	if err != nil {
		return nil, false, err
	}
	if err := s.commit(&op{Op: "totp", TOTP: next}); err != nil {
		return nil, false, err
	}
	return rec, len(next.Recovery) < len(e.Recovery), nil
}

// checkTOTP checks code against e, counting a wrong one against e's
// record, and returns the entry to store when it passes: its last step
// moved to the code's, or (with recovery) the recovery code it was taken
// off. The caller holds s.mu.
func (s *Store) checkTOTP(c *Collection, e *totpEntry, code string, recovery bool) (*totpEntry, error) {
	now := s.now()
	if w := s.totpFails[e.RecordID]; w != nil {
		if now.Sub(w.start) >= TOTPFailureWindow || now.Before(w.start) {
			delete(s.totpFails, e.RecordID)
		} else if w.n >= MaxTOTPRecordFailures {
			return nil, &TooManyError{RetryAfter: w.start.Add(TOTPFailureWindow).Sub(now)}
		}
	}
	next := *e
	next.Updated = now.UTC()
	if digits, ok := totp.ParseCode(code); ok {
		key, err := openTOTP(c, e.RecordID, e.Secret)
		if err != nil {
			s.log.Error("TOTP secret unreadable: the record cannot use its authenticator until a superuser disables it", "collection", c.Name, "record", e.RecordID, "err", err)
			return nil, err
		}
		if step, ok := totp.Verify(key, digits, now, e.LastStep); ok {
			next.LastStep = step
			return &next, nil
		}
	} else if rc := normalizeRecovery(code); recovery && rc != "" {
		want := recoveryHash(rc)
		at := -1
		for i, h := range e.Recovery { // every hash compared, in constant time
			if subtle.ConstantTimeCompare([]byte(h), []byte(want)) == 1 {
				at = i
			}
		}
		if at >= 0 {
			next.Recovery = slices.Delete(slices.Clone(e.Recovery), at, at+1)
			return &next, nil
		}
	}
	w := s.totpFails[e.RecordID]
	if w == nil {
		w = &failWindow{start: now}
		s.totpFails[e.RecordID] = w
	}
	w.n++
	return nil, ErrTOTPInvalid
}

// resealTOTPs returns the ops that seal the TOTP secrets of collection
// cur's records again under n's key, for the commit that gives the
// collection n's authToken secret: a new secret ends every token, and
// keeps every authenticator. A secret that does not open under cur's key
// (it could not be used anyway) is left as it is, and logged. The caller
// holds s.mu.
func (s *Store) resealTOTPs(cur, n *Collection) ([]*op, error) {
	var ops []*op
	for _, e := range sortedByID(s.totps) {
		if e.CollectionID != cur.ID {
			continue
		}
		key, err := openTOTP(cur, e.RecordID, e.Secret)
		if err != nil {
			s.log.Error("TOTP secret unreadable: not sealed again under the collection's new key", "collection", cur.Name, "record", e.RecordID, "err", err)
			continue
		}
		nonce, err := s.rnd.Bytes(12)
		if err != nil {
			return nil, err
		}
		next := *e
		if next.Secret, err = sealTOTP(n, e.RecordID, key, nonce); err != nil {
			return nil, err
		}
		ops = append(ops, &op{Op: "totp", TOTP: &next})
	}
	return ops, nil
}
