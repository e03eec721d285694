package authn

import (
	"context"
	"errors"
	"maps"
	"slices"

	"strongbox/authn/validation"
)

// RecordInput is the decoded body of a record create or update: field name
// to value, with JSON types (string, float64, bool, nil). Manager marks a
// caller with full access to the record (a superuser): only a manager may set
// verified, change the email directly, or change the password without the
// old one. Superuser marks a superuser caller, the only one whose values
// of hidden fields are stored (see Accepted); it does not imply Manager.
type RecordInput struct {
	Values    map[string]any
	Manager   bool
	Superuser bool
}

// Accepted returns the values of in that a record of c takes from the
// caller: all of them from a superuser; from anyone else, all but those of
// c's hidden custom fields, which are dropped without an error, as
// PocketBase v0.31.0 drops them from a non-superuser's create or update
// (so a guest cannot sign up with a hidden "role" of "admin"). The rules
// read the body as accepted: @request.body.role is unset for a guest who
// sent one, as in PocketBase. The hidden system fields keep their own
// handling (the password is read; tokenKey is refused as read-only). The
// result is in.Values itself when nothing is dropped, else a copy.
func (in RecordInput) Accepted(c *Collection) map[string]any {
	if in.Superuser {
		return in.Values
	}
	var out map[string]any
	for i := range c.Fields {
		f := &c.Fields[i]
		if _, sent := in.Values[f.Name]; !sent || !f.Hidden || f.System {
			continue
		}
		if out == nil {
			out = maps.Clone(in.Values)
		}
		delete(out, f.Name)
	}
	if out == nil {
		return in.Values
	}
	return out
}

func (in RecordInput) str(key string) (string, bool, *validation.Error) {
	v, ok := in.Values[key]
	if !ok || v == nil {
		return "", ok, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", true, errInvalidValue
	}
	return s, true, nil
}

// checkEmail validates the email of an auth record: required, well-formed.
func checkEmail(email string) *validation.Error {
	switch {
	case email == "":
		return errRequired
	case !ValidEmail(email):
		return errEmail
	}
	return nil
}

// changesPassword reports whether a record update touches the password:
// password, passwordConfirm or oldPassword is sent, and not empty.
func (in RecordInput) changesPassword() bool {
	for _, k := range []string{"password", "passwordConfirm", "oldPassword"} {
		if v, _, ferr := in.str(k); ferr != nil || v != "" {
			return true
		}
	}
	return false
}

// passwordFields is the first stage of validating a record create, or an
// update that changes the password, in PocketBase's order: the password
// fields alone. password is required; passwordConfirm is required and must
// equal it; when checkOld is not nil (an update by the record's owner)
// oldPassword is required and must be the current password. When this
// stage fails, its errors are the whole answer: the record's other fields,
// and the new password's length, are checked only once it passes. err is
// a failure of checkOld itself.
func passwordFields(in RecordInput, checkOld func(string) (bool, error)) (password string, errs validation.Errors, err error) {
	errs = validation.Errors{}
	password, _, ferr := in.str("password")
	switch {
	case ferr != nil:
		errs["password"] = ferr
	case password == "":
		errs["password"] = errRequired
	}
	confirm, _, ferr := in.str("passwordConfirm")
	switch {
	case ferr != nil:
		errs["passwordConfirm"] = ferr
	case confirm == "":
		errs["passwordConfirm"] = errRequired
	case confirm != password:
		errs["passwordConfirm"] = errMismatch
	}
	if checkOld != nil {
		oldPassword, _, ferr := in.str("oldPassword")
		switch {
		case ferr != nil:
			errs["oldPassword"] = ferr
		case oldPassword == "":
			errs["oldPassword"] = errRequired
		default:
			ok, err := checkOld(oldPassword)
			if err != nil {
				return "", nil, err
			}
			if !ok {
				errs["oldPassword"] = errInvalidOld
			}
		}
	}
	return password, errs, nil
}

// CreateRecord validates in and stores a new record in the auth collection c,
// of the values in.Accepted keeps. Validation failures are returned as a
// validation.Errors.
func (s *Store) CreateRecord(ctx context.Context, c *Collection, in RecordInput) (*Record, error) {
	return s.createRecord(ctx, c, in, nil)
}

// createRecord is CreateRecord with a hook that runs under s.mu once the
// record is valid, has its id and is about to be committed: it may change
// the record and return more ops for the same commit (OAuth2 sign-up marks
// the record verified and links it, all or nothing).
func (s *Store) createRecord(ctx context.Context, c *Collection, in RecordInput, hook func(r *Record) ([]*op, error)) (*Record, error) {
	if !c.IsAuth() {
		return nil, ErrNotAuthCollection
	}
	in.Values = in.Accepted(c)
	r, password, err := s.newRecord(c, in)
	if err != nil {
		return nil, err
	}
	if r.PasswordHash, err = s.hasher.Hash(ctx, password); err != nil {
		return nil, err
	}
	if r.TokenKey, err = s.rnd.Password(50); err != nil {
		return nil, err
	}
	if err := s.insertRecord(c, r, hook); err != nil {
		return nil, err
	}
	return r, nil
}

// newRecord is the record of c that in describes, validated, without its
// password hash and token key, and the password to hash; or the
// validation.Errors of every field in refuses.
func (s *Store) newRecord(c *Collection, in RecordInput) (*Record, string, error) {
	errs := validation.Errors{}
	now := s.now().UTC()
	r := &Record{CollectionID: c.ID, Created: now, Updated: now, Fields: map[string]any{}}
	if id, ok, ferr := in.str("id"); ferr != nil {
		errs["id"] = ferr
	} else if ok && id != "" {
		// The id field's own rules (15 characters of [a-z0-9]), with
		// PocketBase's codes for each.
		if f := c.Field("id"); f != nil {
			if ferr := f.checkText(id); ferr != nil {
				errs["id"] = ferr
			}
		} else if !ValidID(id) {
			errs["id"] = errFormat
		}
		r.ID = id
	}
	email, _, ferr := in.str("email")
	if ferr == nil {
		ferr = checkEmail(email)
	}
	if ferr != nil {
		errs["email"] = ferr
	}
	r.Email = email
	if b, ok := toBool(in.Values["emailVisibility"]); ok {
		r.EmailVisibility = b
	} else {
		errs["emailVisibility"] = errInvalidValue
	}
	if b, ok := toBool(in.Values["verified"]); !ok {
		errs["verified"] = errInvalidValue
	} else if b && !in.Manager && !c.IsSuperusers() {
		errs["verified"] = errMismatch
	} else if _, sent := in.Values["verified"]; sent && !b && c.IsSuperusers() {
		errs["verified"] = errSuperusersVerified
	} else {
		r.Verified = b || c.IsSuperusers()
	}
	password, perrs, err := passwordFields(in, nil)
	if err != nil {
		return nil, "", err
	}
	if len(perrs) > 0 {
		return nil, "", perrs
	}
	if ferr := checkPassword(c, password); ferr != nil {
		errs["password"] = ferr
	}
	s.setCustomFields(c, r, in.Values, true, errs)
	checkRecordKeys(c, nil, in.Values, errs)
	if len(errs) > 0 {
		return nil, "", errs
	}
	return r, password, nil
}

// insertRecord commits the new record r of c, with the ops of hook, which
// runs under s.mu once r has its id: an id of r's is checked for
// uniqueness, a missing one drawn.
func (s *Store) insertRecord(c *Collection, r *Record, hook func(r *Record) ([]*op, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cols[c.ID] != c {
		// The collection was deleted or changed while the record was
		// being prepared against it: it was not validated against what
		// stands now.
		return ErrNotFound
	}
	if r.ID == "" {
		for {
			var err error
			if r.ID, err = s.rnd.ID(); err != nil {
				return err
			}
			if _, taken := s.recs[r.ID]; !taken {
				break
			}
		}
	} else if _, taken := s.recs[r.ID]; taken {
		return validation.Errors{"id": errNotUnique}
	}
	ops := []*op{{Op: "record", Record: r}}
	if hook != nil {
		// Before the uniqueness check: a concurrent sign-in that linked
		// the same identity first is a retry, not a duplicate email.
		more, err := hook(r)
		if err != nil {
			return err
		}
		ops = append(ops, more...)
	}
	if err := s.checkUnique(c, r, nil); err != nil {
		return err
	}
	return s.commit(ops...)
}

// recordInputKeys are the keys of a record body that are not fields of the
// collection's list but are read by CreateRecord and UpdateRecord.
var recordInputKeys = []string{"passwordConfirm", "oldPassword"}

// checkRecordKeys refuses the keys of a record body that cannot be applied
// (old is the record before an update, nil on create), so that none is
// silently dropped: a changed id (PocketBase's validation_pk_change), the
// read-only keys a record reports (collectionId, collectionName, created,
// updated) unless they are sent unchanged, the hidden tokenKey, and keys
// that are no field of the collection. Keys that already have an error
// keep it.
func checkRecordKeys(c *Collection, old *Record, values map[string]any, errs validation.Errors) {
	for key, v := range values {
		if errs[key] != nil {
			continue
		}
		var same bool
		switch key {
		case "id":
			if old != nil && v != old.ID {
				errs[key] = errPKChange
			}
			continue
		case "collectionId":
			same = v == c.ID
		case "collectionName":
			same = v == c.Name
		case "created", "updated":
			if old != nil {
				t := old.Created
				if key == "updated" {
					t = old.Updated
				}
				same = v == Time{t}.String()
			}
		case "tokenKey":
		case "oldPassword":
			if old == nil {
				errs[key] = errUnknownField // a new record has no old password
			}
			continue
		default:
			if c.Field(key) == nil && !slices.Contains(recordInputKeys, key) {
				errs[key] = errUnknownField
			}
			continue
		}
		if !same {
			errs[key] = errReadOnly
		}
	}
}

// setCustomFields validates and copies the collection's own fields from
// values into r. On create every field is set (to its zero value when
// absent); on update only the fields present in values.
func (s *Store) setCustomFields(c *Collection, r *Record, values map[string]any, create bool, errs validation.Errors) {
	for _, f := range c.ownFields() {
		v, present := values[f.Name]
		if !present && !create {
			continue
		}
		nv, ferr := f.normalize(v)
		if ferr != nil {
			errs[f.Name] = ferr
			continue
		}
		r.Fields[f.Name] = nv
	}
}

// ownFields returns the fields of c whose values a record stores in its
// Fields: neither the system fields nor the dates.
func (c *Collection) ownFields() []*Field {
	var out []*Field
	for i := range c.Fields {
		if f := &c.Fields[i]; !f.System && f.Type != FieldAutodate {
			out = append(out, f)
		}
	}
	return out
}

// checkUnique refuses an email or identity-field value another record of c
// already has. The caller holds s.mu.
func (s *Store) checkUnique(c *Collection, r, old *Record) error {
	errs := validation.Errors{}
	if other, ok := s.byEmail[c.ID][r.Email]; ok && other.ID != r.ID {
		errs["email"] = errNotUnique
	}
	for _, name := range c.PasswordAuth.IdentityFields {
		if name == "email" || name == "id" {
			continue
		}
		v, _ := r.Fields[name].(string)
		if v == "" || (old != nil && old.Fields[name] == v) {
			continue
		}
		if other, ok := s.findByField(c, name, v); ok && other.ID != r.ID {
			errs[name] = errNotUnique
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// UpdateRecord applies the fields present in in to record id of c (those
// in.Accepted keeps). Changing the password or the email rotates the
// record's token key, which ends every token issued for it.
func (s *Store) UpdateRecord(ctx context.Context, c *Collection, id string, in RecordInput) (*Record, error) {
	in.Values = in.Accepted(c)
	for range 3 {
		r, err := s.updateRecord(ctx, c, id, in)
		if err != errConflict {
			return r, err
		}
	}
	return nil, errConflict
}

// errConflict means the record changed while an update was being prepared
// (validation and hashing run without the lock); UpdateRecord retries.
var errConflict = errors.New("authn: record changed concurrently")

func (s *Store) updateRecord(ctx context.Context, c *Collection, id string, in RecordInput) (*Record, error) {
	old, ok := s.Record(c, id)
	if !ok {
		return nil, ErrNotFound
	}
	errs := validation.Errors{}
	r := old.clone()
	if r.Fields == nil {
		r.Fields = map[string]any{}
	}
	r.Updated = s.now().UTC()
	checkRecordKeys(c, old, in.Values, errs)

	if email, present, ferr := in.str("email"); ferr != nil {
		errs["email"] = ferr
	} else if present && email != old.Email {
		if !in.Manager {
			errs["email"] = errMismatch
		} else if ferr := checkEmail(email); ferr != nil {
			errs["email"] = ferr
		}
		r.Email = email
	}
	if v, present := in.Values["emailVisibility"]; present {
		if b, ok := toBool(v); ok {
			r.EmailVisibility = b
		} else {
			errs["emailVisibility"] = errInvalidValue
		}
	}
	if v, present := in.Values["verified"]; present {
		b, ok := toBool(v)
		switch {
		case !ok:
			errs["verified"] = errInvalidValue
		case b != old.Verified && !in.Manager:
			errs["verified"] = errMismatch
		case !b && c.IsSuperusers():
			errs["verified"] = errSuperusersVerified
		default:
			r.Verified = b
		}
	}
	var password string
	if in.changesPassword() {
		var checkOld func(string) (bool, error)
		if !in.Manager {
			checkOld = func(oldPassword string) (bool, error) { return s.hasher.Check(ctx, old.PasswordHash, oldPassword) }
		}
		pw, perrs, err := passwordFields(in, checkOld)
		if err != nil {
			return nil, err
		}
		if len(perrs) > 0 {
			return nil, perrs
		}
		password = pw
		if ferr := checkPassword(c, password); ferr != nil {
			errs["password"] = ferr
		}
	}
	s.setCustomFields(c, r, in.Values, false, errs)
	if len(errs) > 0 {
		return nil, errs
	}
	if password != "" {
		hash, err := s.hasher.Hash(ctx, password)
		if err != nil {
			return nil, err
		}
		r.PasswordHash = hash
	}
	if password != "" || r.Email != old.Email {
		key, err := s.rnd.Password(50)
		if err != nil {
			return nil, err
		}
		r.TokenKey = key
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cols[c.ID] != c {
		return nil, ErrNotFound // as in CreateRecord
	}
	if cur, ok := s.byCol[c.ID][id]; !ok {
		return nil, ErrNotFound
	} else if cur != old {
		return nil, errConflict
	}
	if err := s.checkUnique(c, r, old); err != nil {
		return nil, err
	}
	if err := s.commit(&op{Op: "record", Record: r}); err != nil {
		return nil, err
	}
	return r, nil
}

// SetPassword sets the password of record id of c without any other check.
// It is the superuser CLI's path, which bypasses the API's rules.
func (s *Store) SetPassword(ctx context.Context, c *Collection, id, password string) (*Record, error) {
	return s.UpdateRecord(ctx, c, id, RecordInput{Manager: true, Values: map[string]any{
		"password": password, "passwordConfirm": password,
	}})
}

// DeleteRecord deletes record id of c. The last superuser cannot be deleted.
func (s *Store) DeleteRecord(c *Collection, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byCol[c.ID][id]; !ok {
		return ErrNotFound
	}
	if c.IsSuperusers() && len(s.byCol[c.ID]) == 1 {
		return ErrLastSuperuser
	}
	return s.commit(&op{Op: "deleteRecord", ID: id})
}
