package conformance

import (
	"context"
	"fmt"
	"net/http"
	"slices"
)

// Hidden fields (issue 29). PocketBase v0.31.0 drops the values of hidden
// fields from a non-superuser's record create or update, OAuth2's
// createData included, without an error (recordDataFromRequest), and
// hands its rules that body, so @request.body.<hidden> is unset for
// them; superusers set hidden fields, and every record answer shows
// them to superusers, so that fields selects them.

const sectionHidden = "§1 (records: contract not shown); issue 29; PocketBase v0.31.0 (a field marked hidden is " +
	"set by and shown to superusers only: "

// hiddenField is the hidden text field of the collections these checks
// create.
const hiddenField = "role"

// hiddenReq builds a requirement of the hidden fields: its section names
// what PocketBase does.
func hiddenReq(id, what, name, text string, run func(context.Context, *Client) error) *Requirement {
	return &Requirement{ID: id, Source: SourcePocketBase, Section: sectionHidden + what + ")", Name: name, Text: text, Run: run}
}

var hiddenRequirements = []*Requirement{
	hiddenReq("HIDDEN-001", "a non-superuser's value of a hidden field is dropped, not refused",
		"a non-superuser cannot set a hidden field",
		"On an auth collection with a hidden text field role, createRule \"\" and updateRule "+quote(hiddenOwnerRule)+", "+
			"a guest's sign-up with role \"admin\" answers 200 with a record that has no role key, and so does the new "+
			"record's own PATCH of role \"admin\"; after each, a superuser's GET of the record answers 200 with role \"\".",
		withHiddenCollection("", hiddenOwnerRule, checkHiddenDropped)),
	hiddenReq("HIDDEN-002", "superusers set hidden fields and see them in every record answer",
		"superusers set, see and select a hidden field",
		"On an auth collection with a hidden text field role and viewRule "+quote(hiddenOwnerRule)+", a superuser's "+
			"create with role \"admin\" answers 200 with role \"admin\", its PATCH of role \"boss\" 200 with role \"boss\"; "+
			"its GET of the record with ?fields=id,role answers 200 with exactly {id, role \"boss\"} and its list shows "+
			"role \"boss\"; the record's own GET answers 200 without a role key, and with ?fields=id,role exactly {id}.",
		withHiddenCollection("", hiddenOwnerRule, checkHiddenSuperuser)),
	hiddenReq("HIDDEN-003", "the rules read the body without a non-superuser's hidden fields",
		"rules read the body without hidden fields",
		"On an auth collection with a hidden text field role, createRule "+quote(hiddenUnsetRule)+" and "+
			"updateRule "+quote(hiddenOwnerUnsetRule)+", a guest's sign-up with role "+
			"\"admin\" answers 200, and so does the new record's own PATCH of role \"admin\" (never 400 \""+msgCreateFailed+
			"\" or 404 \""+msgNotFound+"\": the dropped value is not in @request.body).",
		withHiddenCollection(hiddenUnsetRule, hiddenOwnerUnsetRule, checkHiddenRuleBody)),
	hiddenReq("HIDDEN-004", "OAuth2's createData is a non-superuser's record body",
		"OAuth2 createData cannot set a hidden field",
		"With the suite's OAuth2 provider on users and a hidden text field cf_role_<random> added to users, a guest's "+
			"auth-with-oauth2 for a new identity with createData {cf_role_<random>: \"admin\"} answers 200 with a "+
			"record that has no such key, and a superuser's GET of the record answers 200 with that field \"\".",
		withOAuth2(checkHiddenOAuth2CreateData)),
}

// The rules of the collections of the hidden-field checks.
const (
	hiddenOwnerRule      = `id = @request.auth.id`
	hiddenUnsetRule      = `@request.body.role:isset = false`
	hiddenOwnerUnsetRule = hiddenOwnerRule + ` && ` + hiddenUnsetRule
)

// withHiddenCollection is the Run of a hidden-field check: an auth
// collection of its own with the hidden text field role, viewRule
// hiddenOwnerRule and the given createRule and updateRule.
func withHiddenCollection(createRule, updateRule string, f func(ctx context.Context, c *Client, fx *ruleFixture) error) func(context.Context, *Client) error {
	opts := map[string]any{"fields": []any{map[string]any{"name": hiddenField, "type": "text", "hidden": true}},
		"createRule": createRule, "viewRule": hiddenOwnerRule, "updateRule": updateRule}
	return withRuleCollection(opts, nil, f)
}

// hiddenSignUp signs up a new record of fx's collection as a guest with
// role "admin" and requires 200 without a role key. It returns the record
// with its password.
func hiddenSignUp(ctx context.Context, c *Client, fx *ruleFixture) (*user, error) {
	u := &user{email: newEmail(), password: "Cf-" + newNonce(16)}
	body := signUpBody(u.email, u.password)
	body[hiddenField] = "admin"
	r, err := c.post(ctx, fx.recordsPath(), "", body)
	if err != nil {
		return nil, err
	}
	c.cleanupRecordCreated(fx, r)
	m, err := okObject(r)
	if err != nil {
		return nil, fmt.Errorf("guest sign-up with %s \"admin\": %w", hiddenField, err)
	}
	if _, shown := m[hiddenField]; shown {
		return nil, Mismatch("the guest's sign-up answered without a "+hiddenField+" key", r.String())
	}
	u.id, _ = getString(m, "id")
	return u, nil
}

// expectStoredHidden requires a superuser's GET of path to show field
// with the value want.
func (c *Client) expectStoredHidden(ctx context.Context, path, field, want, after string) error {
	r, m, err := c.getOK(ctx, path, c.su)
	if err != nil {
		return err
	}
	if got, ok := m[field]; !ok || got != want {
		return Mismatch(fmt.Sprintf("a superuser's GET showing %s %q %s", field, want, after), r.String())
	}
	return nil
}

// ownHiddenPatch PATCHes role "admin" as u itself and returns the answer.
func (c *Client) ownHiddenPatch(ctx context.Context, fx *ruleFixture, u *user) (*response, error) {
	res, err := c.login(ctx, fx.coll, u.email, u.password)
	if err != nil {
		return nil, err
	}
	return c.do(ctx, http.MethodPatch, fx.recordsPath(u.id), res.token, map[string]any{hiddenField: "admin"})
}

func checkHiddenDropped(ctx context.Context, c *Client, fx *ruleFixture) error {
	u, err := hiddenSignUp(ctx, c, fx)
	if err != nil {
		return err
	}
	if err := c.expectStoredHidden(ctx, fx.recordsPath(u.id), hiddenField, "", "after the guest's sign-up"); err != nil {
		return err
	}
	r, err := c.ownHiddenPatch(ctx, fx, u)
	if err != nil {
		return err
	}
	m, err := okObject(r)
	if err != nil {
		return fmt.Errorf("the record's own PATCH of %s: %w", hiddenField, err)
	}
	if _, shown := m[hiddenField]; shown {
		return Mismatch("the record's own PATCH answered without a "+hiddenField+" key", r.String())
	}
	return c.expectStoredHidden(ctx, fx.recordsPath(u.id), hiddenField, "", "after the record's own PATCH")
}

func checkHiddenSuperuser(ctx context.Context, c *Client, fx *ruleFixture) error {
	u, err := c.addRecord(ctx, fx.coll, map[string]any{hiddenField: "admin"})
	if err != nil {
		return err
	}
	path := fx.recordsPath(u.id)
	if err := c.expectStoredHidden(ctx, path, hiddenField, "admin", "after the superuser's create"); err != nil {
		return err
	}
	r, err := c.do(ctx, http.MethodPatch, path, c.su, map[string]any{hiddenField: "boss"})
	if err != nil {
		return err
	}
	if m, err := okObject(r); err != nil || m[hiddenField] != "boss" {
		return Mismatch("the superuser's PATCH answering 200 with "+hiddenField+" \"boss\"", r.String())
	}
	r, m, err := c.getOK(ctx, path+"?fields=id,"+hiddenField, c.su)
	if err != nil {
		return err
	}
	if !sameKeys(mapKeys(m), "id", hiddenField) || m[hiddenField] != "boss" {
		return Mismatch("the superuser's GET ?fields=id,"+hiddenField+" answering exactly {id, "+hiddenField+" \"boss\"}", r.String())
	}
	r, m, err = c.getOK(ctx, withQuery(fx.recordsPath(), query("filter", "id = '"+u.id+"'")), c.su)
	if err != nil {
		return err
	}
	items, _ := getArray(m, "items")
	if len(items) != 1 || items[0].(map[string]any)[hiddenField] != "boss" {
		return Mismatch("the superuser's list showing the record with "+hiddenField+" \"boss\"", r.String())
	}
	res, err := c.login(ctx, fx.coll, u.email, u.password)
	if err != nil {
		return err
	}
	r, m, err = c.getOK(ctx, path, res.token)
	if err != nil {
		return err
	}
	if _, shown := m[hiddenField]; shown {
		return Mismatch("the record's own GET answered without a "+hiddenField+" key", r.String())
	}
	r, m, err = c.getOK(ctx, path+"?fields=id,"+hiddenField, res.token)
	if err != nil {
		return err
	}
	if !sameKeys(mapKeys(m), "id") {
		return Mismatch("the record's own GET ?fields=id,"+hiddenField+" answering exactly {id}", r.String())
	}
	return nil
}

func checkHiddenRuleBody(ctx context.Context, c *Client, fx *ruleFixture) error {
	u, err := hiddenSignUp(ctx, c, fx)
	if err != nil {
		return err
	}
	r, err := c.ownHiddenPatch(ctx, fx, u)
	if err != nil {
		return err
	}
	if r.status != http.StatusOK {
		return Mismatch("the record's own PATCH of "+hiddenField+" answering 200 (its updateRule reads the body without it)", r.String())
	}
	return nil
}

func checkHiddenOAuth2CreateData(ctx context.Context, c *Client, p *oauthProvider) error {
	field := "cf_role_" + newNonce(8)
	if err := c.addHiddenField(ctx, "users", field); err != nil {
		return err
	}
	u := newOAuthUser(p)
	body, err := c.oauth2Authorize(ctx, p, u)
	if err != nil {
		return err
	}
	body["createData"] = map[string]any{field: "admin"}
	r, err := c.authWithOAuth2(ctx, "users", body)
	if err != nil {
		return err
	}
	m, _ := object(r)
	rec, _ := getObject(m, "record")
	id, _ := getString(rec, "id")
	if r.status == http.StatusOK && id != "" {
		c.Cleanup("delete the OAuth2 user "+u.Email, func(ctx context.Context) error {
			return c.deleteUser(ctx, &user{id: id, email: u.Email})
		})
	}
	if err := checkAuthResult(r, "users", "", u.Email); err != nil {
		return fmt.Errorf("%w%s", err, p.why(r))
	}
	if _, shown := rec[field]; shown {
		return Mismatch("a record without a "+field+" key", r.String())
	}
	return c.expectStoredHidden(ctx, "/api/collections/users/records/"+seg(id), field, "", "after the OAuth2 sign-up")
}

// addHiddenField adds the hidden text field name to collection coll and
// registers the cleanup that puts coll's fields back.
func (c *Client) addHiddenField(ctx context.Context, coll, name string) error {
	m, err := getCollectionJSON(ctx, c, coll)
	if err != nil {
		return fmt.Errorf("fixture: GET /api/collections/%s: %w", coll, err)
	}
	orig, _ := getArray(m, "fields")
	fields := append(slices.Clone(orig), map[string]any{"name": name, "type": "text", "hidden": true})
	path := "/api/collections/" + seg(coll)
	if err := c.patchOK(ctx, path, map[string]any{"fields": fields}); err != nil {
		return fmt.Errorf("fixture: add the hidden field %s to %s: %w", name, coll, err)
	}
	c.Cleanup("remove the field "+name+" of "+coll, func(ctx context.Context) error {
		return c.patchOK(ctx, path, map[string]any{"fields": orig})
	})
	return nil
}
