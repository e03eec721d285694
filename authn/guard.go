package authn

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"strongbox/authn/validation"
)

// A change strongbox cannot apply is refused with a code, never answered
// with 200 and dropped (issue 8 §1). The interface document lists no codes
// for collections or records (§7: "not shown"), so these follow PocketBase
// v0.31.0 wherever it refuses the same change (core/collection_validate.go,
// core/field_text.go, core/validators/equal.go), and are strongbox's own
// where PocketBase would store or silently normalise a value strongbox
// cannot keep. The codes are package validation's.
var (
	// PocketBase's.
	errSystemRuleChange  = validation.New(validation.CodeCollectionSystemRule, "System collection API rule cannot be changed.")
	errSystemNameChange  = validation.New(validation.CodeCollectionSystemName, "System collection name cannot be changed.")
	errSystemFlagChange  = validation.New(validation.CodeCollectionSystemFlag, "System collection state cannot be changed.")
	errTypeChange        = validation.New(validation.CodeCollectionTypeChange, "Collection type cannot be changed.")
	errSystemFieldChange = validation.New(validation.CodeSystemFieldChange, "System fields cannot be deleted or renamed.")
	errReservedFieldName = validation.New(validation.CodeReservedFieldName, "The field name is reserved and cannot be used.")
	errPKChange          = validation.New(validation.CodePKChange, "The record primary key cannot be changed.")

	// strongbox's own.
	errReadOnly           = validation.New(validation.CodeReadOnly, "The field is read-only.")
	errUnknownField       = validation.New(validation.CodeUnknownField, "Unknown field.")
	errNotStored          = validation.New(validation.CodeUnsupportedValue, "This server cannot store the value as sent.")
	errBuiltinField       = validation.New(validation.CodeBuiltinFieldChange, "The built-in fields of auth collections cannot be changed or deleted on this server.")
	errSuperusersOAuth2   = validation.New(validation.CodeSuperusersOAuth2, "OAuth2 is not supported for the _superusers collection.")
	errSuperusersPassword = validation.New(validation.CodeSuperusersPasswordAuth, "Password authentication cannot be disabled for the _superusers collection.")
	errSuperusersVerified = validation.New(validation.CodeSuperusersVerified, "Superusers are always verified.")
	errSuperusersOTPMFA   = validation.New(validation.CodeSuperusersOTPMFA, "OTP is only a second factor for the _superusers collection: MFA stays enabled while OTP is.")
	errOnlyAuth           = validation.New(validation.CodeUnsupportedValue, "This server stores auth collections and their records only: base and view collections cannot be created.")
)

// checkRange validates a number of seconds as PocketBase's TokenConfig,
// MFA and OTP options do (core/collection_model_auth_options.go): required
// (0 is blank), then a minimum, then a maximum.
func checkRange(v, lo, hi int64) *validation.Error {
	switch {
	case v == 0:
		return errRequired
	case v < lo:
		return validation.MinGreaterEqual(lo)
	case v > hi:
		return validation.MaxLessEqual(hi)
	}
	return nil
}

// sameRule reports whether two API rules are the same (null differs from "").
func sameRule(a, b *string) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// guardFixed refuses changes to what no update may change (id, type, system
// flag, timestamps) and, on a system collection, to its name and rules.
// sent is the input as generic JSON.
func guardFixed(errs validation.Errors, sent map[string]any, cur, n *Collection) {
	if v, ok := sent["id"]; ok && v != cur.ID {
		errs["id"] = errMismatch // PocketBase: validators.Equal(original.Id)
	}
	if n.Type != cur.Type {
		errs["type"] = errTypeChange
	}
	if n.System != cur.System {
		errs["system"] = errSystemFlagChange
	}
	for key, t := range map[string]Time{"created": cur.Created, "updated": cur.Updated} {
		if v, ok := sent[key]; ok && v != t.String() {
			errs[key] = errReadOnly
		}
	}
	if !cur.System {
		return
	}
	if n.Name != cur.Name {
		errs["name"] = errSystemNameChange
	}
	rules := map[string][2]*string{
		"listRule": {cur.ListRule, n.ListRule}, "viewRule": {cur.ViewRule, n.ViewRule},
		"createRule": {cur.CreateRule, n.CreateRule}, "updateRule": {cur.UpdateRule, n.UpdateRule},
		"deleteRule": {cur.DeleteRule, n.DeleteRule},
	}
	if cur.IsAuth() {
		// PocketBase freezes the five API rules of a system collection;
		// strongbox also freezes authRule and manageRule, since on
		// _superusers they decide who may obtain a superuser token.
		rules["authRule"] = [2]*string{cur.AuthRule, n.AuthRule}
		rules["manageRule"] = [2]*string{cur.ManageRule, n.ManageRule}
	}
	for key, r := range rules {
		if !sameRule(r[0], r[1]) {
			errs[key] = errSystemRuleChange
		}
	}
}

// guardSuperusers holds the _superusers invariants of PocketBase:
// OAuth2 off, password sign-in on, OTP only as a
// second factor. PocketBase forces the first two silently on save; strongbox
// refuses them instead, so that no sent value is dropped. Enabling OTP turns
// MFA on, as PocketBase does, unless the same change turns MFA off, which
// is refused: an emailed code alone never signs a superuser in. sent is the
// input as generic JSON.
func guardSuperusers(errs validation.Errors, sent map[string]any, n *Collection) {
	if n.OAuth2.Enabled {
		errs.Sub("oauth2")["enabled"] = errSuperusersOAuth2
	}
	if len(n.OAuth2.Providers) > 0 {
		errs.Sub("oauth2")["providers"] = errSuperusersOAuth2
	}
	if !n.PasswordAuth.Enabled {
		errs.Sub("passwordAuth")["enabled"] = errSuperusersPassword
	}
	if n.OTP.Enabled && !n.MFA.Enabled {
		if m, _ := sent["mfa"].(map[string]any); m["enabled"] == false {
			errs.Sub("mfa")["enabled"] = errSuperusersOTPMFA
		}
		n.MFA.Enabled = true
	}
}

// isBuiltin reports whether f is one of the fields strongbox defines for
// every auth collection: the system fields and the created/updated dates.
func isBuiltin(f *Field) bool {
	return f.System || (f.Type == FieldAutodate && (f.Name == "created" || f.Name == "updated"))
}

// mergeAuthFields checks the fields list sent for an auth collection
// against its built-in fields (builtin, with ids) and returns the list to
// store. A built-in field may be sent back, but only unchanged; on update
// (PocketBase's rule for system fields) none may be left out, on create the
// ones left out are added. Other fields may not take a reserved name.
func mergeAuthFields(errs validation.Errors, sent, builtin []Field, update bool) []Field {
	seen := make([]bool, len(builtin))
	out := make([]Field, 0, len(sent)+len(builtin))
	ferrs := validation.Errors{}
	for i, f := range sent {
		j := slices.IndexFunc(builtin, func(b Field) bool {
			if f.ID != "" {
				return b.ID == f.ID
			}
			return b.Name == f.Name
		})
		switch {
		case j >= 0:
			if f.ID == "" {
				f.ID = builtin[j].ID
			}
			if !sameField(f, builtin[j]) {
				ferrs[strconv.Itoa(i)] = errBuiltinField
			}
			seen[j] = true
			out = append(out, builtin[j])
		case slices.Contains(reservedFieldNames, f.Name):
			ferrs[strconv.Itoa(i)] = validation.Errors{"name": errReservedFieldName}
		case f.System || f.PrimaryKey:
			// Only the built-in fields are system fields, and id is the
			// one primary key.
			key := "system"
			if f.PrimaryKey {
				key = "primaryKey"
			}
			ferrs[strconv.Itoa(i)] = validation.Errors{key: errReadOnly}
		default:
			out = append(out, f)
		}
	}
	if update {
		for j, b := range builtin {
			if seen[j] {
				continue
			}
			if b.System {
				errs["fields"] = errSystemFieldChange
			} else {
				errs["fields"] = errBuiltinField
			}
			return out
		}
	} else {
		var head, tail []Field
		for j, b := range builtin {
			if seen[j] {
				continue
			}
			if b.System {
				head = append(head, b)
			} else {
				tail = append(tail, b)
			}
		}
		out = append(append(head, out...), tail...)
	}
	if len(ferrs) > 0 {
		errs["fields"] = ferrs
	}
	return out
}

func sameField(a, b Field) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// checkApplied compares what the client sent with what the collection
// reports after the change (and, on update, before it): every key sent must
// be reported with the value sent, in either state. A key the collection
// does not have is unknown; a value it reports differently was not stored
// as sent. Secrets are never reported and are checked where they are
// applied. Top-level keys that already have an error are skipped.
func checkApplied(errs validation.Errors, sent map[string]any, after, before *Collection) {
	now := generic(after.Public())
	var was map[string]any
	if before != nil {
		was = generic(before.Public())
	}
	for key, v := range sent {
		if _, done := errs[key]; done {
			continue
		}
		var e error
		switch list, isList := v.([]any); {
		case key == "fields" && isList:
			e = fieldsApplied(list, now[key], was[key])
		case !hasKey(now, key):
			e = errUnknownField
		default:
			e = appliedErr(key, v, now[key], was[key])
		}
		if e != nil {
			errs[key] = e
		}
	}
}

func hasKey(m map[string]any, k string) bool {
	_, ok := m[k]
	return ok
}

// fieldsApplied is appliedErr for a fields list, whose elements are matched
// by id, or by name when the element sent has no id: creating an auth
// collection adds the built-in fields around the ones sent.
func fieldsApplied(sent []any, after, before any) error {
	find := func(list any, el map[string]any) any {
		l, _ := list.([]any)
		for _, x := range l {
			m, _ := x.(map[string]any)
			if id, ok := el["id"]; ok && id != "" {
				if m["id"] == id {
					return m
				}
			} else if m["name"] == el["name"] {
				return m
			}
		}
		return nil
	}
	errs := validation.Errors{}
	for i, v := range sent {
		el, ok := v.(map[string]any)
		if !ok {
			errs[strconv.Itoa(i)] = errNotStored
			continue
		}
		got := find(after, el)
		if got == nil {
			errs[strconv.Itoa(i)] = errNotStored
		} else if e := appliedErr("fields", el, got, find(before, el)); e != nil {
			errs[strconv.Itoa(i)] = e
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// appliedErr returns nil when sent matches after or before (the values of
// key after and before the change), else the error to report for it: a
// nested map for objects and for lists of the same length.
func appliedErr(key string, sent, after, before any) error {
	if matches(sent, after, key) || (before != nil && matches(sent, before, key)) {
		return nil
	}
	errs := validation.Errors{}
	switch s := sent.(type) {
	case map[string]any:
		a, ok := after.(map[string]any)
		if !ok {
			return errNotStored
		}
		b, _ := before.(map[string]any)
		for k, v := range s {
			if secretKey(key, k) {
				continue
			}
			if _, has := a[k]; !has {
				errs[k] = errUnknownField
			} else if e := appliedErr(k, v, a[k], b[k]); e != nil {
				errs[k] = e
			}
		}
	case []any:
		a, ok := after.([]any)
		if !ok || len(a) != len(s) {
			return errNotStored
		}
		b, _ := before.([]any)
		for i, v := range s {
			var bi any
			if i < len(b) {
				bi = b[i]
			}
			if e := appliedErr(key, v, a[i], bi); e != nil {
				errs[strconv.Itoa(i)] = e
			}
		}
	default:
		return errNotStored
	}
	if len(errs) == 0 {
		return errNotStored // each part matches one state, the whole neither
	}
	return errs
}

// matches reports whether every key of sent is reported in got with the
// same value (lists element by element, same length). parent is the key
// sent is the value of, for recognising secrets.
func matches(sent, got any, parent string) bool {
	switch s := sent.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range s {
			if secretKey(parent, k) {
				continue
			}
			gv, has := g[k]
			if !has || !matches(v, gv, k) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(s) {
			return false
		}
		for i := range s {
			if !matches(s[i], g[i], parent) {
				return false
			}
		}
		return true
	}
	return sent == got
}

// secretKey reports whether key k of the object under parent holds a
// secret, which collections never report: a token's secret, a provider's
// clientSecret.
func secretKey(parent, k string) bool {
	switch k {
	case "secret":
		return slices.Contains(tokenKeys(), parent)
	case "clientSecret":
		return parent == "providers"
	}
	return false
}

func tokenKeys() []string {
	out := make([]string, len(TokenTypes))
	for i, typ := range TokenTypes {
		out[i] = string(typ) + "Token"
	}
	return out
}

// generic returns v as decoded JSON (maps, slices, float64, string, bool,
// nil).
func generic(v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("authn: marshal: %v", err)) // collections always marshal
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		panic(fmt.Sprintf("authn: unmarshal: %v", err))
	}
	return m
}

// sentSecret reports whether sent (the input as generic JSON) sets the
// secret of the token config key.
func sentSecret(sent map[string]any, key string) bool {
	m, _ := sent[key].(map[string]any)
	_, ok := m["secret"]
	return ok
}
