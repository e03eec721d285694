package authn

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"strongbox/authn/validation"
)

// ErrInvalidJSON wraps collection values that do not decode into a
// collection: not an object, or a value of the wrong JSON type for its key.
var ErrInvalidJSON = errors.New("authn: invalid collection JSON")

// CollectionInput is a collection create or update as the client sent it:
// Values is the decoded JSON object (numbers as json.Number, or float64),
// key by key. It is decoded into the collection as PocketBase decodes a
// body (see decodeInto), and every key of it is either applied or refused
// with a code, never dropped (checkApplied).
type CollectionInput struct {
	Values map[string]any
}

// decode returns in.Values as JSON text, to decode into a collection, and as
// generic JSON (numbers as float64), to compare with what the collection
// reports. A json.Number is written as it was sent, so that an integer
// option sent as 1.0 or 1e3 is refused as it would be in a body.
func (in CollectionInput) decode() ([]byte, map[string]any, error) {
	if in.Values == nil {
		return nil, nil, fmt.Errorf("%w: not an object", ErrInvalidJSON)
	}
	body, err := json.Marshal(in.Values)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrInvalidJSON, err)
	}
	var sent map[string]any
	if err := json.Unmarshal(body, &sent); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrInvalidJSON, err)
	}
	return body, sent, nil
}

var nameRe = regexp.MustCompile(`^\w+$`)

// reservedFieldNames are names a custom field may not take.
var reservedFieldNames = []string{"id", "password", "tokenKey", "email", "emailVisibility", "verified", "created", "updated", "collectionId", "collectionName", "expand", "passwordConfirm", "oldPassword"}

// CreateCollection validates a collection definition (PocketBase's JSON
// shape: name, type "auth", rules, fields, auth options) and stores it.
// Base and view collections, PocketBase's other types, are refused
// (errOnlyAuth): strongbox would not store their records. Auth collections
// start from the default options, with fresh secrets, and the input's
// options applied on top. A key of the input that
// the new collection does not report as sent is refused (see checkApplied).
func (s *Store) CreateCollection(in CollectionInput) (*Collection, error) {
	return s.createCollection(in, Time{}, Time{})
}

// createCollection is CreateCollection; created and updated, when not
// zero, are the collection's dates instead of now (ImportCollection).
func (s *Store) createCollection(in CollectionInput, created, updated Time) (*Collection, error) {
	body, sent, err := in.decode()
	if err != nil {
		return nil, err
	}
	var head struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidJSON, err)
	}
	now := s.now().UTC()
	c := &Collection{Type: head.Type, Created: Time{now}, Updated: Time{now}, Indexes: []string{}}
	switch head.Type {
	case TypeAuth:
		opts, err := defaultAuthOptions(s.rnd, 604800)
		if err != nil {
			return nil, err
		}
		c.AuthOptions = opts
	}
	id := head.ID
	if id == "" {
		n, err := s.rnd.String("0123456789", 10)
		if err != nil {
			return nil, err
		}
		id = "pbc_" + n
	}
	if err := decodeInto(body, c); err != nil {
		return nil, err
	}
	errs := validation.Errors{}
	c.ID = id
	c.Type = cmp.Or(head.Type, TypeBase)
	for key, t := range map[string]*Time{"created": &c.Created, "updated": &c.Updated} {
		if _, ok := sent[key]; ok {
			errs[key] = errReadOnly
		}
		*t = Time{now}
	}
	if !created.IsZero() {
		c.Created, c.Updated = created, cmp.Or(updated, created)
	}
	if c.Type != TypeAuth {
		c.AuthOptions = nil
	}
	if c.Fields == nil {
		c.Fields = []Field{}
	}
	if c.IsAuth() {
		builtin := append(systemAuthFields(), autodateFields()...)
		for i := range builtin {
			builtin[i].ID = fieldID(builtin[i].Type, builtin[i].Name)
		}
		c.Fields = mergeAuthFields(errs, c.Fields, builtin, false)
		c.Indexes = authIndexes(c.ID, c.Name)
	}
	c.assignFieldIDs()

	s.mu.Lock()
	defer s.mu.Unlock()
	if head.ID != "" {
		switch _, taken := s.cols[head.ID]; {
		case len(head.ID) > 100 || !nameRe.MatchString(head.ID):
			errs["id"] = errMatch
		case taken || systemBase(head.ID, Time{}) != nil:
			errs["id"] = validation.New(validation.CodeInvalidID, "The id is invalid or already exists.")
		}
	}
	s.collectionErrors(errs, c, nil)
	checkApplied(errs, sent, c, nil)
	if len(errs) > 0 {
		return nil, errs
	}
	if err := s.commit(&op{Op: "collection", Collection: c}); err != nil {
		return nil, err
	}
	return c, nil
}

// decodeInto decodes body over c, so that keys absent from body keep c's
// values (nested objects merge, arrays are replaced).
func decodeInto(body []byte, c *Collection) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(c); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidJSON, err)
	}
	return nil
}

// UpdateCollection applies a partial definition to c. Every key of the input
// is either applied or refused with a code, never dropped: the id, type,
// system flag and timestamps cannot change; a system collection keeps its
// name and rules; _superusers keeps its invariants (guardSuperusers); the
// built-in fields of an auth collection stay as they are. A token secret
// left out of the input keeps its value; setting a new one ends every token
// of that type in the collection. So does an OAuth2 provider's clientSecret
// (keepClientSecrets). A new authToken secret is a new key for the
// records' TOTP secrets too: they are sealed again under it in the same
// commit (resealTOTPs), so that every authenticator keeps working.
func (s *Store) UpdateCollection(c *Collection, in CollectionInput) (*Collection, error) {
	body, sent, err := in.decode()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.cols[c.ID]
	if sys := systemBase(c.ID, s.systemCreated()); !ok && sys != nil {
		return updateSystemBase(sys, in)
	}
	if !ok {
		return nil, ErrNotFound
	}
	n := cur.clone()
	if err := decodeInto(body, n); err != nil {
		return nil, err
	}
	errs := validation.Errors{}
	guardFixed(errs, sent, cur, n)
	n.ID, n.Type, n.System, n.Created = cur.ID, cur.Type, cur.System, cur.Created
	n.Updated = Time{s.now().UTC()}
	if cur.IsSuperusers() {
		guardSuperusers(errs, sent, n)
	}
	if cur.IsAuth() {
		if _, ok := sent["fields"]; ok {
			var builtin []Field
			for _, f := range cur.Fields {
				if isBuiltin(&f) {
					builtin = append(builtin, f)
				}
			}
			n.Fields = mergeAuthFields(errs, n.Fields, builtin, true)
		}
		n.Indexes = authIndexes(n.ID, n.Name)
		for _, typ := range TokenTypes {
			if !sentSecret(sent, string(typ)+"Token") {
				n.Token(typ).Secret = cur.Token(typ).Secret
			}
		}
		if ruleText(cur.AuthRule) != ruleText(n.AuthRule) && !sentSecret(sent, "authToken") {
			// A changed authRule ends every auth token of the
			// collection (null counts as ""), as in PocketBase.
			if n.AuthToken.Secret, err = s.rnd.String(secretAlphabet, 50); err != nil {
				return nil, err
			}
		}
		if err := keepClientSecrets(n, cur, sent); err != nil {
			return nil, err
		}
	}
	if n.Fields == nil {
		n.Fields = []Field{}
	}
	n.assignFieldIDs()
	s.collectionErrors(errs, n, cur)
	checkApplied(errs, sent, n, cur)
	if len(errs) > 0 {
		return nil, errs
	}
	ops := []*op{{Op: "collection", Collection: n}}
	if cur.IsAuth() && n.AuthToken.Secret != cur.AuthToken.Secret {
		more, err := s.resealTOTPs(cur, n)
		if err != nil {
			return nil, err
		}
		ops = append(ops, more...)
	}
	if err := s.commit(ops...); err != nil {
		return nil, err
	}
	return n, nil
}

// DeleteCollection deletes c and all its records. System collections and the
// users collection's built-in role as sign-up target do not matter here: only
// system collections are protected.
func (s *Store) DeleteCollection(c *Collection) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.cols[c.ID]
	if !ok && systemBase(c.ID, Time{}) != nil {
		return ErrSystemCollection
	}
	if !ok {
		return ErrNotFound
	}
	if cur.System {
		return ErrSystemCollection
	}
	return s.commit(&op{Op: "deleteCollection", ID: c.ID})
}

// collectionErrors adds the validation failures of c (old is its previous
// state, nil on create) to errs, leaving keys that already have one. The
// caller holds s.mu.
func (s *Store) collectionErrors(errs validation.Errors, c, old *Collection) {
	set := func(key string, e error) {
		if _, done := errs[key]; !done {
			errs[key] = e
		}
	}
	switch {
	case c.Name == "":
		set("name", errRequired)
	case len(c.Name) > 255 || !nameRe.MatchString(c.Name):
		set("name", errMatch)
	case old == nil && strings.HasPrefix(c.Name, "_"):
		set("name", validation.New(validation.CodeInvalidName, "Collection names starting with an underscore are reserved."))
	default:
		if other, ok := s.collection(c.Name); (ok && other.ID != c.ID) || systemBase(c.Name, Time{}) != nil {
			set("name", validation.New(validation.CodeCollectionNameExists, "Collection name must be unique (case insensitive)."))
		}
	}
	switch {
	case c.Type == TypeAuth:
	case old == nil && (c.Type == TypeBase || c.Type == typeView):
		set("type", errOnlyAuth)
	case c.Type != TypeBase: // a base collection an older version stored can still be changed
		set("type", validation.InInvalid(map[string]any{"note": "strongbox stores auth collections only"}))
	}
	kinds := []RuleKind{RuleList, RuleView, RuleCreate, RuleUpdate, RuleDelete}
	if c.IsAuth() {
		kinds = append(kinds, RuleAuth, RuleManage)
	}
	known := s.authFieldNames(c.ID) // c's own count as they will be after this save
	for _, k := range kinds {
		if err := checkRule(c, c.rule(k), known); err != nil {
			set(ruleKeys[k], err)
		}
	}
	if ferrs := validateFields(c.Fields); len(ferrs) > 0 {
		set("fields", ferrs)
	}
	if c.IsAuth() {
		if c.ManageRule != nil && *c.ManageRule == "" {
			// PocketBase: a manageRule is null or a filter, never "".
			set("manageRule", validation.NilOrNotEmpty())
		}
		aerrs := validation.Errors{}
		validateAuthOptions(c, aerrs, known)
		for key, e := range aerrs {
			if m, ok := errs[key].(validation.Errors); ok {
				for k, v := range e.(validation.Errors) {
					if _, done := m[k]; !done {
						m[k] = v
					}
				}
				continue
			}
			set(key, e)
		}
	}
}

var errMatch = validation.MatchInvalid()

func validateFields(fields []Field) validation.Errors {
	errs := validation.Errors{}
	seen := map[string]bool{}
	for i, f := range fields {
		key := fmt.Sprint(i)
		switch {
		case f.Name == "" || !nameRe.MatchString(f.Name):
			errs[key] = validation.Errors{"name": errMatch}
		case seen[f.Name]:
			errs[key] = validation.Errors{"name": validation.New(validation.CodeDuplicatedFieldName, "Duplicated or invalid field name.")}
		case !f.System && f.Type != FieldAutodate && f.Type != FieldFile && !slices.Contains(customFieldTypes, f.Type):
			errs[key] = validation.Errors{"type": validation.InInvalid(map[string]any{"supported": strings.Join(customFieldTypes, ", ")})}
		}
		seen[f.Name] = true
	}
	return errs
}

func validateAuthOptions(c *Collection, errs validation.Errors, known authFields) {
	o := c.AuthOptions
	sub := errs.Sub
	if o.PasswordAuth.Enabled {
		if len(o.PasswordAuth.IdentityFields) == 0 {
			sub("passwordAuth")["identityFields"] = errRequired
		}
		for _, name := range o.PasswordAuth.IdentityFields {
			f := c.Field(name)
			if f == nil {
				sub("passwordAuth")["identityFields"] = &validation.Error{Code: validation.CodeMissingField,
					Message: fmt.Sprintf("Invalid or missing field %s.", name), Params: map[string]any{"fieldName": name}}
				break
			}
			if (f.Type != FieldText && f.Type != FieldEmail) || f.Hidden {
				sub("passwordAuth")["identityFields"] = validation.New(validation.CodeInvalidIdentityField, fmt.Sprintf("Identity field %q must be a text or email field of the collection.", name))
				break
			}
		}
	}
	if o.MFA.Enabled {
		n := 0
		for _, on := range []bool{o.PasswordAuth.Enabled, o.OTP.Enabled, o.OAuth2.Enabled, o.Passkey.Enabled} {
			if on {
				n++
			}
		}
		if n < 2 {
			sub("mfa")["enabled"] = validation.New(validation.CodeMFANotEnoughAuths, "MFA requires at least 2 auth methods to be enabled.")
		}
		if e := checkRange(o.MFA.Duration, 10, 86400); e != nil {
			sub("mfa")["duration"] = e
		}
	}
	// The rule is checked whether or not MFA is on, as PocketBase
	// does, against the fields the collection will have after this save:
	// a change of fields that would break the rule is refused with it.
	if e := checkRule(c, &o.MFA.Rule, known); e != nil {
		sub("mfa")["rule"] = e
	}
	validateProviders(&o.OAuth2, errs)
	if o.OTP.Enabled {
		if e := checkRange(o.OTP.Duration, 10, 86400); e != nil {
			sub("otp")["duration"] = e
		}
		if o.OTP.Length < 4 {
			sub("otp")["length"] = validation.MinGreaterEqual(4)
		}
	}
	for _, typ := range TokenTypes {
		t := o.Token(typ)
		key := string(typ) + "Token"
		if !staticAllowed(c, typ, t.Duration) {
			if e := checkRange(t.Duration, MinTokenDuration, MaxTokenDuration); e != nil {
				sub(key)["duration"] = e
			}
		}
		switch n := len(t.Secret); {
		case n == 0:
			sub(key)["secret"] = errRequired
		case n < 30 || n > 255:
			sub(key)["secret"] = validation.LengthOutOfRange(30, 255)
		}
	}
}

// staticAllowed reports whether a token duration of d seconds for type typ
// of c means "tokens without expiry". That is the one exception §5.9 of the
// interface document makes to PocketBase's range: password tokens of the
// users collection are static, so its authToken.duration may be 0. Every
// other duration of every collection is 10..MaxTokenDuration.
func staticAllowed(c *Collection, typ TokenType, d int64) bool {
	return d == 0 && typ == TokenAuth && c.ID == UsersID
}
