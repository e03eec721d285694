package conformance

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

var authPasswordRequirements = []*Requirement{
	{
		ID:      "AUTH-PW-001",
		Source:  SourceDocument,
		Section: "§4.5 auth-with-password; §2.6",
		Name:    "superuser password login",
		Text: "auth-with-password on _superusers with the right email and password answers 200 with a " +
			"non-empty token and a record holding id and email (and, when sent, collectionName \"_superusers\" and a " +
			"collectionId).",
		Run: func(ctx context.Context, c *Client) error {
			r, err := c.post(ctx, "/api/collections/_superusers/auth-with-password", "",
				map[string]string{"identity": c.email, "password": c.password})
			if err != nil {
				return err
			}
			return checkAuthResult(r, "_superusers", "", c.email)
		},
	},
	{
		ID:      "AUTH-PW-002",
		Source:  SourceDocument,
		Section: "§4.5 auth-with-password; §2.6",
		Name:    "user password login",
		Text: "auth-with-password on users with a new user's email and password answers 200 with a non-empty " +
			"JWT and a record holding that user's id and email (and, when sent, collectionName \"users\" and a " +
			"collectionId), and never the password or tokenKey.",
		Run: withUser(func(ctx context.Context, c *Client, u *user) error {
			return expectUserLogin(ctx, c, "users", u)
		}),
	},
	{
		ID:      "AUTH-PW-003",
		Source:  SourceDocument,
		Section: "§4.5 auth-with-password; §5 (400 invalid credentials)",
		Name:    "wrong password is refused",
		Text: "A wrong password, for a user and for a superuser, answers 400 \"" + msgFailedAuth +
			"\" with an empty data object.",
		Run: withUser(func(ctx context.Context, c *Client, u *user) error {
			for _, p := range []struct{ coll, identity string }{{"users", u.email}, {"_superusers", c.email}} {
				r, err := c.post(ctx, "/api/collections/"+p.coll+"/auth-with-password", "",
					map[string]string{"identity": p.identity, "password": "Wrong-" + newNonce(12)})
				if err != nil {
					return err
				}
				if err := expectErrorEmptyData(r, http.StatusBadRequest, msgFailedAuth); err != nil {
					return err
				}
			}
			return nil
		}),
	},
	{
		ID:      "AUTH-PW-004",
		Source:  SourceDocument,
		Section: "§4.5 auth-with-password; §5 (400 invalid credentials)",
		Name:    "unknown identity is refused like a wrong password",
		Text: "An email no record has answers the same 400 \"" + msgFailedAuth + "\" with an empty data " +
			"object as a wrong password, so accounts cannot be enumerated.",
		Run: func(ctx context.Context, c *Client) error {
			r, err := c.post(ctx, "/api/collections/users/auth-with-password", "",
				map[string]string{"identity": "cf-nobody-" + newNonce(10) + "@example.com", "password": "Whatever-123"})
			if err != nil {
				return err
			}
			return expectErrorEmptyData(r, http.StatusBadRequest, msgFailedAuth)
		},
	},
	{
		ID:      "AUTH-PW-005",
		Source:  SourcePocketBase,
		Section: "§4.5 auth-with-password; §2.5 (per-field data); PocketBase v0.31.0 (the document is silent on validation of the body)",
		Name:    "empty body is a validation error",
		Text: "An empty JSON object as body answers 400 \"" + msgValidation + "\" with data.identity and " +
			"data.password each {code \"" + codeRequired + "\", message}.",
		Run: func(ctx context.Context, c *Client) error {
			r, err := c.post(ctx, "/api/collections/users/auth-with-password", "", map[string]any{})
			if err != nil {
				return err
			}
			env, err := expectError(r, http.StatusBadRequest, msgValidation)
			if err != nil {
				return err
			}
			return expectFieldCodes(r, env, codeRequired, "identity", "password")
		},
	},
	{
		ID:      "AUTH-PW-006",
		Source:  SourcePocketBase,
		Section: "§4.5 auth-with-password; PocketBase v0.31.0 (the document is silent on unknown collection)",
		Name:    "unknown collection",
		Text:    "auth-with-password on a collection that does not exist answers 404 \"" + msgNoCollection + "\".",
		Run: func(ctx context.Context, c *Client) error {
			r, err := c.post(ctx, "/api/collections/cf_missing_"+newNonce(8)+"/auth-with-password", "",
				map[string]string{"identity": c.email, "password": c.password})
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusNotFound, msgNoCollection)
			return err
		},
	},
	{
		ID:      "AUTH-PW-007",
		Source:  SourcePocketBase,
		Section: "§4.5 auth-with-password ({collection} is an auth collection); PocketBase v0.31.0 (the document is silent on non-auth collection)",
		Name:    "non-auth collection",
		Text:    "auth-with-password on an existing collection of type base (one the check creates, or _externalAuths where the server creates none) answers 404 \"" + msgNoAuthColl + "\".",
		Run: withNonAuthCollection(func(ctx context.Context, c *Client, name string) error {
			r, err := c.post(ctx, "/api/collections/"+name+"/auth-with-password", "",
				map[string]string{"identity": c.email, "password": c.password})
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusNotFound, msgNoAuthColl)
			return err
		}),
	},
	{
		ID:      "AUTH-PW-008",
		Source:  SourceDocument,
		Section: "§4.5 auth-with-password; §5 (403 method not enabled)",
		Name:    "password auth disabled",
		Text: "When an auth collection has passwordAuth.enabled false, auth-with-password answers 403 \"" +
			msgPasswordOff + "\".",
		Run: withCollection("auth", func(ctx context.Context, c *Client, name string) error {
			if err := c.patchCollection(ctx, name, map[string]any{"passwordAuth": map[string]any{"enabled": false}}); err != nil {
				return err
			}
			r, err := c.post(ctx, "/api/collections/"+name+"/auth-with-password", "",
				map[string]string{"identity": "cf-" + newNonce(8) + "@example.com", "password": "Whatever-123"})
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusForbidden, msgPasswordOff)
			return err
		}),
	},
	{
		ID:      "AUTH-PW-009",
		Source:  SourcePocketBase,
		Section: "§4.5 auth-with-password; PocketBase v0.31.0 (the document is silent on form bodies)",
		Name:    "form-encoded login",
		Text: "auth-with-password also accepts identity and password as an " +
			"application/x-www-form-urlencoded body and answers 200 {token, record}.",
		Run: withUser(func(ctx context.Context, c *Client, u *user) error {
			r, err := c.post(ctx, "/api/collections/users/auth-with-password", "",
				url.Values{"identity": {u.email}, "password": {u.password}})
			if err != nil {
				return err
			}
			return checkAuthResult(r, "users", u.id, u.email)
		}),
	},
	{
		ID:      "AUTH-PW-010",
		Source:  SourceDocument,
		Section: "§4.5 ({collection} is a name or an id)",
		Name:    "collection addressed by id",
		Text: "auth-with-password addressed with the users collection's id instead of its name answers " +
			"200 {token, record} for the same user.",
		Run: withUser(func(ctx context.Context, c *Client, u *user) error {
			if u.collectionID == "" {
				return Mismatch("a collectionId in the sign-up answer (to address the collection by id)", "none")
			}
			return expectUserLogin(ctx, c, u.collectionID, u)
		}),
	},
}

// expectUserLogin signs u in with its password, addressing the users
// collection by ref (its name or its id), and requires the §2.6 result.
func expectUserLogin(ctx context.Context, c *Client, ref string, u *user) error {
	r, err := c.post(ctx, "/api/collections/"+seg(ref)+"/auth-with-password", "",
		map[string]string{"identity": u.email, "password": u.password})
	if err != nil {
		return err
	}
	return checkAuthResult(r, "users", u.id, u.email)
}

// checkAuthResult requires a §2.6 authentication result for a record of
// collection (by name) with the given id (when not empty) and email.
func checkAuthResult(r *response, collection, id, email string) error {
	res, err := parseAuthResult(r)
	if err != nil {
		return err
	}
	if _, _, err := splitJWT(res.token); err != nil {
		return Mismatch("the token to be a JWT", fmt.Sprintf("%q (%v)", res.token, err))
	}
	rec := res.record
	gotID, _ := getString(rec, "id")
	if gotID == "" || (id != "" && gotID != id) {
		return Mismatch(fmt.Sprintf("record.id %q", id), fmt.Sprintf("%q", gotID))
	}
	if got, _ := getString(rec, "email"); got != email {
		return Mismatch(fmt.Sprintf("record.email %q", email), fmt.Sprintf("%q", got))
	}
	// §2.6: the record holds id and the record's fields; its
	// collectionName and collectionId are PocketBase's reading (checked
	// wherever they are sent).
	if got, ok := rec["collectionName"]; (ok || r.strict) && got != collection {
		return Mismatch(fmt.Sprintf("record.collectionName %q", collection), fmt.Sprint(got))
	}
	if got, ok := rec["collectionId"]; ok || r.strict {
		if s, _ := got.(string); s == "" {
			return Mismatch("a non-empty record.collectionId", fmt.Sprint(got))
		}
	}
	for _, secret := range []string{"password", "tokenKey"} {
		if _, ok := rec[secret]; ok {
			return Mismatch(fmt.Sprintf("a record without %q", secret), r.String())
		}
	}
	return nil
}

// expectFieldCodes requires env.data to hold, for each field, an object
// {code, message} with the given code.
func expectFieldCodes(r *response, env *envelope, code string, fields ...string) error {
	for _, f := range fields {
		fe, ok := getObject(env.data, f)
		if !ok {
			return Mismatch(fmt.Sprintf("data.%s to be a validation error object", f), r.String())
		}
		if got, _ := getString(fe, "code"); got != code {
			return Mismatch(fmt.Sprintf("data.%s.code %q", f, code), fmt.Sprintf("%q in %s", got, r))
		}
		if msg, ok := getString(fe, "message"); !ok || msg == "" {
			return Mismatch(fmt.Sprintf("data.%s.message to be a non-empty string", f), r.String())
		}
	}
	return nil
}
