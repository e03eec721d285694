package authn

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"time"
)

// OAuth2 sign-in errors.
var (
	// ErrOAuth2Off: OAuth2 sign-in is disabled for the collection (always
	// so for _superusers).
	ErrOAuth2Off = errors.New("authn: OAuth2 authentication is disabled")
	// ErrLinkConflict: the record resolved for a sign-in is already linked
	// to another identity of the same provider (a link is unique per
	// record and provider, as in PocketBase).
	ErrLinkConflict = errors.New("authn: the record is linked to another account of this provider")
)

// ExternalAuth links a record to an identity at an OAuth2 provider: the
// counterpart of PocketBase's _externalAuths row. A link is
// unique per (collection, provider, provider id) and per (record,
// provider), and goes with its record.
type ExternalAuth struct {
	ID           string    `json:"id"`
	CollectionID string    `json:"collectionId"`
	RecordID     string    `json:"recordId"`
	Provider     string    `json:"provider"`
	ProviderID   string    `json:"providerId"`
	Created      time.Time `json:"created"`
	Updated      time.Time `json:"updated"`
}

// Public returns the link as PocketBase reports an _externalAuths
// record (keys sorted, as its records are).
func (l *ExternalAuth) Public() map[string]any {
	return map[string]any{
		"id": l.ID, "collectionId": ExternalAuthsCollectionID, "collectionName": ExternalAuthsName,
		"collectionRef": l.CollectionID, "recordRef": l.RecordID,
		"provider": l.Provider, "providerId": l.ProviderID,
		"created": Time{l.Created}, "updated": Time{l.Updated},
	}
}

// identityKey is the key of a link's provider identity in s.linkByIdentity.
func identityKey(colID, provider, providerID string) string {
	return colID + "\x00" + provider + "\x00" + providerID
}

// addLink indexes l. The caller holds s.mu.
func (s *Store) addLink(l *ExternalAuth) {
	if old, ok := s.links[l.ID]; ok {
		s.dropLink(old.ID)
	}
	s.links[l.ID] = l
	s.linkByIdentity[identityKey(l.CollectionID, l.Provider, l.ProviderID)] = l
	m := s.recLinks[l.RecordID]
	if m == nil {
		m = map[string]*ExternalAuth{}
		s.recLinks[l.RecordID] = m
	}
	m[l.Provider] = l
}

// dropLink removes link id from memory. The caller holds s.mu.
func (s *Store) dropLink(id string) {
	l, ok := s.links[id]
	if !ok {
		return
	}
	delete(s.links, id)
	delete(s.linkByIdentity, identityKey(l.CollectionID, l.Provider, l.ProviderID))
	if m := s.recLinks[l.RecordID]; m != nil && m[l.Provider] == l {
		delete(m, l.Provider)
		if len(m) == 0 {
			delete(s.recLinks, l.RecordID)
		}
	}
}

// dropRecordLinks removes the links of record id from memory: they go with
// their record. The caller holds s.mu.
func (s *Store) dropRecordLinks(id string) {
	for _, l := range s.recLinks[id] {
		s.forget("e:" + l.ID)
		s.dropLink(l.ID)
	}
}

// ExternalAuths returns the links of record recID of c, oldest first.
func (s *Store) ExternalAuths(c *Collection, recID string) []*ExternalAuth {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := slices.Collect(maps.Values(s.recLinks[recID]))
	out = slices.DeleteFunc(out, func(l *ExternalAuth) bool { return l.CollectionID != c.ID })
	slices.SortFunc(out, func(a, b *ExternalAuth) int {
		return cmp.Or(a.Created.Compare(b.Created), strings.Compare(a.Provider, b.Provider))
	})
	return out
}

// ExternalAuthsCollectionID and ExternalAuthsName name PocketBase's
// system collection of links (pbc_ + CRC-32 of "base_externalAuths", as
// PocketBase derives it), which a v0.31 SDK's listExternalAuths and
// unlinkExternalAuth read and delete through the records API.
const (
	ExternalAuthsCollectionID = "pbc_2281828961"
	ExternalAuthsName         = "_externalAuths"
)

// AllExternalAuths returns every link of every collection, oldest first.
func (s *Store) AllExternalAuths() []*ExternalAuth {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := slices.Collect(maps.Values(s.links))
	slices.SortFunc(out, func(a, b *ExternalAuth) int {
		return cmp.Or(a.Created.Compare(b.Created), strings.Compare(a.ID, b.ID))
	})
	return out
}

// DeleteExternalAuthID deletes link id, durably.
func (s *Store) DeleteExternalAuthID(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.links[id]; !ok {
		return ErrNotFound
	}
	return s.commit(&op{Op: "deleteExternalAuth", ID: id})
}

// DeleteExternalAuth unlinks provider from record recID of c, durably.
func (s *Store) DeleteExternalAuth(c *Collection, recID, provider string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.recLinks[recID][provider]
	if !ok || l.CollectionID != c.ID {
		return ErrNotFound
	}
	return s.commit(&op{Op: "deleteExternalAuth", ID: l.ID})
}

// OAuth2Identity is who a provider says signed in, as OAuth2SignIn needs
// it. Email must be empty unless the provider verified it: an unverified
// provider email is never trusted (PocketBase too takes an email only when
// the provider marks it verified).
type OAuth2Identity struct {
	Provider  string // the provider's name in the collection's options
	ID        string // the user's id at the provider
	Name      string
	Username  string
	Email     string // verified by the provider, or ""
	AvatarURL string
}

// OAuth2SignIn is one OAuth2 sign-in to resolve to a record.
type OAuth2SignIn struct {
	Identity OAuth2Identity
	// Authed is the record the request is authenticated as, when it
	// belongs to the collection signed in to: the link target when the
	// identity is not linked yet. Nil otherwise.
	Authed *Record
	// CreateData are the values of a record created by this sign-in.
	CreateData map[string]any
	// Superuser marks a request by a superuser: it has full access
	// (RecordInput's Manager) and may set hidden fields (its Superuser).
	Superuser bool
	// MayCreate, when set, is asked before a record is created (the
	// collection's createRule, which the caller evaluates) with the
	// body the rule reads: CreateData with the identity's email when it
	// names none, as RecordInput.Accepted keeps it. Its error is returned
	// as it is.
	MayCreate func(body map[string]any) error
}

// SignInOAuth2 resolves an OAuth2 sign-in to a record of c and links it
// in PocketBase's order, first match wins:
//
//  1. the record already linked to the identity;
//  2. else in.Authed (linking a provider to the signed-in account);
//  3. else the record with the identity's email (verified by the provider);
//  4. else a new record, created as a sign-up with in.CreateData, the
//     identity's email and the collection's mappedFields (id, name,
//     username when free and valid, avatarURL into a text or url field),
//     a random password, and verified when its email is the provider's.
//
// An existing record (1, 3) that is not in.Authed, has an email and is
// not verified gets a random password, which ends its tokens: whoever
// registered it before the email's owner signed in with the provider
// (pre-account takeover) loses it. An existing unverified record whose
// email is empty or the provider's becomes verified; one without an email
// gets the provider's. The record's changes, or its creation, and the new
// link are one commit. isNew reports a created record.
//
// Errors: ErrOAuth2Off; ErrNotFound when the linked record is gone;
// ErrLinkConflict; validation.Errors for a sign-up the record validation
// refuses.
func (s *Store) SignInOAuth2(ctx context.Context, c *Collection, in OAuth2SignIn) (rec *Record, isNew bool, err error) {
	if !c.IsAuth() {
		return nil, false, ErrNotAuthCollection
	}
	if !c.OAuth2.Enabled || c.IsSuperusers() {
		return nil, false, ErrOAuth2Off
	}
	for range 3 {
		rec, isNew, err = s.signInOAuth2(ctx, c, in)
		if err != errConflict {
			return rec, isNew, err
		}
	}
	return nil, false, err
}

func (s *Store) signInOAuth2(ctx context.Context, c *Collection, in OAuth2SignIn) (*Record, bool, error) {
	id := in.Identity
	key := identityKey(c.ID, id.Provider, id.ID)
	s.mu.RLock()
	var target *Record
	linked := false
	if l, ok := s.linkByIdentity[key]; ok {
		r, found := s.byCol[c.ID][l.RecordID]
		if !found {
			s.mu.RUnlock()
			return nil, false, ErrNotFound
		}
		target, linked = r, true
	} else if in.Authed != nil {
		target = s.byCol[c.ID][in.Authed.ID]
		if target == nil {
			s.mu.RUnlock()
			return nil, false, ErrNotFound
		}
	} else if id.Email != "" {
		target = s.byEmail[c.ID][id.Email]
	}
	s.mu.RUnlock()
	if target == nil {
		return s.signUpOAuth2(ctx, c, in)
	}

	r := target.clone()
	changed := false
	isAuthed := in.Authed != nil && in.Authed.ID == target.ID
	resetPassword := !isAuthed && target.Email != "" && !target.Verified
	if target.Email == "" && id.Email != "" {
		r.Email, changed = id.Email, true
	}
	if !target.Verified && (target.Email == "" || target.Email == id.Email) {
		r.Verified, changed = true, true
	}
	if resetPassword {
		password, err := s.rnd.Password(30)
		if err != nil {
			return nil, false, err
		}
		if r.PasswordHash, err = s.hasher.Hash(ctx, password); err != nil {
			return nil, false, err
		}
		changed = true
	}
	if resetPassword || r.Email != target.Email {
		k, err := s.rnd.Password(50)
		if err != nil {
			return nil, false, err
		}
		r.TokenKey = k
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cols[c.ID] != c {
		return nil, false, ErrNotFound
	}
	if cur := s.byCol[c.ID][target.ID]; cur != target {
		return nil, false, errConflict
	}
	if l, ok := s.linkByIdentity[key]; ok != linked || (ok && l.RecordID != target.ID) {
		return nil, false, errConflict
	}
	var ops []*op
	if changed {
		r.Updated = s.now().UTC()
		if err := s.checkUnique(c, r, target); err != nil {
			return nil, false, err
		}
		ops = append(ops, &op{Op: "record", Record: r})
	} else {
		r = target
	}
	if !linked {
		lop, err := s.linkOp(c, r, id)
		if err != nil {
			return nil, false, err
		}
		ops = append(ops, lop)
	}
	if len(ops) > 0 {
		if err := s.commit(ops...); err != nil {
			return nil, false, err
		}
	}
	return r, false, nil
}

// linkOp returns the op that links r to identity id, refusing a second
// link of r to the provider. The caller holds s.mu.
func (s *Store) linkOp(c *Collection, r *Record, id OAuth2Identity) (*op, error) {
	if _, taken := s.recLinks[r.ID][id.Provider]; taken {
		return nil, ErrLinkConflict
	}
	if _, taken := s.linkByIdentity[identityKey(c.ID, id.Provider, id.ID)]; taken {
		return nil, errConflict
	}
	lid, err := s.rnd.ID()
	if err != nil {
		return nil, err
	}
	now := s.now().UTC()
	return &op{Op: "externalAuth", ExternalAuth: &ExternalAuth{
		ID: lid, CollectionID: c.ID, RecordID: r.ID, Provider: id.Provider, ProviderID: id.ID,
		Created: now, Updated: now,
	}}, nil
}

// signUpOAuth2 creates the record of a first OAuth2 sign-in (step 4 of
// SignInOAuth2) and its link, in one commit.
func (s *Store) signUpOAuth2(ctx context.Context, c *Collection, in OAuth2SignIn) (*Record, bool, error) {
	id := in.Identity
	values := maps.Clone(in.CreateData)
	if values == nil {
		values = map[string]any{}
	}
	if e, _ := values["email"].(string); e == "" {
		values["email"] = id.Email
	}
	input := RecordInput{Values: values, Manager: in.Superuser, Superuser: in.Superuser}
	values = input.Accepted(c)
	if in.MayCreate != nil {
		if err := in.MayCreate(maps.Clone(values)); err != nil {
			return nil, false, err
		}
	}
	mf := c.OAuth2.MappedFields
	fill := func(field, v string) {
		if field == "" || v == "" {
			return
		}
		if _, sent := values[field]; sent {
			return
		}
		values[field] = v
	}
	fill(mf.ID, id.ID)
	fill(mf.Name, id.Name)
	if f := c.Field(mf.Username); f != nil && id.Username != "" {
		// Only a free, valid username (PocketBase's rule): a taken or
		// invalid one would make the whole sign-up fail.
		if _, err := f.normalize(id.Username); err == nil {
			s.mu.RLock()
			_, taken := s.findByField(c, mf.Username, id.Username)
			s.mu.RUnlock()
			if !taken {
				fill(mf.Username, id.Username)
			}
		}
	}
	if f := c.Field(mf.AvatarURL); f != nil && (f.Type == FieldText || f.Type == FieldURL) {
		// strongbox stores no files: an avatar is not downloaded into a
		// file field (which also keeps the provider from making the
		// server fetch arbitrary URLs); a text or url field gets the URL.
		fill(mf.AvatarURL, id.AvatarURL)
	}
	if _, sent := values["password"]; !sent {
		password, err := s.rnd.Password(30)
		if err != nil {
			return nil, false, err
		}
		values["password"], values["passwordConfirm"] = password, password
	}
	// createRecord applies Accepted again: a mapped field may be hidden.
	input.Values = values
	rec, err := s.createRecord(ctx, c, input, func(r *Record) ([]*op, error) {
		if !r.Verified && r.Email == id.Email {
			r.Verified = true
		}
		lop, err := s.linkOp(c, r, id)
		if err != nil {
			return nil, err
		}
		return []*op{lop}, nil
	})
	if err != nil {
		return nil, false, err
	}
	return rec, true, nil
}
