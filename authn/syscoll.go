package authn

import (
	"cmp"
	"slices"
	"strings"

	"strongbox/authn/validation"
)

// PocketBase keeps its auth state in four system base collections, which
// a superuser lists, views and clears through the records API: _mfas (MFA
// sessions), _otps (one-time passwords), _externalAuths (OAuth2 links) and
// _authOrigins (sign-in origins). strongbox keeps that state in the store
// (mfaEntry, otpEntry, ExternalAuth, AuthOrigin) and reports the four as
// the collections PocketBase v0.31.0 creates: their ids, fields, indexes
// and rules. Their definitions are fixed: they are not stored, and no
// update may change them.

// Ids and names of the _mfas and _otps collections (PocketBase's).
const (
	MFAsCollectionID = "pbc_2279338944"
	MFAsName         = "_mfas"
	OTPsCollectionID = "pbc_1638494021"
	OTPsName         = "_otps"
)

// SystemOwnerRule is the list and view rule of the four system base
// collections, and the delete rule of _externalAuths and _authOrigins
// (_mfas and _otps have none: superusers only): the signed-in record sees
// the rows that refer to it.
const SystemOwnerRule = "@request.auth.id != '' && recordRef = @request.auth.id && collectionRef = @request.auth.collectionId"

// systemBase returns the definition of system base collection id (or
// name), with created and updated set to created, or nil.
func systemBase(idOrName string, created Time) *Collection {
	owner := func() *string { return strp(SystemOwnerRule) }
	text := func(name string, hidden bool) Field {
		return Field{Name: name, Type: FieldText, System: true, Hidden: hidden, Required: !hidden}
	}
	var c *Collection
	switch {
	case idOrName == MFAsCollectionID || strings.EqualFold(idOrName, MFAsName):
		c = &Collection{ID: MFAsCollectionID, Name: MFAsName, ListRule: owner(), ViewRule: owner(),
			Fields:  []Field{text("method", false)},
			Indexes: []string{"CREATE INDEX `idx_mfas_collectionRef_recordRef` ON `_mfas` (collectionRef,recordRef)"}}
	case idOrName == OTPsCollectionID || strings.EqualFold(idOrName, OTPsName):
		c = &Collection{ID: OTPsCollectionID, Name: OTPsName, ListRule: owner(), ViewRule: owner(),
			Fields: []Field{
				{Name: "password", Type: FieldPassword, System: true, Hidden: true, Required: true, Cost: 8},
				text("sentTo", true),
			},
			Indexes: []string{"CREATE INDEX `idx_otps_collectionRef_recordRef` ON `_otps` (collectionRef, recordRef)"}}
	case idOrName == ExternalAuthsCollectionID || strings.EqualFold(idOrName, ExternalAuthsName):
		c = &Collection{ID: ExternalAuthsCollectionID, Name: ExternalAuthsName, ListRule: owner(), ViewRule: owner(), DeleteRule: owner(),
			Fields: []Field{text("provider", false), text("providerId", false)},
			Indexes: []string{
				"CREATE UNIQUE INDEX `idx_externalAuths_record_provider` ON `_externalAuths` (collectionRef, recordRef, provider)",
				"CREATE UNIQUE INDEX `idx_externalAuths_collection_provider` ON `_externalAuths` (collectionRef, provider, providerId)",
			}}
	case idOrName == AuthOriginsCollectionID || strings.EqualFold(idOrName, AuthOriginsName):
		c = &Collection{ID: AuthOriginsCollectionID, Name: AuthOriginsName, ListRule: owner(), ViewRule: owner(), DeleteRule: owner(),
			Fields:  []Field{text("fingerprint", false)},
			Indexes: []string{"CREATE UNIQUE INDEX `idx_authOrigins_unique_pairs` ON `_authOrigins` (collectionRef, recordRef, fingerprint)"}}
	default:
		return nil
	}
	c.Type, c.System, c.Created, c.Updated = TypeBase, true, created, created
	head := []Field{systemAuthFields()[0], text("collectionRef", false), text("recordRef", false)}
	c.Fields = append(append(head, c.Fields...), autodateFields()...)
	markSuperusersDates(c)
	c.assignFieldIDs()
	return c
}

// systemBaseIDs are the ids of the system base collections, in the order
// PocketBase creates them.
var systemBaseIDs = []string{MFAsCollectionID, OTPsCollectionID, ExternalAuthsCollectionID, AuthOriginsCollectionID}

// systemCreated is when the system collections were created: with
// _superusers, when the data dir was. The caller holds s.mu.
func (s *Store) systemCreated() Time {
	if su, ok := s.cols[SuperusersID]; ok {
		return su.Created
	}
	return Time{}
}

// SystemCollections returns the system base collections, _mfas, _otps,
// _externalAuths and _authOrigins, in PocketBase's order.
func (s *Store) SystemCollections() []*Collection {
	s.mu.RLock()
	created := s.systemCreated()
	s.mu.RUnlock()
	out := make([]*Collection, len(systemBaseIDs))
	for i, id := range systemBaseIDs {
		out[i] = systemBase(id, created)
	}
	return out
}

// SystemCollection returns the system base collection with this id or
// (case-insensitive) name.
func (s *Store) SystemCollection(idOrName string) (*Collection, bool) {
	s.mu.RLock()
	created := s.systemCreated()
	s.mu.RUnlock()
	c := systemBase(idOrName, created)
	return c, c != nil
}

// updateSystemBase answers an update of system base collection cur, whose
// definition is fixed: the same errors as any system collection's (name,
// rules, id, type, flag, dates), and any other value that differs from
// the current one refused as not stored. An update that changes nothing
// returns cur.
func updateSystemBase(cur *Collection, in CollectionInput) (*Collection, error) {
	body, sent, err := in.decode()
	if err != nil {
		return nil, err
	}
	n := cur.clone()
	if err := decodeInto(body, n); err != nil {
		return nil, err
	}
	errs := validation.Errors{}
	guardFixed(errs, sent, cur, n)
	checkApplied(errs, sent, cur, cur)
	if len(errs) > 0 {
		return nil, errs
	}
	return cur, nil
}

// public returns the session as PocketBase reports an _mfas record
// (a session is never updated: updated is its creation).
func (m *mfaEntry) public() map[string]any {
	return map[string]any{
		"id": m.ID, "collectionId": MFAsCollectionID, "collectionName": MFAsName,
		"collectionRef": m.CollectionID, "recordRef": m.RecordID, "method": m.Method,
		"created": Time{m.Created}, "updated": Time{m.Created},
	}
}

// public returns the OTP as PocketBase reports an _otps record to a
// superuser, hidden fields included: "password" is "", as PocketBase
// reports every password field, so neither the code nor its hash ever
// leaves the store.
func (o *otpEntry) public() map[string]any {
	return map[string]any{
		"id": o.ID, "collectionId": OTPsCollectionID, "collectionName": OTPsName,
		"collectionRef": o.CollectionID, "recordRef": o.RecordID, "password": "", "sentTo": o.SentTo,
		"created": Time{o.Created}, "updated": Time{o.Created},
	}
}

// publicSorted returns the values of m as records, oldest first (by id
// within the same instant).
func publicSorted[V interface{ public() map[string]any }](m map[string]V) []map[string]any {
	out := make([]map[string]any, 0, len(m))
	for _, v := range m {
		out = append(out, v.public())
	}
	slices.SortFunc(out, func(a, b map[string]any) int {
		return cmp.Or(a["created"].(Time).Compare(b["created"].(Time).Time), strings.Compare(a["id"].(string), b["id"].(string)))
	})
	return out
}

// MFARecords returns every MFA session as an _mfas record, oldest first.
// An expired session stays until it is used or swept, as in PocketBase.
func (s *Store) MFARecords() []map[string]any {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return publicSorted(s.mfas)
}

// OTPRecords returns every OTP as an _otps record, oldest first (see
// otpEntry.public). An OTP still being saved is included: deleting it
// keeps it from being saved and mailed.
func (s *Store) OTPRecords() []map[string]any {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return publicSorted(s.otps)
}

// DeleteMFAID deletes MFA session id, durably: a second factor that
// presents it afterwards fails as for an unknown session.
func (s *Store) DeleteMFAID(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.mfas[id]; !ok {
		return ErrNotFound
	}
	return s.commit(&op{Op: "deleteMFA", ID: id})
}

// DeleteOTPID deletes OTP id, durably: a sign-in with it afterwards fails
// as with an unknown OTP.
func (s *Store) DeleteOTPID(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.otps[id]; !ok {
		return ErrNotFound
	}
	return s.commit(&op{Op: "deleteOTP", ID: id})
}
