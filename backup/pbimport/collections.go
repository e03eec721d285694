package pbimport

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"strongbox/authn"
	"strongbox/authn/validation"
	"strongbox/backup/pocketbase"
)

// builtinFields are the fields of every auth collection that strongbox
// defines itself: an import leaves PocketBase's out of the collection it
// creates, strongbox adds its own, and the records carry their values.
var builtinFields = []string{"id", "password", "tokenKey", "email", "emailVisibility", "verified", "created", "updated"}

// authOptionKeys are the keys of an auth collection's options that
// strongbox keeps.
var authOptionKeys = []string{"authRule", "manageRule", "authAlert", "oauth2", "passwordAuth", "mfa", "otp",
	"authToken", "passwordResetToken", "emailChangeToken", "verificationToken", "fileToken",
	"verificationTemplate", "resetPasswordTemplate", "confirmEmailChangeTemplate"}

// transientTables are PocketBase's tables of short-lived sign-in state,
// which an import counts and skips.
var transientTables = []struct{ name, reason string }{
	{"_mfas", "MFA sessions are transient (they last minutes)"},
	{"_otps", "one-time passwords are transient (they last minutes)"},
}

// collections imports the auth collections (the step "collections"):
// strongbox's default users collection goes first, so that PocketBase's
// collections, users included, come in as they were there.
func (im *importer) collections() error {
	cols, err := im.src.Collections()
	if err != nil {
		return fmt.Errorf("read the collections: %w", err)
	}
	auth := im.st.Auth
	if users, ok := auth.Collection(authn.UsersID); ok {
		if err := auth.DeleteCollection(users); err != nil {
			return err
		}
	}
	var authCols []pocketbase.Collection
	var inputs []authn.CollectionInput
	for _, c := range cols {
		switch {
		case c.System && c.Type != "auth":
			// _externalAuths, _authOrigins, _mfas, _otps: the later steps
			// read them.
		case c.Type == "base":
			im.skip("collection", q(c.Name)+" (base)", "strongbox stores no base records")
		case c.Type == "view":
			im.skip("collection", q(c.Name)+" (view)", "strongbox stores no view collections")
		case c.Type != "auth":
			im.skip("collection", q(c.Name)+" ("+q(c.Type)+")", "unknown collection type")
		default:
			in, err := im.collectionInput(c)
			if err != nil {
				return err
			}
			authCols, inputs = append(authCols, c), append(inputs, in)
		}
	}
	// A rule may name @request.auth.F of a field only a later collection
	// has, and a rule naming a field no auth collection has is refused at
	// save: so every collection is first stored without its rules, and
	// each is then stored again whole, in place of that stand-in, with
	// every other collection's fields known.
	standIns := make([]*authn.Collection, len(authCols))
	for i, c := range authCols {
		if !isSuperusers(c) {
			standIns[i], _ = im.st.Auth.ImportCollection(withoutRules(inputs[i]), authn.Time{}, authn.Time{})
		}
	}
	for i, c := range authCols {
		if standIns[i] != nil {
			if err := im.st.Auth.DeleteCollection(standIns[i]); err != nil {
				return fmt.Errorf("import the collection %s: %w", q(c.Name), err)
			}
		}
		if err := im.collection(c, inputs[i]); err != nil {
			return err
		}
	}
	return nil
}

// isSuperusers reports whether c is PocketBase's _superusers, which an
// import updates instead of creating.
func isSuperusers(c pocketbase.Collection) bool {
	return c.ID == authn.SuperusersID || c.Name == authn.SuperusersName
}

// withoutRules is a copy of in with every rule null and mfa.rule "".
func withoutRules(in authn.CollectionInput) authn.CollectionInput {
	v := maps.Clone(in.Values)
	for _, key := range ruleOptions {
		if _, ok := v[key]; ok {
			v[key] = nil
		}
	}
	if mfa, ok := v["mfa"].(map[string]any); ok {
		mfa = maps.Clone(mfa)
		mfa["rule"] = ""
		v["mfa"] = mfa
	}
	return authn.CollectionInput{Values: v}
}

// collection imports one auth collection from its input in, with the
// rules strongbox cannot compile set to null (mfa.rule to "": MFA for
// every record) until it is accepted, or skipped with the reason it is
// refused.
func (im *importer) collection(c pocketbase.Collection, in authn.CollectionInput) error {
	for range 3 {
		col, err := im.st.Auth.ImportCollection(in, authn.Time{Time: c.Created.UTC()}, authn.Time{Time: c.Updated.UTC()})
		verrs, invalid := errors.AsType[validation.Errors](err)
		switch {
		case err == nil:
			im.imported[c.ID] = &importedCollection{src: c, col: col, report: im.report.addCollection(c.Name)}
			im.order = append(im.order, c.ID)
			return nil
		case errors.Is(err, authn.ErrInvalidJSON):
			im.skip("collection", q(c.Name), err.Error())
			return nil
		case !invalid:
			return fmt.Errorf("import the collection %s: %w", q(c.Name), err)
		case !im.dropRules(c.Name, in.Values, verrs):
			im.skip("collection", q(c.Name), "refused: "+verrs.Error())
			return nil
		}
	}
	im.skip("collection", q(c.Name), "refused: its rules do not compile")
	return nil
}

// ruleOptions are the rule keys of a collection input.
var ruleOptions = []string{"listRule", "viewRule", "createRule", "updateRule", "deleteRule", "authRule", "manageRule"}

// dropRules sets the rules of values that verrs refuses to null (mfa.rule
// to ""), reporting each, and reports whether it changed any.
func (im *importer) dropRules(name string, values map[string]any, verrs validation.Errors) bool {
	changed := false
	for _, key := range ruleOptions {
		e, ok := verrs[key].(*validation.Error)
		if !ok || values[key] == nil {
			continue
		}
		im.skip("rule", q(name)+"."+key, fmt.Sprintf("%q: %s; stored as null (superusers only)", values[key], e.Message))
		values[key] = nil
		changed = true
	}
	if sub, ok := verrs["mfa"].(validation.Errors); ok {
		if e, ok := sub["rule"].(*validation.Error); ok {
			mfa, _ := values["mfa"].(map[string]any)
			im.skip("rule", q(name)+".mfa.rule", fmt.Sprintf("%q: %s; stored as \"\" (MFA for every record)", mfa["rule"], e.Message))
			mfa = maps.Clone(mfa)
			mfa["rule"] = ""
			values["mfa"] = mfa
			changed = true
		}
	}
	return changed
}

// collectionInput returns the collection API input of the PocketBase auth
// collection c: its id, name, rules and options, and the fields of the
// types strongbox stores (the others, its indexes, providers without a
// preset and options strongbox does not keep are reported as skipped).
// _superusers gets its options only: its rules and fields are strongbox's.
func (im *importer) collectionInput(c pocketbase.Collection) (authn.CollectionInput, error) {
	v := map[string]any{"id": c.ID, "name": c.Name, "type": "auth"}
	superusers := isSuperusers(c)
	for _, key := range slices.Sorted(maps.Keys(c.Options)) {
		switch {
		case superusers && (key == "authRule" || key == "manageRule"):
		case slices.Contains(authOptionKeys, key):
			v[key] = c.Options[key]
		default:
			im.skip("option", q(c.Name)+"."+q(key), "strongbox does not keep it")
		}
	}
	if o, ok := v["oauth2"].(map[string]any); ok {
		v["oauth2"] = im.providers(c.Name, o)
	}
	fields, dropped, err := im.fields(c, superusers)
	if err != nil {
		return authn.CollectionInput{}, err
	}
	im.indexes(c, dropped)
	if superusers {
		return authn.CollectionInput{Values: v}, nil
	}
	v["fields"] = fields
	rules := map[string]*string{"listRule": c.ListRule, "viewRule": c.ViewRule, "createRule": c.CreateRule, "updateRule": c.UpdateRule, "deleteRule": c.DeleteRule}
	for key, r := range rules {
		if r == nil {
			v[key] = nil
		} else {
			v[key] = *r
		}
	}
	return authn.CollectionInput{Values: v}, nil
}

// providers returns the oauth2 options o without the providers strongbox
// has no preset for, reporting those.
func (im *importer) providers(name string, o map[string]any) map[string]any {
	list, _ := o["providers"].([]any)
	kept := []any{}
	for _, p := range list {
		pm, _ := p.(map[string]any)
		pname, _ := pm["name"].(string)
		if !authn.KnownProvider(pname) {
			im.skip("provider", q(name)+"."+q(pname), "strongbox has no preset for this OAuth2 provider")
			continue
		}
		kept = append(kept, p)
	}
	o = maps.Clone(o)
	o["providers"] = kept
	return o
}

// fields returns the fields of c strongbox stores, in the shape it
// reports them (so that the collection save finds each applied), and the
// names of the fields it skipped (reported with the reason). superusers:
// every field but the built-in ones is skipped.
func (im *importer) fields(c pocketbase.Collection, superusers bool) ([]any, []string, error) {
	out := []any{}
	var dropped []string
	for _, f := range c.Fields {
		name, _ := f["name"].(string)
		typ, _ := f["type"].(string)
		system, _ := f["system"].(bool)
		label := fmt.Sprintf("%s.%s (%s)", q(c.Name), q(name), q(typ))
		switch {
		case slices.Contains(builtinFields, name) && (system || typ == "autodate"):
			continue
		case typ == "file":
			im.skip("field", label, "no file storage (strongbox stores no files)")
		case superusers:
			im.skip("field", label, "strongbox's _superusers has its built-in fields only")
		case !slices.Contains([]string{authn.FieldText, authn.FieldNumber, authn.FieldBool, authn.FieldEmail, authn.FieldURL}, typ):
			im.skip("field", label, fmt.Sprintf("strongbox does not store %s fields", q(typ)))
		default:
			g, err := im.storedField(c.Name, name, f)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, g)
			continue
		}
		dropped = append(dropped, name)
	}
	return out, dropped, nil
}

// storedField returns the PocketBase field f as strongbox stores it,
// reporting the options it does not keep.
func (im *importer) storedField(col, name string, f map[string]any) (map[string]any, error) {
	b, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	var field authn.Field
	if err := json.Unmarshal(b, &field); err != nil {
		return nil, fmt.Errorf("field %s.%s: %w", q(col), q(name), err)
	}
	g, err := genericJSON(field)
	if err != nil {
		return nil, err
	}
	for _, key := range lostKeys(f, g) {
		im.skip("option", q(col)+"."+q(name)+"."+quotePath(key), "strongbox does not keep this field option")
	}
	return g, nil
}

// indexes reports the indexes of c that strongbox does not keep: it has
// the unique indexes of email and tokenKey only, and the identity fields
// are unique.
func (im *importer) indexes(c pocketbase.Collection, dropped []string) {
	for _, idx := range c.Indexes {
		if isDefaultAuthIndex(idx) {
			continue
		}
		reason := "strongbox keeps the email and tokenKey indexes only (identity fields stay unique)"
		for _, f := range dropped {
			if strings.Contains(idx, "`"+f+"`") {
				reason = "names the skipped field " + q(f)
				break
			}
		}
		im.skip("index", q(c.Name)+": "+strconv.Quote(idx), reason)
	}
}

// isDefaultAuthIndex reports whether idx is one of the two unique indexes
// every auth collection has (tokenKey, email).
func isDefaultAuthIndex(idx string) bool {
	return strings.HasPrefix(idx, "CREATE UNIQUE INDEX `idx_tokenKey_") || strings.HasPrefix(idx, "CREATE UNIQUE INDEX `idx_email_")
}

// genericJSON returns v, which marshals to a JSON object, as decoded
// JSON.
func genericJSON(v any) (map[string]any, error) {
	g, err := genericValue(v)
	m, _ := g.(map[string]any)
	return m, err
}

// lostKeys returns, sorted, the keys of orig whose value is set (not
// null, "", false, 0 or empty) and differs in got, what a conversion did
// not keep; within objects, the dotted paths of the keys that differ.
func lostKeys(orig, got map[string]any) []string {
	var lost []string
	for k, v := range orig {
		if isZeroJSON(v) {
			continue
		}
		ov, _ := genericValue(v)
		om, isMap := ov.(map[string]any)
		gm, gotMap := got[k].(map[string]any)
		if isMap && gotMap {
			for _, sub := range lostKeys(om, gm) {
				lost = append(lost, k+"."+sub)
			}
			continue
		}
		if !reflect.DeepEqual(ov, got[k]) {
			lost = append(lost, k)
		}
	}
	slices.Sort(lost)
	return lost
}

// genericValue returns v as decoded JSON.
func genericValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var g any
	return g, json.Unmarshal(b, &g)
}

// isZeroJSON reports whether v is a JSON zero value: null, "", false, 0,
// [] or {}.
func isZeroJSON(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case float64:
		return x == 0
	case json.Number:
		return x == "0"
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}
