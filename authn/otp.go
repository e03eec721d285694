package authn

import (
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"
)

// OTP and MFA errors.
var (
	// ErrOTPInvalid: no such OTP in the collection, expired, its record
	// gone, or the wrong code (all one answer, as in PocketBase).
	ErrOTPInvalid = errors.New("authn: invalid or expired OTP")
	// ErrOTPOff: OTP sign-in is disabled for the collection.
	ErrOTPOff = errors.New("authn: OTP authentication is disabled")
	// ErrOTPTooMany: the OTP had MaxOTPAttempts wrong codes and is dead;
	// it refuses every code, the right one too, until it expires.
	ErrOTPTooMany = errors.New("authn: too many wrong codes for the OTP")
)

// MaxOTPAttempts is how many wrong codes an OTP takes, from all clients
// together, before it is dead (a strongbox promise beyond PocketBase,
// which counts per client).
const MaxOTPAttempts = 5

// MaxLiveOTPs is how many unexpired OTPs a record may hold; a request past
// it gets the newest one's id again and no mail, as in PocketBase.
const MaxLiveOTPs = 10

// otpAlphabet is the alphabet of OTP codes: decimal digits.
const otpAlphabet = "0123456789"

// otpEntry is a stored one-time password. The code itself is never kept:
// Hash is HMAC-SHA256 keyed by the OTP's own random Salt over the code, so
// that two OTPs with the same code do not share a hash. (Anyone who reads
// the journal also reads the records' token keys and the collections'
// secrets, and can mint any token: a slow hash would protect nothing the
// journal does not already give away, and OTPs live minutes.)
type otpEntry struct {
	ID           string    `json:"id"`
	CollectionID string    `json:"collectionId"`
	RecordID     string    `json:"recordId"`
	Salt         string    `json:"salt"`   // hex of 16 random letters and digits
	Hash         string    `json:"hash"`   // hex HMAC-SHA256(salt, code)
	SentTo       string    `json:"sentTo"` // the address the code went to; "" = none (the CLI)
	Created      time.Time `json:"created"`

	durable bool // its frame is fsynced: only then may it be used
	// fails counts the wrong codes tried, in memory only: it goes with
	// the OTP, and a restart starts it again.
	fails int
}

// otpHash returns the stored hash of code under salt.
func otpHash(salt []byte, code string) []byte {
	m := hmac.New(sha256.New, salt)
	m.Write([]byte(code))
	return m.Sum(nil)
}

// matches reports, in constant time, whether code is the OTP's code.
func (o *otpEntry) matches(code string) bool {
	salt, err1 := hex.DecodeString(o.Salt)
	want, err2 := hex.DecodeString(o.Hash)
	got := otpHash(salt, code)
	return err1 == nil && err2 == nil && hmac.Equal(got, want)
}

// expired reports whether the OTP is past the collection's otp.duration
// at now, measured from its creation as PocketBase does.
func (o *otpEntry) expired(c *Collection, now time.Time) bool {
	d := c.OTP.Duration
	if d <= 0 {
		d = 180
	}
	return !now.Before(o.Created.Add(time.Duration(d) * time.Second))
}

// newOTP draws an OTP for record r of c: a fresh id, salt and code of the
// collection's otp.length digits (8 when unset). It stores nothing.
func (s *Store) newOTP(c *Collection, recordID, sentTo string) (*otpEntry, string, error) {
	code, err := s.rnd.String(otpAlphabet, cmp.Or(c.OTP.Length, 8))
	if err != nil {
		return nil, "", err
	}
	id, err := s.rnd.ID()
	if err != nil {
		return nil, "", err
	}
	salt, err := s.rnd.String(secretAlphabet, 16)
	if err != nil {
		return nil, "", err
	}
	return &otpEntry{
		ID: id, CollectionID: c.ID, RecordID: recordID, SentTo: sentTo,
		Salt: hex.EncodeToString([]byte(salt)), Hash: hex.EncodeToString(otpHash([]byte(salt), code)),
		Created: s.now().UTC(),
	}, code, nil
}

// maxDecoyKeys bounds the addresses DecoyOTP remembers (about 5 MB at
// most); past it, expired ones are forgotten first, then any.
const maxDecoyKeys = 10_000

// decoyOTP is an id DecoyOTP answered for an unknown address.
type decoyOTP struct {
	id      string
	created time.Time
}

// DecoyOTP does the work of an OTP request for an address no record of c
// has and returns an id, storing and sending nothing: the answer to an
// unknown email has the same shape and costs the same as a real one
// (enumeration protection, as in PocketBase). The same work
// includes what follows the answer: a real OTP is written and fsynced in
// the background, holding the store's lock, which delays the requests
// right behind it; so a decoy writes (and fsyncs) a frame that deletes
// its own id, which changes nothing and which compaction drops, lest a
// request sent just after tell the two apart. And as a record's 11th
// request within its OTPs' lifetime gets its newest id again, so does an
// unknown address's: the ids answered for it are remembered in memory
// only (at most maxDecoyKeys addresses), for otp.duration.
func (s *Store) DecoyOTP(c *Collection, email string) (string, error) {
	o, _, err := s.newOTP(c, "", "")
	if err != nil {
		return "", err
	}
	key := c.ID + "\x00" + email
	s.mu.Lock()
	now := s.now()
	life := time.Duration(cmp.Or(c.OTP.Duration, 180)) * time.Second
	live := slices.DeleteFunc(s.decoys[key], func(d decoyOTP) bool { return !now.Before(d.created.Add(life)) })
	if len(live) >= MaxLiveOTPs {
		s.decoys[key] = live
		s.mu.Unlock()
		return live[len(live)-1].id, nil
	}
	if _, ok := s.decoys[key]; !ok && len(s.decoys) >= maxDecoyKeys {
		s.pruneDecoys(now, life)
	}
	s.decoys[key] = append(live, decoyOTP{o.ID, o.Created})
	s.mu.Unlock()
	s.pending.Add(1)
	go func() {
		defer s.pending.Done()
		s.mu.Lock()
		defer s.mu.Unlock()
		if err := s.commit(&op{Op: "deleteOTP", ID: o.ID}); err != nil {
			s.log.Warn("decoy OTP write failed", "err", err)
		}
	}()
	return o.ID, nil
}

// pruneDecoys forgets the addresses whose decoys all expired and, if that
// leaves the table full, a tenth of it. The caller holds s.mu.
func (s *Store) pruneDecoys(now time.Time, life time.Duration) {
	for k, list := range s.decoys {
		if len(list) == 0 || !now.Before(list[len(list)-1].created.Add(life)) {
			delete(s.decoys, k)
		}
	}
	for k := range s.decoys {
		if len(s.decoys) < maxDecoyKeys*9/10 {
			break
		}
		delete(s.decoys, k)
	}
}

// RequestOTP starts an OTP for record r of c, to be sent to r's email. It
// returns the OTP's id at once; the OTP is then written to the journal
// (fsynced) in the background and, only once it is durable, deliver is
// called with its id and code to mail it. So the answer does not wait for
// the disk (an unknown email, which stores nothing, answers in the same
// time), and no code ever leaves the server before its OTP would survive a
// crash. If the write fails, the OTP is dropped and deliver is not called;
// if deliver fails, the OTP is deleted, as PocketBase does.
//
// When r already holds MaxLiveOTPs unexpired OTPs, RequestOTP returns the
// newest one's id, reused true, and neither stores nor delivers anything.
func (s *Store) RequestOTP(c *Collection, r *Record, deliver func(id, code string) error) (id string, reused bool, err error) {
	if !c.IsAuth() {
		return "", false, ErrNotAuthCollection
	}
	if !c.OTP.Enabled {
		return "", false, ErrOTPOff
	}
	o, code, err := s.newOTP(c, r.ID, r.Email)
	if err != nil {
		return "", false, err
	}
	s.mu.Lock()
	now := s.now()
	var newest *otpEntry
	live := 0
	for _, x := range s.recOTPs[r.ID] {
		if !x.expired(c, now) {
			live++
			if newest == nil || x.Created.After(newest.Created) || (x.Created.Equal(newest.Created) && x.ID > newest.ID) {
				newest = x
			}
		}
	}
	if live >= MaxLiveOTPs {
		s.mu.Unlock()
		s.log.Warn("too many OTP requests: reusing the last one issued", "collection", c.Name, "record", r.ID)
		return newest.ID, true, nil
	}
	s.addOTP(o) // counted at once, so that concurrent requests respect the cap
	s.mu.Unlock()
	s.pending.Add(1)
	go func() {
		defer s.pending.Done()
		s.mu.Lock()
		if _, ok := s.byCol[c.ID][r.ID]; !ok || s.otps[o.ID] != o {
			s.dropOTP(o.ID) // the record was deleted meanwhile
			s.mu.Unlock()
			return
		}
		err := s.commit(&op{Op: "otp", OTP: o})
		if err == nil {
			o.durable = true
		} else {
			s.dropOTP(o.ID)
		}
		s.mu.Unlock()
		if err != nil {
			s.log.Error("OTP not saved: no mail sent", "collection", c.Name, "record", r.ID, "err", err)
			return
		}
		if err := deliver(o.ID, code); err != nil {
			s.log.Error("failed to send the OTP mail: OTP deleted", "collection", c.Name, "record", r.ID, "err", err)
			s.deleteOTP(o.ID)
		}
	}()
	return o.ID, false, nil
}

// CreateOTP stores a new OTP for superuser-style recovery (the CLI): no
// mail, no cap, and it returns only once the OTP is durable, with its id
// and code. Its sentTo is empty, so using it never marks the record
// verified.
func (s *Store) CreateOTP(c *Collection, r *Record) (id, code string, err error) {
	if !c.IsAuth() {
		return "", "", ErrNotAuthCollection
	}
	if !c.OTP.Enabled {
		return "", "", ErrOTPOff
	}
	o, code, err := s.newOTP(c, r.ID, "")
	if err != nil {
		return "", "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byCol[c.ID][r.ID]; !ok {
		return "", "", ErrNotFound
	}
	if err := s.commit(&op{Op: "otp", OTP: o}); err != nil {
		return "", "", err
	}
	o.durable = true
	return o.ID, code, nil
}

// OTPRecord returns the id of the record a usable OTP of c belongs to: it
// exists, is durable, has not expired and its record still exists. It
// checks no code: the caller applies its attempt limit, keyed by the
// record, before AuthWithOTP compares one.
func (s *Store) OTPRecord(c *Collection, otpID string) (string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	o, err := s.usableOTP(c, otpID)
	if err != nil {
		return "", err
	}
	return o.RecordID, nil
}

// usableOTP is OTPRecord's check. The caller holds s.mu.
func (s *Store) usableOTP(c *Collection, otpID string) (*otpEntry, error) {
	o, ok := s.otps[otpID]
	if !ok || !o.durable || o.CollectionID != c.ID || o.expired(c, s.now()) {
		return nil, ErrOTPInvalid
	}
	if _, ok := s.byCol[c.ID][o.RecordID]; !ok {
		return nil, ErrOTPInvalid
	}
	return o, nil
}

// AuthWithOTP checks code against OTP otpID of c. On a match it consumes
// the OTP (single use) and, when the record is unverified and the code
// went to its current email, marks it verified, in one durable commit; it
// returns the record as it then stands. Once the OTP has had
// MaxOTPAttempts wrong codes, whoever sent them, it is ErrOTPTooMany
// before any code is compared; anything else is ErrOTPInvalid, and a
// wrong code leaves the OTP usable until then.
func (s *Store) AuthWithOTP(c *Collection, otpID, code string) (*Record, error) {
	if !c.IsAuth() {
		return nil, ErrNotAuthCollection
	}
	if !c.OTP.Enabled {
		return nil, ErrOTPOff
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o, err := s.usableOTP(c, otpID)
	if err != nil {
		return nil, err
	}
	if o.fails >= MaxOTPAttempts {
		return nil, ErrOTPTooMany
	}
	if !o.matches(code) {
		o.fails++
		return nil, ErrOTPInvalid
	}
	r := s.byCol[c.ID][o.RecordID]
	ops := []*op{{Op: "deleteOTP", ID: o.ID}}
	if !r.Verified && o.SentTo != "" && o.SentTo == r.Email {
		r = r.clone()
		r.Verified = true
		r.Updated = s.now().UTC()
		ops = append(ops, &op{Op: "record", Record: r})
	}
	if err := s.commit(ops...); err != nil {
		return nil, err
	}
	return r, nil
}

// deleteOTP deletes OTP id durably; a failure is only logged (the OTP
// expires anyway).
func (s *Store) deleteOTP(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.otps[id]; !ok {
		return
	}
	if err := s.commit(&op{Op: "deleteOTP", ID: id}); err != nil {
		s.log.Warn("could not delete an OTP; it stays until it expires", "err", err)
	}
}

// addOTP indexes o. The caller holds s.mu.
func (s *Store) addOTP(o *otpEntry) {
	if old, ok := s.otps[o.ID]; ok {
		delete(s.recOTPs[old.RecordID], o.ID)
	}
	s.otps[o.ID] = o
	m := s.recOTPs[o.RecordID]
	if m == nil {
		m = map[string]*otpEntry{}
		s.recOTPs[o.RecordID] = m
	}
	m[o.ID] = o
}

// dropOTP removes OTP id from memory. The caller holds s.mu.
func (s *Store) dropOTP(id string) {
	o, ok := s.otps[id]
	if !ok {
		return
	}
	delete(s.otps, id)
	if m := s.recOTPs[o.RecordID]; m != nil {
		delete(m, id)
		if len(m) == 0 {
			delete(s.recOTPs, o.RecordID)
		}
	}
}

// dropRecordAuthState removes the OTPs, MFA sessions, OAuth2 links,
// sign-in origins and TOTP of record id from memory: they go with their record. The
// caller holds s.mu.
func (s *Store) dropRecordAuthState(id string) {
	for oid := range s.recOTPs[id] {
		s.forget("o:" + oid)
		delete(s.otps, oid)
	}
	delete(s.recOTPs, id)
	s.dropMFAs(func(m *mfaEntry) bool { return m.RecordID == id })
	s.dropRecordLinks(id)
	s.dropRecordOrigins(id)
	s.forget("t:" + id)
	delete(s.totps, id)
	delete(s.totpFails, id)
	s.dropRecordPasskeys(id)
}

// forget stops counting the frame of key as live. The caller holds s.mu.
func (s *Store) forget(key string) {
	s.live -= s.sizes[key]
	delete(s.sizes, key)
}

// Sweep deletes the expired OTPs and MFA sessions of every collection,
// durably, and returns how many it deleted. The server calls it now and
// then; expired ones are refused at use and left out of compaction anyway.
func (s *Store) Sweep() (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for id, w := range s.totpFails {
		if now.Sub(w.start) >= TOTPFailureWindow {
			delete(s.totpFails, id)
		}
	}
	var ops []*op
	for id, o := range s.otps {
		if c, ok := s.cols[o.CollectionID]; !ok || !c.IsAuth() || s.byCol[c.ID][o.RecordID] == nil || (o.durable && o.expired(c, now)) {
			ops = append(ops, &op{Op: "deleteOTP", ID: id})
		}
	}
	for id, m := range s.mfas {
		if c, ok := s.cols[m.CollectionID]; !ok || !c.IsAuth() || s.byCol[c.ID][m.RecordID] == nil || m.expired(c, now) {
			ops = append(ops, &op{Op: "deleteMFA", ID: id})
		}
	}
	if len(ops) == 0 {
		return 0, nil
	}
	if err := s.commit(ops...); err != nil {
		return 0, fmt.Errorf("authn: sweep: %w", err)
	}
	return len(ops), nil
}
