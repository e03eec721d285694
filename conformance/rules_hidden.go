package conformance

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Hidden values and the API rules and list filters (issue 29). PocketBase
// v0.31.0 joins every comparison of a non-superuser's filter that names
// an auth record's email to "emailVisibility = TRUE"
// (core/record_field_resolver_runner.go), so that no operator finds a
// hidden email, not even the owner's; lets superusers only filter by
// hidden fields; and reads hidden fields in rules, of @request.auth and of
// the record itself, since a superuser wrote the rule. Each check creates
// an auth collection of its own (rules_fixtures.go) whose hidden fields
// are the text cfrole and the bool cfbanned.

const sectionRulesHidden = "§1 (records: contract not shown); issue 29; PocketBase v0.31.0 (hidden values in rules and list filters: "

// ruleHiddenReq builds a requirement of hidden values: its section names
// what PocketBase does.
func ruleHiddenReq(id, what, name, text string, run func(context.Context, *Client) error) *Requirement {
	return pocketbaseReq(id, sectionRulesHidden+what+")", name, text, run)
}

// hiddenFields are the hidden fields of the collections of these checks.
var hiddenFields = []any{
	map[string]any{"name": "cfrole", "type": "text", "hidden": true},
	map[string]any{"name": "cfbanned", "type": "bool", "hidden": true},
}

// withRuleHiddenCollection is the Run of a check of hidden values: it creates
// an auth collection with hiddenFields and the options opts, and a record
// for each entry of recs (its fields, as the superuser sets them), then
// runs f.
func withRuleHiddenCollection(opts map[string]any, recs []map[string]any, f func(ctx context.Context, c *Client, fx *ruleFixture) error) func(context.Context, *Client) error {
	return func(ctx context.Context, c *Client) error {
		body := map[string]any{"fields": hiddenFields}
		for k, v := range opts {
			body[k] = v
		}
		name, id, err := c.newAuthCollection(ctx, body)
		if err != nil {
			return err
		}
		fx := &ruleFixture{coll: name, collID: id}
		for _, fields := range recs {
			u, err := c.addRecord(ctx, name, fields)
			if err != nil {
				return err
			}
			fx.recs = append(fx.recs, u)
		}
		return f(ctx, c, fx)
	}
}

// filterPath is the fixture's records list with the filter f.
func (fx *ruleFixture) filterPath(f string) string {
	return withQuery(fx.recordsPath(), query("filter", f))
}

// checkEmailFilters: A's email is hidden, B's shown; no filter of a guest
// or of A finds A by its email, whatever the operator; a superuser's
// finds both.
func checkEmailFilters(ctx context.Context, c *Client, fx *ruleFixture) error {
	a, b := fx.recs[0], fx.recs[1]
	res, err := c.login(ctx, fx.coll, a.email, a.password)
	if err != nil {
		return err
	}
	for who, hdr := range map[string]http.Header{"a guest": nil, "A signed in": authHeader(res.token)} {
		for _, tt := range []struct {
			filter string
			want   []*user
		}{
			{fmt.Sprintf("email = %q", a.email), nil},
			{fmt.Sprintf("email ~ %q", a.email[:9]+"%"), nil},
			{fmt.Sprintf("email ?= %q", a.email), nil},
			{`email = ""`, nil},
			{`email != "x"`, []*user{b}},
			{`email > ""`, []*user{b}},
			{`email !~ "zzz"`, []*user{b}},
		} {
			if err := c.expectIDs(ctx, fx.filterPath(tt.filter), hdr, who+" filtering "+tt.filter, tt.want...); err != nil {
				return err
			}
		}
	}
	su := authHeader(c.su)
	if err := c.expectIDs(ctx, fx.filterPath(fmt.Sprintf("email = %q", a.email)), su, "the superuser", a); err != nil {
		return err
	}
	return c.expectIDs(ctx, fx.filterPath(`email != "x"`), su, "the superuser", a, b)
}

// checkHiddenFieldFilter: a superuser filters by the hidden cfrole; a
// guest's and a record's same filter is 400.
func checkHiddenFieldFilter(ctx context.Context, c *Client, fx *ruleFixture) error {
	a := fx.recs[0]
	path := fx.filterPath(`cfrole = "admin"`)
	if err := c.expectIDs(ctx, path, authHeader(c.su), "the superuser filtering by a hidden field", a); err != nil {
		return err
	}
	res, err := c.login(ctx, fx.coll, a.email, a.password)
	if err != nil {
		return err
	}
	for who, hdr := range map[string]http.Header{"a guest": nil, "A signed in": authHeader(res.token)} {
		r, err := c.doWith(ctx, http.MethodGet, path, hdr, nil)
		if err != nil {
			return err
		}
		if _, err := expectExactError(r, http.StatusBadRequest, msgGenericBad); err != nil {
			return fmt.Errorf("%s filtering by a hidden field: %w", who, err)
		}
	}
	return nil
}

// checkHiddenAuthUpdate: the banned record's update of itself is denied,
// the other's allowed.
func checkHiddenAuthUpdate(ctx context.Context, c *Client, fx *ruleFixture) error {
	ok, banned := fx.recs[0], fx.recs[1]
	body := map[string]any{"emailVisibility": true}
	res, err := c.login(ctx, fx.coll, banned.email, banned.password)
	if err != nil {
		return err
	}
	if err := expectDenied(ctx, c, http.MethodPatch, fx.recordsPath(banned.id), authHeader(res.token), body); err != nil {
		return fmt.Errorf("the banned record updating itself: %w", err)
	}
	r, m, err := c.getOK(ctx, fx.recordsPath(banned.id), c.su)
	if err != nil {
		return err
	}
	if v, _ := getBool(m, "emailVisibility"); v {
		return Mismatch("emailVisibility still false after the denied PATCH", r.String())
	}
	if res, err = c.login(ctx, fx.coll, ok.email, ok.password); err != nil {
		return err
	}
	return expectRecordOK(ctx, c, http.MethodPatch, fx.recordsPath(ok.id), authHeader(res.token), body, ok)
}

// checkHiddenAuthList: the admin lists both records, the member and a
// guest none.
func checkHiddenAuthList(ctx context.Context, c *Client, fx *ruleFixture) error {
	admin, member := fx.recs[0], fx.recs[1]
	for _, u := range []*user{admin, member} {
		res, err := c.login(ctx, fx.coll, u.email, u.password)
		if err != nil {
			return err
		}
		want := fx.recs
		who := "the record with cfrole \"admin\""
		if u == member {
			want, who = nil, "the record with cfrole \"member\""
		}
		if err := c.expectIDs(ctx, fx.recordsPath(), authHeader(res.token), who, want...); err != nil {
			return err
		}
	}
	return c.expectIDs(ctx, fx.recordsPath(), nil, "a guest")
}

// checkOwnHiddenRule: a viewRule on the record's own hidden field is
// accepted and applied.
func checkOwnHiddenRule(ctx context.Context, c *Client, fx *ruleFixture) error {
	ok, banned := fx.recs[0], fx.recs[1]
	r, err := c.do(ctx, http.MethodPatch, "/api/collections/"+seg(fx.coll), c.su, map[string]any{"viewRule": "cfbanned = false"})
	if err != nil {
		return err
	}
	if _, err := okObject(r); err != nil {
		return fmt.Errorf("saving viewRule `cfbanned = false`: %w", err)
	}
	if err := expectDenied(ctx, c, http.MethodGet, fx.recordsPath(banned.id), nil, nil); err != nil {
		return err
	}
	return expectRecordOK(ctx, c, http.MethodGet, fx.recordsPath(ok.id), nil, nil, ok)
}

// checkEmailSort: a guest's sort by email and by -email put B (shown)
// last and first and A and C (hidden) in the same order both times.
func checkEmailSort(ctx context.Context, c *Client, fx *ruleFixture) error {
	b := fx.recs[1]
	var orders [][]string
	for _, sort := range []string{"email", "-email"} {
		path := withQuery(fx.recordsPath(), url.Values{"sort": {sort}})
		r, m, err := c.getOK(ctx, path, "")
		if err != nil {
			return err
		}
		items, _ := getArray(m, "items")
		var ids []string
		for _, it := range items {
			o, _ := it.(map[string]any)
			id, _ := getString(o, "id")
			ids = append(ids, id)
		}
		if len(ids) != 3 {
			return Mismatch("sort="+sort+": 200 listing the 3 records", r.String())
		}
		orders = append(orders, ids)
	}
	asc, desc := orders[0], orders[1]
	if asc[2] != b.id || desc[0] != b.id || !slices.Equal(asc[:2], desc[1:]) {
		return Mismatch(fmt.Sprintf("%s last with sort=email and first with sort=-email, the hidden two in the same order both times", b.id),
			fmt.Sprintf("sort=email [%s], sort=-email [%s]", strings.Join(asc, " "), strings.Join(desc, " ")))
	}
	return nil
}
