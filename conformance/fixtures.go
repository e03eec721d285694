package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
)

// The records a check creates on the server (users, collections), each
// deleted afterwards, and the Run wrappers of the checks that start with
// one: withUser, withUserToken, withCollection.

// user is a record of the users collection created by a check.
type user struct {
	id           string
	email        string
	password     string
	collectionID string
}

// newUser signs up a fresh user through the public sign-up endpoint and
// registers its deletion (as superuser) as a cleanup.
func (c *Client) newUser(ctx context.Context) (*user, error) {
	u := &user{
		email:    "cf-" + newNonce(12) + "@example.com",
		password: "Cf-" + newNonce(16),
	}
	r, err := c.post(ctx, "/api/collections/users/records", "", map[string]any{
		"email": u.email, "password": u.password, "passwordConfirm": u.password,
	})
	if err != nil {
		return nil, fmt.Errorf("fixture: sign-up: %w", err)
	}
	if r.status != http.StatusOK {
		return nil, fmt.Errorf("fixture: sign-up of %s: expected 200, got %s", u.email, r)
	}
	var rec struct {
		ID           string `json:"id"`
		CollectionID string `json:"collectionId"`
	}
	if err := json.Unmarshal(r.body, &rec); err != nil || rec.ID == "" {
		return nil, fmt.Errorf("fixture: sign-up of %s: no record id in %s", u.email, r)
	}
	u.id, u.collectionID = rec.ID, rec.CollectionID
	c.Cleanup("delete user "+u.email, func(ctx context.Context) error {
		return c.deleteUser(ctx, u)
	})
	return u, nil
}

// deleteUser removes u as superuser; a user that is already gone is fine.
func (c *Client) deleteUser(ctx context.Context, u *user) error {
	return c.deleteIfThere(ctx, "/api/collections/users/records/"+seg(u.id))
}

// deleteIfThere deletes path as superuser and requires 204, or 404 for
// what is already gone.
func (c *Client) deleteIfThere(ctx context.Context, path string) error {
	r, err := c.do(ctx, http.MethodDelete, path, c.su, nil)
	if err != nil {
		return err
	}
	if r.status != http.StatusNoContent && r.status != http.StatusNotFound {
		return fmt.Errorf("expected 204, got %s", r)
	}
	return nil
}

// patchUser updates the user u as superuser with body and requires 200.
func (c *Client) patchUser(ctx context.Context, u *user, body map[string]any) error {
	r, err := c.do(ctx, http.MethodPatch, "/api/collections/users/records/"+seg(u.id), c.su, body)
	if err != nil {
		return err
	}
	if r.status != http.StatusOK {
		return fmt.Errorf("fixture: PATCH user %s %s: expected 200, got %s", u.email, jsonText(body), r)
	}
	return nil
}

// authResult is a decoded §2.6 authentication result.
type authResult struct {
	token  string
	record map[string]any
}

// parseAuthResult requires 200 with a non-empty token and a record object.
func parseAuthResult(r *response) (*authResult, error) {
	m, err := okObject(r)
	if err != nil {
		return nil, err
	}
	tok, _ := getString(m, "token")
	rec, ok := getObject(m, "record")
	if tok == "" || !ok {
		return nil, Mismatch("{token, record} with a non-empty token", r.String())
	}
	return &authResult{token: tok, record: rec}, nil
}

// login authenticates identity/password against collection. A refusal is
// reported as an error (a fixture problem) for the callers that only need
// a token; checks of login itself look at the response directly.
func (c *Client) login(ctx context.Context, collection, identity, password string) (*authResult, error) {
	r, err := c.post(ctx, "/api/collections/"+seg(collection)+"/auth-with-password", "",
		map[string]string{"identity": identity, "password": password})
	if err != nil {
		return nil, fmt.Errorf("fixture: login: %w", err)
	}
	res, err := parseAuthResult(r)
	if err != nil {
		return nil, fmt.Errorf("fixture: login of %s into %s: %v", identity, collection, err)
	}
	return res, nil
}

// newUserToken creates a user and logs it in.
func (c *Client) newUserToken(ctx context.Context) (*user, string, error) {
	u, err := c.newUser(ctx)
	if err != nil {
		return nil, "", err
	}
	res, err := c.login(ctx, "users", u.email, u.password)
	if err != nil {
		return nil, "", err
	}
	return u, res.token, nil
}

// newCollection creates a collection of the given type ("base" or "auth")
// with a unique name and registers its deletion. It returns the name.
func (c *Client) newCollection(ctx context.Context, typ string) (string, error) {
	name, r, err := c.postCollection(ctx, c.su, typ)
	if err != nil {
		return "", fmt.Errorf("fixture: create collection: %w", err)
	}
	if r.status != http.StatusOK {
		return "", fmt.Errorf("fixture: create %s collection %s: expected 200, got %s", typ, name, r)
	}
	return name, nil
}

// patchCollection updates collection options as superuser.
func (c *Client) patchCollection(ctx context.Context, name string, body any) error {
	r, err := c.do(ctx, http.MethodPatch, "/api/collections/"+seg(name), c.su, body)
	if err != nil {
		return fmt.Errorf("fixture: update collection: %w", err)
	}
	if r.status != http.StatusOK {
		return fmt.Errorf("fixture: update collection %s: expected 200, got %s", name, r)
	}
	return nil
}

// withUser is the Run of a check that starts with a new user (newUser).
func withUser(f func(ctx context.Context, c *Client, u *user) error) func(context.Context, *Client) error {
	return func(ctx context.Context, c *Client) error {
		u, err := c.newUser(ctx)
		if err != nil {
			return err
		}
		return f(ctx, c, u)
	}
}

// withUserToken is the Run of a check that starts with a new user signed
// in (newUserToken).
func withUserToken(f func(ctx context.Context, c *Client, u *user, tok string) error) func(context.Context, *Client) error {
	return func(ctx context.Context, c *Client) error {
		u, tok, err := c.newUserToken(ctx)
		if err != nil {
			return err
		}
		return f(ctx, c, u, tok)
	}
}

// withCollection is the Run of a check that starts with a new collection
// of type typ (newCollection); f gets its name.
func withCollection(typ string, f func(ctx context.Context, c *Client, name string) error) func(context.Context, *Client) error {
	return func(ctx context.Context, c *Client) error {
		name, err := c.newCollection(ctx, typ)
		if err != nil {
			return err
		}
		return f(ctx, c, name)
	}
}

// fixtureHosts returns, for the host h of a server the suite runs for the
// server under test to reach (its SMTP sink, its OAuth2 provider), the
// host the server is told and the host the suite listens on: 127.0.0.1
// for both when h is "", else h for both, except that a name (not an IP)
// listens on every interface ("").
func fixtureHosts(h string) (serverHost, listenHost string) {
	if h == "" {
		return "127.0.0.1", "127.0.0.1"
	}
	if net.ParseIP(h) == nil {
		return h, "" // a name: listen on every interface
	}
	return h, h
}

// patchOK sends PATCH path with body as superuser and requires 200.
func (c *Client) patchOK(ctx context.Context, path string, body any) error {
	r, err := c.do(ctx, http.MethodPatch, path, c.su, body)
	if err != nil {
		return err
	}
	if r.status != http.StatusOK {
		return fmt.Errorf("PATCH %s %s: expected 200, got %s", path, jsonText(body), r)
	}
	return nil
}
