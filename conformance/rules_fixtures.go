package conformance

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// The fixtures of the API rule checks (rules.go) and of the auth system
// collections (records_system.go): auth collections of the check's own,
// created with their rules through POST /api/collections, and records in
// them created by the superuser. Each is deleted when the check ends: the
// records first (through the records API, so that what the server keeps
// about them goes too), then the collection.

// newAuthCollection creates an auth collection with a unique name and the
// options opts (rules, otp, mfa…), registers its deletion and returns its
// name and id. A refusal is a fixture error.
func (c *Client) newAuthCollection(ctx context.Context, opts map[string]any) (name, id string, err error) {
	name = "cf_" + newNonce(10)
	body := map[string]any{"name": name, "type": "auth"}
	for k, v := range opts {
		body[k] = v
	}
	r, err := c.post(ctx, "/api/collections", c.su, body)
	if err != nil {
		return "", "", fmt.Errorf("fixture: create collection: %w", err)
	}
	if r.status == http.StatusOK {
		c.cleanupCollection(name)
	}
	m, err := okObject(r)
	if err != nil {
		return "", "", fmt.Errorf("fixture: create auth collection %s: %w", jsonText(body), err)
	}
	id, _ = getString(m, "id")
	return name, id, nil
}

// addRecord creates, as superuser, a record of the auth collection coll
// with a new email and password and the further fields, and registers its
// deletion. The returned user's collectionID is left empty.
func (c *Client) addRecord(ctx context.Context, coll string, fields map[string]any) (*user, error) {
	u := &user{email: newEmail(), password: "Cf-" + newNonce(16)}
	body := signUpBody(u.email, u.password)
	for k, v := range fields {
		body[k] = v
	}
	path := "/api/collections/" + seg(coll) + "/records"
	r, err := c.post(ctx, path, c.su, body)
	if err != nil {
		return nil, fmt.Errorf("fixture: %w", err)
	}
	m, err := okObject(r)
	if err != nil {
		return nil, fmt.Errorf("fixture: create a record of %s: %w", coll, err)
	}
	u.id, _ = getString(m, "id")
	c.Cleanup("delete record "+u.id+" of "+coll, func(ctx context.Context) error {
		return c.deleteIfThere(ctx, path+"/"+seg(u.id))
	})
	return u, nil
}

// ruleFixture is an auth collection of a check's own and its records.
type ruleFixture struct {
	coll, collID string
	recs         []*user
}

// withRuleCollection is the Run of a rule check: it creates an auth
// collection with opts and, for each entry of verified, a record whose
// verified field is that value, then runs f.
func withRuleCollection(opts map[string]any, verified []bool, f func(ctx context.Context, c *Client, fx *ruleFixture) error) func(context.Context, *Client) error {
	return func(ctx context.Context, c *Client) error {
		name, id, err := c.newAuthCollection(ctx, opts)
		if err != nil {
			return err
		}
		fx := &ruleFixture{coll: name, collID: id}
		for _, v := range verified {
			u, err := c.addRecord(ctx, name, map[string]any{"verified": v})
			if err != nil {
				return err
			}
			fx.recs = append(fx.recs, u)
		}
		return f(ctx, c, fx)
	}
}

// recordsPath is the records route of the fixture's collection, with the
// record id when given.
func (fx *ruleFixture) recordsPath(id ...string) string {
	p := "/api/collections/" + seg(fx.coll) + "/records"
	for _, s := range id {
		p += "/" + seg(s)
	}
	return p
}

// listIDs lists path with the headers hdr and requires 200 with a list
// envelope whose totalItems is the number of its items; it returns the
// ids of the items, sorted.
func (c *Client) listIDs(ctx context.Context, path string, hdr http.Header) ([]string, *response, error) {
	r, err := c.doWith(ctx, http.MethodGet, path, hdr, nil)
	if err != nil {
		return nil, nil, err
	}
	m, err := okObject(r)
	if err != nil {
		return nil, r, err
	}
	items, ok := getArray(m, "items")
	if !ok {
		return nil, r, Mismatch("a list envelope with items", r.String())
	}
	ids := []string{}
	for _, it := range items {
		o, _ := it.(map[string]any)
		id, _ := getString(o, "id")
		ids = append(ids, id)
	}
	if n, _ := getNumber(m, "totalItems"); int(n) != len(ids) {
		return nil, r, Mismatch(fmt.Sprintf("totalItems %d (the items listed)", len(ids)), r.String())
	}
	slices.Sort(ids)
	return ids, r, nil
}

// expectIDs requires the list at path, read with hdr, to hold exactly the
// records want (who says whose list it is).
func (c *Client) expectIDs(ctx context.Context, path string, hdr http.Header, who string, want ...*user) error {
	got, r, err := c.listIDs(ctx, path, hdr)
	if err != nil {
		return fmt.Errorf("%s: %w", who, err)
	}
	ids := []string{}
	for _, u := range want {
		ids = append(ids, u.id)
	}
	slices.Sort(ids)
	if !slices.Equal(got, ids) {
		return fmt.Errorf("%s: %w", who, Mismatch("200 listing exactly ["+strings.Join(ids, " ")+"]",
			"["+strings.Join(got, " ")+"] in "+r.String()))
	}
	return nil
}

// authHeader is the header of a request with the Authorization tok ("" for
// none).
func authHeader(tok string) http.Header {
	if tok == "" {
		return nil
	}
	return http.Header{"Authorization": {tok}}
}

// expectExactError is expectError that always demands the message, as
// PocketBase words it.
func expectExactError(r *response, status int, msg string) (*envelope, error) {
	env, err := expectError(r, status, msg)
	if err != nil {
		return nil, err
	}
	if env.message != msg {
		return nil, Mismatch(fmt.Sprintf("%d %q", status, msg), r.String())
	}
	return env, nil
}
