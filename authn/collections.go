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
)

// ErrInvalidJSON wraps a collection body that is not the expected JSON.
var ErrInvalidJSON = errors.New("authn: invalid collection JSON")

var nameRe = regexp.MustCompile(`^\w+$`)

// reservedFieldNames are names a custom field may not take.
var reservedFieldNames = []string{"id", "password", "tokenKey", "email", "emailVisibility", "verified", "created", "updated", "collectionId", "collectionName", "expand", "passwordConfirm", "oldPassword"}

// CreateCollection validates a collection definition (PocketBase's JSON
// shape: name, type "auth" or "base", rules, fields, auth options) and
// stores it. Auth collections start from the default options, with fresh
// secrets, and the body's options applied on top.
func (s *Store) CreateCollection(body []byte) (*Collection, error) {
	var head struct {
		Name string `json:"name"`
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
	id, err := s.rnd.String("0123456789", 10)
	if err != nil {
		return nil, err
	}
	if err := decodeInto(body, c); err != nil {
		return nil, err
	}
	c.ID = "pbc_" + id
	c.Type = cmp.Or(head.Type, TypeBase)
	c.Created, c.Updated, c.System = Time{now}, Time{now}, false
	if c.Type != TypeAuth {
		c.AuthOptions = nil
	}
	if c.Fields == nil {
		c.Fields = []Field{}
	}
	if c.IsAuth() {
		c.Fields = withAuthFields(c.Fields)
		c.Indexes = authIndexes(c.ID, c.Name)
	}
	c.assignFieldIDs()

	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.validateCollection(c, nil); err != nil {
		return nil, err
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

// withAuthFields returns the built-in auth fields followed by the custom
// fields of fields, dropping any built-in ones the caller sent back.
func withAuthFields(fields []Field) []Field {
	out := systemAuthFields()
	for _, f := range fields {
		if f.System || slices.Contains(reservedFieldNames, f.Name) {
			continue
		}
		out = append(out, f)
	}
	return append(out, autodateFields()...)
}

// UpdateCollection applies a partial definition to c. The id, type and
// system flag cannot change; the _superusers collection keeps its name and
// its invariants (password auth on, OAuth2 off, OTP only as a second factor).
// A token secret left out of the body keeps its value; setting a new one
// ends every token of that type in the collection.
func (s *Store) UpdateCollection(c *Collection, body []byte) (*Collection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.cols[c.ID]
	if !ok {
		return nil, ErrNotFound
	}
	n := cur.clone()
	if err := decodeInto(body, n); err != nil {
		return nil, err
	}
	if n.Type != cur.Type {
		return nil, CollectionError{"type": &FieldError{Code: "validation_collection_type_change", Message: "The collection type cannot be changed."}}
	}
	n.ID, n.System, n.Created = cur.ID, cur.System, cur.Created
	n.Updated = Time{s.now().UTC()}
	if cur.IsSuperusers() {
		n.Name = cur.Name
		n.OAuth2.Enabled, n.OAuth2.Providers = false, []Provider{}
		n.PasswordAuth.Enabled = true
		if n.OTP.Enabled {
			n.MFA.Enabled = true
		}
	}
	if cur.IsAuth() {
		n.Fields = withAuthFields(n.Fields)
		n.Indexes = authIndexes(n.ID, n.Name)
		for _, typ := range TokenTypes {
			if n.Token(typ).Secret == "" {
				n.Token(typ).Secret = cur.Token(typ).Secret
			}
		}
	}
	n.assignFieldIDs()
	if err := s.validateCollection(n, cur); err != nil {
		return nil, err
	}
	if err := s.commit(&op{Op: "collection", Collection: n}); err != nil {
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
	if !ok {
		return ErrNotFound
	}
	if cur.System {
		return ErrSystemCollection
	}
	return s.commit(&op{Op: "deleteCollection", ID: c.ID})
}

// validateCollection checks c (old is its previous state, nil on create).
// The caller holds s.mu.
func (s *Store) validateCollection(c, old *Collection) error {
	errs := map[string]any{}
	switch {
	case c.Name == "":
		errs["name"] = errRequired
	case len(c.Name) > 255 || !nameRe.MatchString(c.Name):
		errs["name"] = errMatch
	case old == nil && strings.HasPrefix(c.Name, "_"):
		errs["name"] = &FieldError{Code: "validation_invalid_name", Message: "Collection names starting with an underscore are reserved."}
	default:
		if other, ok := s.collection(c.Name); ok && other.ID != c.ID {
			errs["name"] = &FieldError{Code: "validation_collection_name_exists", Message: "Collection name must be unique (case insensitive)."}
		}
	}
	if c.Type != TypeAuth && c.Type != TypeBase {
		errs["type"] = &FieldError{Code: "validation_in_invalid", Message: "Must be a valid value.", Params: map[string]any{"note": "strongbox stores auth and base collections"}}
	}
	for key, r := range map[string]*string{"listRule": c.ListRule, "viewRule": c.ViewRule, "createRule": c.CreateRule, "updateRule": c.UpdateRule, "deleteRule": c.DeleteRule} {
		if err := checkRule(r); err != nil {
			errs[key] = err
		}
	}
	if ferrs := validateFields(c.Fields); len(ferrs) > 0 {
		errs["fields"] = ferrs
	}
	if c.IsAuth() {
		if c.AuthRule != nil && *c.AuthRule != "" {
			errs["authRule"] = unsupportedRule
		}
		if c.ManageRule != nil {
			errs["manageRule"] = unsupportedRule
		}
		validateAuthOptions(c, errs)
	}
	if len(errs) > 0 {
		return CollectionError(errs)
	}
	return nil
}

// CollectionError holds the validation failures of a collection, keyed by
// field; values are *FieldError or nested maps of them.
type CollectionError map[string]any

func (e CollectionError) Error() string { return "authn: invalid collection" }

var (
	errMatch        = &FieldError{Code: "validation_match_invalid", Message: "Must be in a valid format."}
	unsupportedRule = &FieldError{Code: "validation_unsupported_rule", Message: `This server evaluates only null (superusers), "" (anyone) and "` + OwnerRule + `" rules.`}
)

func checkRule(r *string) *FieldError {
	if r == nil || *r == "" || *r == OwnerRule {
		return nil
	}
	return unsupportedRule
}

func validateFields(fields []Field) map[string]any {
	errs := map[string]any{}
	seen := map[string]bool{}
	for i, f := range fields {
		key := fmt.Sprint(i)
		switch {
		case f.Name == "" || !nameRe.MatchString(f.Name):
			errs[key] = map[string]any{"name": errMatch}
		case seen[f.Name]:
			errs[key] = map[string]any{"name": &FieldError{Code: "validation_duplicated_field_name", Message: "Duplicated or invalid field name."}}
		case !f.System && f.Type != FieldAutodate && f.Type != FieldFile && !slices.Contains(customFieldTypes, f.Type):
			errs[key] = map[string]any{"type": &FieldError{Code: "validation_in_invalid", Message: "Must be a valid value.", Params: map[string]any{"supported": strings.Join(customFieldTypes, ", ")}}}
		}
		seen[f.Name] = true
	}
	return errs
}

func validateAuthOptions(c *Collection, errs map[string]any) {
	o := c.AuthOptions
	sub := func(key string) map[string]any {
		m, _ := errs[key].(map[string]any)
		if m == nil {
			m = map[string]any{}
			errs[key] = m
		}
		return m
	}
	if o.PasswordAuth.Enabled {
		if len(o.PasswordAuth.IdentityFields) == 0 {
			sub("passwordAuth")["identityFields"] = errRequired
		}
		for _, name := range o.PasswordAuth.IdentityFields {
			f := c.Field(name)
			if f == nil || (f.Type != FieldText && f.Type != FieldEmail) || f.Hidden {
				sub("passwordAuth")["identityFields"] = &FieldError{Code: "validation_invalid_identity_field", Message: fmt.Sprintf("Identity field %q must be a text or email field of the collection.", name)}
				break
			}
		}
	}
	if o.MFA.Enabled {
		n := 0
		for _, on := range []bool{o.PasswordAuth.Enabled, o.OTP.Enabled, o.OAuth2.Enabled} {
			if on {
				n++
			}
		}
		if n < 2 {
			sub("mfa")["enabled"] = &FieldError{Code: "validation_mfa_not_enough_auths", Message: "MFA requires at least 2 auth methods to be enabled."}
		}
		if o.MFA.Duration < 10 || o.MFA.Duration > 86400 {
			sub("mfa")["duration"] = rangeError(10, 86400)
		}
		if o.MFA.Rule != "" {
			sub("mfa")["rule"] = unsupportedRule
		}
	}
	if o.OTP.Enabled {
		if o.OTP.Duration < 10 || o.OTP.Duration > 86400 {
			sub("otp")["duration"] = rangeError(10, 86400)
		}
		if o.OTP.Length < 4 {
			sub("otp")["length"] = &FieldError{Code: "validation_min_greater_equal_than_required", Message: "Must be no less than 4.", Params: map[string]any{"threshold": 4}}
		}
	}
	if c.IsSuperusers() && (o.OTP.Enabled || o.MFA.Enabled) {
		// OTP and MFA sign-in have no endpoints yet: turning them on for
		// _superusers would lock every superuser out.
		sub("otp")["enabled"] = &FieldError{Code: "validation_not_supported", Message: "OTP and MFA for _superusers need the OTP endpoints, which this server does not serve yet."}
	}
	if c.IsSuperusers() && o.OAuth2.Enabled {
		sub("oauth2")["enabled"] = &FieldError{Code: "validation_superusers_oauth2", Message: "OAuth2 is not supported for the _superusers collection."}
	}
	for _, typ := range TokenTypes {
		t := o.Token(typ)
		key := string(typ) + "Token"
		noExpiry := t.Duration == 0 && typ == TokenAuth // auth tokens without expiry (§5.9)
		if !noExpiry && (t.Duration < MinTokenDuration || t.Duration > MaxTokenDuration) {
			sub(key)["duration"] = rangeError(MinTokenDuration, MaxTokenDuration)
		}
		if n := len(t.Secret); n < 30 || n > 255 {
			sub(key)["secret"] = &FieldError{Code: "validation_length_out_of_range", Message: "The length must be between 30 and 255.", Params: map[string]any{"min": 30, "max": 255}}
		}
	}
}

func rangeError(lo, hi int) *FieldError {
	return &FieldError{Code: "validation_out_of_range", Message: fmt.Sprintf("Must be between %d and %d.", lo, hi), Params: map[string]any{"min": lo, "max": hi}}
}
