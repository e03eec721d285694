package authn

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"
)

// AuthOrigin is a place a record signed in from: the counterpart of
// PocketBase's _authOrigins row, which PocketBase writes at each sign-in
// of a collection with authAlert enabled (a fingerprint of the client's
// address and user agent) to tell a new location apart and mail an
// alert. An origin is unique per (collection, record, fingerprint), goes
// with its record, and all of a record's go when its password changes, as
// in PocketBase. SignIn records them and tells when a new one warrants
// the alert mail.
type AuthOrigin struct {
	ID           string    `json:"id"`
	CollectionID string    `json:"collectionId"`
	RecordID     string    `json:"recordId"`
	Fingerprint  string    `json:"fingerprint"`
	Created      time.Time `json:"created"`
	Updated      time.Time `json:"updated"`
}

// AuthOriginsCollectionID and AuthOriginsName name PocketBase's system
// collection of sign-in origins.
const (
	AuthOriginsCollectionID = "pbc_4275539003"
	AuthOriginsName         = "_authOrigins"
)

// MaxAuthOrigins is how many origins a record keeps: saving a new one
// past it drops the oldest, as PocketBase does.
const MaxAuthOrigins = 5

// Public returns the origin as PocketBase reports an _authOrigins record.
func (o *AuthOrigin) Public() map[string]any {
	return map[string]any{
		"id": o.ID, "collectionId": AuthOriginsCollectionID, "collectionName": AuthOriginsName,
		"collectionRef": o.CollectionID, "recordRef": o.RecordID, "fingerprint": o.Fingerprint,
		"created": Time{o.Created}, "updated": Time{o.Updated},
	}
}

// addOrigin indexes o. The caller holds s.mu.
func (s *Store) addOrigin(o *AuthOrigin) {
	s.dropOrigin(o.ID)
	s.origins[o.ID] = o
	m := s.recOrigins[o.RecordID]
	if m == nil {
		m = map[string]*AuthOrigin{}
		s.recOrigins[o.RecordID] = m
	}
	m[o.ID] = o
}

// dropOrigin removes origin id from memory. The caller holds s.mu.
func (s *Store) dropOrigin(id string) {
	o, ok := s.origins[id]
	if !ok {
		return
	}
	delete(s.origins, id)
	if m := s.recOrigins[o.RecordID]; m != nil {
		delete(m, id)
		if len(m) == 0 {
			delete(s.recOrigins, o.RecordID)
		}
	}
}

// dropRecordOrigins removes the origins of record id from memory: they go
// with their record, and with its password. The caller holds s.mu.
func (s *Store) dropRecordOrigins(id string) {
	for oid := range s.recOrigins[id] {
		s.forget("a:" + oid)
		s.dropOrigin(oid)
	}
}

// byCreated orders origins oldest first (by id within the same instant).
func byCreated(a, b *AuthOrigin) int {
	return cmp.Or(a.Created.Compare(b.Created), strings.Compare(a.ID, b.ID))
}

// AllAuthOrigins returns every origin of every collection, oldest first.
func (s *Store) AllAuthOrigins() []*AuthOrigin {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := slices.Collect(maps.Values(s.origins))
	slices.SortFunc(out, byCreated)
	return out
}

// AuthOrigins returns the origins of record recID of c, oldest first.
func (s *Store) AuthOrigins(c *Collection, recID string) []*AuthOrigin {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := slices.Collect(maps.Values(s.recOrigins[recID]))
	out = slices.DeleteFunc(out, func(o *AuthOrigin) bool { return o.CollectionID != c.ID })
	slices.SortFunc(out, byCreated)
	return out
}

// SaveAuthOrigin records, durably, that record recID of c signed in from
// fingerprint: a known origin has its updated time set to now; a new one
// is created (isNew), and the record's oldest origins are dropped in the
// same commit so that it keeps at most MaxAuthOrigins. It returns the
// origin as stored, or ErrNotFound when the record does not exist.
func (s *Store) SaveAuthOrigin(c *Collection, recID, fingerprint string) (o *AuthOrigin, isNew bool, err error) {
	o, isNew, _, err = s.saveAuthOrigin(c, recID, fingerprint)
	return o, isNew, err
}

// saveAuthOrigin is SaveAuthOrigin, also returning how many origins the
// record had in c before (read under the same lock as the save, so that
// two sign-ins at once cannot both look like the record's first).
func (s *Store) saveAuthOrigin(c *Collection, recID, fingerprint string) (o *AuthOrigin, isNew bool, before int, err error) {
	id, err := s.rnd.ID()
	if err != nil {
		return nil, false, 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byCol[c.ID][recID]; !ok {
		return nil, false, 0, ErrNotFound
	}
	now := s.now().UTC()
	var mine []*AuthOrigin
	for _, x := range s.recOrigins[recID] {
		if x.CollectionID == c.ID {
			mine = append(mine, x)
		}
	}
	for _, x := range mine {
		if x.Fingerprint == fingerprint {
			o := *x
			o.Updated = now
			if err := s.commit(&op{Op: "authOrigin", AuthOrigin: &o}); err != nil {
				return nil, false, 0, err
			}
			return &o, false, len(mine), nil
		}
	}
	o = &AuthOrigin{ID: id, CollectionID: c.ID, RecordID: recID, Fingerprint: fingerprint, Created: now, Updated: now}
	ops := []*op{{Op: "authOrigin", AuthOrigin: o}}
	slices.SortFunc(mine, byCreated)
	for _, x := range mine[:max(0, len(mine)-(MaxAuthOrigins-1))] {
		ops = append(ops, &op{Op: "deleteAuthOrigin", ID: x.ID})
	}
	if err := s.commit(ops...); err != nil {
		return nil, false, 0, err
	}
	return o, true, len(mine), nil
}

// DeleteAuthOriginID deletes origin id, durably.
func (s *Store) DeleteAuthOriginID(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.origins[id]; !ok {
		return ErrNotFound
	}
	return s.commit(&op{Op: "deleteAuthOrigin", ID: id})
}
