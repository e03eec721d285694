package authn

import (
	"bytes"
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"strongbox/authn/webauthn"
)

// MethodPasskey is the sign-in method of a passkey, as MFA tells methods
// apart: a passkey counts as one method, user verification or not.
const MethodPasskey = "passkey"

// PasskeyAuth configures sign-in with passkeys (WebAuthn).
type PasskeyAuth struct {
	Enabled bool `json:"enabled"`
}

// Passkey errors.
var (
	// ErrPasskeyOff: passkeys are disabled for the collection.
	ErrPasskeyOff = errors.New("authn: passkey authentication is disabled")
	// ErrPasskeyChallenge: no such challenge for this ceremony, or
	// expired, or used already (each is single-use).
	ErrPasskeyChallenge = errors.New("authn: invalid or expired passkey challenge")
	// ErrPasskeyInvalid wraps every refusal of a credential: an unknown
	// one, another record's, or one that fails webauthn's checks.
	ErrPasskeyInvalid = errors.New("authn: the passkey could not be verified")
	// ErrPasskeyCounter: the signature counter did not increase, which
	// may mean a cloned authenticator.
	ErrPasskeyCounter = errors.New("authn: the passkey's signature counter did not increase")
	// ErrPasskeyExists: the credential is registered already.
	ErrPasskeyExists = errors.New("authn: the passkey is registered already")
	// ErrPasskeyLimit: the record has MaxPasskeys passkeys.
	ErrPasskeyLimit = errors.New("authn: too many passkeys")
)

// Passkey bounds.
const (
	MaxPasskeys         = 20              // per record
	MaxPasskeyNameBytes = 100             // a passkey's name
	PasskeyChallengeTTL = 5 * time.Minute // how long a challenge may be answered
	// MaxPasskeyChallenges bounds the challenges outstanding in the
	// store; past it the oldest is dropped.
	MaxPasskeyChallenges = 10000
)

// Passkey is a WebAuthn credential registered to a record: its id at the
// authenticator, its public key (a COSE_Key) and the last signature
// counter seen. A passkey goes with its record.
type Passkey struct {
	ID           string    `json:"id"`
	CollectionID string    `json:"collectionId"`
	RecordID     string    `json:"recordId"`
	CredentialID []byte    `json:"credentialId"`
	PublicKey    []byte    `json:"publicKey"`
	Alg          int       `json:"alg"`
	SignCount    uint32    `json:"signCount"`
	Transports   []string  `json:"transports,omitempty"`
	Name         string    `json:"name"`
	Created      time.Time `json:"created"`
	LastUsed     time.Time `json:"lastUsed,omitzero"`
}

func (p *Passkey) valid() bool {
	return p != nil && p.ID != "" && p.RecordID != "" && p.CollectionID != "" && len(p.CredentialID) > 0 && len(p.PublicKey) > 0
}

// passkeys is the Store's passkey state: the credentials (journaled),
// and the outstanding challenges (in memory only: a restart ends the
// ceremonies under way, which their users retry).
type passkeys struct {
	byID   map[string]*Passkey
	byCred map[string]*Passkey            // collection id + "\x00" + credential id
	byRec  map[string]map[string]*Passkey // record id → passkey id → passkey

	mu         sync.Mutex // guards the challenges; taken after s.mu
	challenges map[string]*passkeyChallenge
	order      []string // challenge ids, oldest first (some already gone)
}

// passkeyChallenge is an outstanding ceremony.
type passkeyChallenge struct {
	value    []byte
	colID    string
	recID    string // registration: the record; sign-in: the identity's record, or ""
	register bool
	identity bool // a sign-in for one identity: only recID's passkeys answer it
	expires  time.Time
}

func credKey(colID string, credID []byte) string { return colID + "\x00" + string(credID) }

// addPasskey indexes p. The caller holds s.mu.
func (s *Store) addPasskey(p *Passkey) {
	k := &s.pk
	if k.byID == nil {
		k.byID, k.byCred, k.byRec = map[string]*Passkey{}, map[string]*Passkey{}, map[string]map[string]*Passkey{}
	}
	s.dropPasskey(p.ID)
	k.byID[p.ID] = p
	k.byCred[credKey(p.CollectionID, p.CredentialID)] = p
	m := k.byRec[p.RecordID]
	if m == nil {
		m = map[string]*Passkey{}
		k.byRec[p.RecordID] = m
	}
	m[p.ID] = p
}

// dropPasskey removes passkey id from memory. The caller holds s.mu.
func (s *Store) dropPasskey(id string) {
	k := &s.pk
	p, ok := k.byID[id]
	if !ok {
		return
	}
	delete(k.byID, id)
	delete(k.byCred, credKey(p.CollectionID, p.CredentialID))
	if m := k.byRec[p.RecordID]; m != nil {
		delete(m, id)
		if len(m) == 0 {
			delete(k.byRec, p.RecordID)
		}
	}
}

// dropRecordPasskeys removes the passkeys of record id from memory: they
// go with their record. The caller holds s.mu.
func (s *Store) dropRecordPasskeys(id string) {
	for pid := range s.pk.byRec[id] {
		s.forget("p:" + pid)
		s.dropPasskey(pid)
	}
}

// sortedPasskeys returns the passkeys of record recID, oldest first. The
// caller holds s.mu.
func (s *Store) sortedPasskeys(recID string) []*Passkey {
	out := slices.Collect(maps.Values(s.pk.byRec[recID]))
	slices.SortFunc(out, func(a, b *Passkey) int { return cmp.Or(a.Created.Compare(b.Created), strings.Compare(a.ID, b.ID)) })
	return out
}

// Passkeys returns the passkeys of record recID of c, oldest first. The
// results must not be modified.
func (s *Store) Passkeys(c *Collection, recID string) []*Passkey {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := s.sortedPasskeys(recID)
	return slices.DeleteFunc(out, func(p *Passkey) bool { return p.CollectionID != c.ID })
}

// allPasskeys returns every passkey in id order, for a compaction. The
// caller holds s.mu.
func (s *Store) allPasskeys() []*Passkey { return sortedByID(s.pk.byID) }

// DeletePasskey deletes passkey id of record recID of c, durably; another
// record's, or none, is ErrNotFound.
func (s *Store) DeletePasskey(c *Collection, recID, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pk.byID[id]
	if !ok || p.RecordID != recID || p.CollectionID != c.ID {
		return ErrNotFound
	}
	if err := s.commit(&op{Op: "deletePasskey", ID: id}); err != nil {
		return err
	}
	s.log.Info("passkey: deleted", "collection", c.Name, "record", recID, "passkey", id, "name", p.Name)
	return nil
}

// newChallenge stores a challenge of 32 random bytes for a ceremony and
// returns its id and value. When MaxPasskeyChallenges are outstanding,
// the expired ones and then the oldest are dropped.
func (s *Store) newChallenge(ch *passkeyChallenge) (string, []byte, error) {
	id, err := s.rnd.ID()
	if err != nil {
		return "", nil, err
	}
	ch.value = make([]byte, 32)
	if err := s.rnd.read(ch.value); err != nil {
		return "", nil, err
	}
	now := s.now()
	ch.expires = now.Add(PasskeyChallengeTTL)
	k := &s.pk
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.challenges == nil {
		k.challenges = map[string]*passkeyChallenge{}
	}
	for len(k.order) > 0 {
		old, ok := k.challenges[k.order[0]]
		if ok && len(k.challenges) < MaxPasskeyChallenges && now.Before(old.expires) {
			break
		}
		delete(k.challenges, k.order[0])
		k.order = k.order[1:]
	}
	if len(k.order) > 2*MaxPasskeyChallenges {
		k.order = slices.DeleteFunc(k.order, func(id string) bool { _, ok := k.challenges[id]; return !ok })
	}
	k.challenges[id] = ch
	k.order = append(k.order, id)
	return id, ch.value, nil
}

// takeChallenge removes challenge id and returns it if it is c's, of the
// ceremony asked for (register or not), and unexpired. Any attempt uses
// it up, so a challenge is never answered twice.
func (s *Store) takeChallenge(c *Collection, id string, register bool) (*passkeyChallenge, error) {
	k := &s.pk
	k.mu.Lock()
	ch, ok := k.challenges[id]
	delete(k.challenges, id)
	k.mu.Unlock()
	if !ok || ch.colID != c.ID || ch.register != register || !s.now().Before(ch.expires) {
		return nil, ErrPasskeyChallenge
	}
	return ch, nil
}

// read fills b from the source of randomness.
func (r *Random) read(b []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := io.ReadFull(r.src, b); err != nil {
		return fmt.Errorf("authn: read randomness: %w", err)
	}
	return nil
}

func passkeyOn(c *Collection) error {
	if !c.IsAuth() {
		return ErrNotAuthCollection
	}
	if !c.Passkey.Enabled {
		return ErrPasskeyOff
	}
	return nil
}

// descriptors returns the credential descriptors of record recID's passkeys.
// The caller holds s.mu.
func (s *Store) descriptors(recID string) []webauthn.CredentialDescriptor {
	var out []webauthn.CredentialDescriptor
	for _, p := range s.sortedPasskeys(recID) {
		out = append(out, webauthn.CredentialDescriptor{Type: "public-key", ID: p.CredentialID, Transports: p.Transports})
	}
	return out
}

// PasskeyRegisterOptions begins the registration of a passkey for record
// r of c with relying party rp: the challenge's id and the creation
// options (user handle = the record id; r's passkeys excluded).
func (s *Store) PasskeyRegisterOptions(c *Collection, r *Record, rp webauthn.RelyingParty) (string, *webauthn.CreationOptions, error) {
	if err := passkeyOn(c); err != nil {
		return "", nil, err
	}
	s.mu.RLock()
	exclude := s.descriptors(r.ID)
	s.mu.RUnlock()
	if len(exclude) >= MaxPasskeys {
		return "", nil, ErrPasskeyLimit
	}
	id, value, err := s.newChallenge(&passkeyChallenge{colID: c.ID, recID: r.ID, register: true})
	if err != nil {
		return "", nil, err
	}
	name := cmp.Or(r.Email, r.ID)
	if u, ok := r.Fields["username"].(string); ok && r.Email == "" && u != "" {
		name = u
	}
	opts := rp.NewCreationOptions([]byte(r.ID), name, name, value, PasskeyChallengeTTL.Milliseconds(), exclude)
	return id, opts, nil
}

// RegisterPasskey completes registration challengeID of record r of c
// with the browser's response and names the passkey (its trimmed name,
// at most MaxPasskeyNameBytes, or "Passkey"). The response must answer
// this record's challenge (ErrPasskeyChallenge) and pass
// webauthn.VerifyRegistration for rp (an error wrapping
// ErrPasskeyInvalid); a credential registered already is
// ErrPasskeyExists.
func (s *Store) RegisterPasskey(c *Collection, r *Record, rp webauthn.RelyingParty, challengeID string, resp *webauthn.RegistrationResponse, name string) (*Passkey, error) {
	if err := passkeyOn(c); err != nil {
		return nil, err
	}
	ch, err := s.takeChallenge(c, challengeID, true)
	if err != nil {
		return nil, err
	}
	if ch.recID != r.ID {
		return nil, ErrPasskeyChallenge
	}
	cred, err := rp.VerifyRegistration(resp.Response.ClientDataJSON, resp.Response.AttestationObject, ch.value, false)
	if err != nil {
		s.log.Warn("passkey: registration refused", "collection", c.Name, "record", r.ID, "err", err)
		return nil, fmt.Errorf("%w: %w", ErrPasskeyInvalid, err)
	}
	if !bytes.Equal(cred.ID, resp.RawID) {
		return nil, fmt.Errorf("%w: rawId is not the attested credential id", ErrPasskeyInvalid)
	}
	id, err := s.rnd.ID()
	if err != nil {
		return nil, err
	}
	name = strings.TrimSpace(name)
	if len(name) > MaxPasskeyNameBytes {
		name = strings.ToValidUTF8(name[:MaxPasskeyNameBytes], "")
	}
	p := &Passkey{
		ID: id, CollectionID: c.ID, RecordID: r.ID, CredentialID: bytes.Clone(cred.ID), PublicKey: bytes.Clone(cred.PublicKey),
		Alg: cred.Alg, SignCount: cred.SignCount, Transports: resp.Response.Transports,
		Name: cmp.Or(name, "Passkey"), Created: s.now().UTC(),
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byCol[c.ID][r.ID]; !ok {
		return nil, ErrNotFound
	}
	if _, ok := s.pk.byCred[credKey(c.ID, p.CredentialID)]; ok {
		return nil, ErrPasskeyExists
	}
	if len(s.pk.byRec[r.ID]) >= MaxPasskeys {
		return nil, ErrPasskeyLimit
	}
	if err := s.commit(&op{Op: "passkey", Passkey: p}); err != nil {
		return nil, err
	}
	s.log.Info("passkey: registered", "collection", c.Name, "record", r.ID, "passkey", p.ID, "name", p.Name, "alg", p.Alg)
	return p, nil
}

// PasskeyRequestOptions begins a sign-in to c with relying party rp:
// usernameless (no allowCredentials) when identity is "", else for the
// record whose email or identity field is identity. So that the answer
// tells nothing about who has an account, an identity that no record has,
// or whose record has no passkey, gets one made-up credential, the same at
// every request (derived from the identity and the collection's secret),
// and a challenge that no passkey can answer.
func (s *Store) PasskeyRequestOptions(c *Collection, identity string, rp webauthn.RelyingParty) (string, *webauthn.RequestOptions, error) {
	if err := passkeyOn(c); err != nil {
		return "", nil, err
	}
	ch := &passkeyChallenge{colID: c.ID, identity: identity != ""}
	var allow []webauthn.CredentialDescriptor
	if identity != "" {
		s.mu.RLock()
		for _, f := range c.identityFields() {
			if r, ok := s.findByField(c, f, identity); ok {
				ch.recID = r.ID
				allow = s.descriptors(r.ID)
				break
			}
		}
		s.mu.RUnlock()
		if len(allow) == 0 {
			mac := hmac.New(sha256.New, []byte(c.AuthToken.Secret))
			mac.Write([]byte("strongbox passkey decoy\x00" + c.ID + "\x00" + identity))
			allow = []webauthn.CredentialDescriptor{{Type: "public-key", ID: mac.Sum(nil), Transports: []string{"internal", "hybrid"}}}
		}
	}
	id, value, err := s.newChallenge(ch)
	if err != nil {
		return "", nil, err
	}
	return id, rp.NewRequestOptions(value, PasskeyChallengeTTL.Milliseconds(), allow), nil
}

// AuthWithPasskey checks a sign-in to c answering challengeID and
// returns the record whose passkey signed it, for Store.SignIn with
// MethodPasskey. The challenge must be c's sign-in challenge
// (ErrPasskeyChallenge; it is used up whatever happens); the credential
// one of c's passkeys, of the identity's record when the options named
// one, of the user handle's record when the response has one, verified by
// webauthn.VerifyAssertion for rp (all errors wrapping
// ErrPasskeyInvalid); and its counter must grow (ErrPasskeyCounter,
// logged). The new counter and the time of use are saved.
func (s *Store) AuthWithPasskey(c *Collection, rp webauthn.RelyingParty, challengeID string, resp *webauthn.AuthenticationResponse) (*Record, error) {
	if err := passkeyOn(c); err != nil {
		return nil, err
	}
	ch, err := s.takeChallenge(c, challengeID, false)
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	p, ok := s.pk.byCred[credKey(c.ID, resp.RawID)]
	s.mu.RUnlock()
	switch {
	case !ok:
		err = errors.New("unknown credential")
	case ch.identity && p.RecordID != ch.recID:
		err = errors.New("the credential is not the identity's")
	case len(resp.Response.UserHandle) > 0 && string(resp.Response.UserHandle) != p.RecordID:
		err = errors.New("the user handle is not the credential's record")
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPasskeyInvalid, err)
	}
	a, err := rp.VerifyAssertion(resp.Response.ClientDataJSON, resp.Response.AuthenticatorData, resp.Response.Signature, ch.value, p.PublicKey, false)
	if err != nil {
		s.log.Warn("passkey: sign-in refused", "collection", c.Name, "record", p.RecordID, "passkey", p.ID, "err", err)
		return nil, fmt.Errorf("%w: %w", ErrPasskeyInvalid, err)
	}
	return s.usePasskey(c, p.ID, a.SignCount)
}

// usePasskey saves the counter of a verified assertion by passkey id,
// refusing one that does not grow (under s.mu, so that two assertions
// with the same counter cannot both pass), and returns its record.
func (s *Store) usePasskey(c *Collection, id string, count uint32) (*Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pk.byID[id]
	if !ok {
		return nil, fmt.Errorf("%w: deleted meanwhile", ErrPasskeyInvalid)
	}
	r, ok := s.byCol[c.ID][p.RecordID]
	if !ok {
		return nil, fmt.Errorf("%w: no record", ErrPasskeyInvalid)
	}
	if !webauthn.CounterOK(p.SignCount, count) {
		s.log.Warn("passkey: signature counter did not increase; the authenticator may be cloned",
			"collection", c.Name, "record", p.RecordID, "passkey", p.ID, "stored", p.SignCount, "got", count)
		return nil, ErrPasskeyCounter
	}
	u := *p
	u.SignCount, u.LastUsed = count, s.now().UTC()
	if err := s.commit(&op{Op: "passkey", Passkey: &u}); err != nil {
		return nil, err
	}
	return r, nil
}
