package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The records API of auth collections is one of the areas §1 says exist but
// whose contract is "not shown", so these checks follow PocketBase v0.31.0:
// sign-up on the users collection (public
// createRule), its validation errors, and who may view which record.

const (
	msgCreateFailed   = "Failed to create record."
	msgOnlySuperusers = "Only superusers can perform this action."

	codeMinText   = "validation_min_text_constraint"
	codeMaxText   = "validation_max_text_constraint"
	codeMismatch  = "validation_values_mismatch"
	codeIsEmail   = "validation_is_email"
	codeNotUnique = "validation_not_unique"
)

// sectionSignUp is cited by the sign-up requirements.
const sectionSignUp = "§1 (records: contract not shown); PocketBase v0.31.0 (sign-up through the records API, its field validation codes)"

// sectionRecordAccess is cited by the records access requirements.
const sectionRecordAccess = "§1 (records: contract not shown); PocketBase v0.31.0 (API rules: null is superusers only; emailVisibility)"

var recordRequirements = []*Requirement{
	// ---- sign-up validation ----
	{
		ID:      "REC-SIGNUP-001",
		Source:  SourcePocketBase,
		Section: sectionSignUp,
		Name:    "sign-up requires email, password and passwordConfirm",
		Text: "POST /api/collections/users/records as a guest with an empty JSON object answers 400 \"" +
			msgCreateFailed + "\" with data.password and data.passwordConfirm each {code \"" + codeRequired +
			"\", message}; with a password and its confirmation but no email it answers the same 400 with " +
			"data.email code \"" + codeRequired + "\". Nothing is created.",
		Run: func(ctx context.Context, c *Client) error {
			if err := signUpRefused(ctx, c, map[string]any{}, codeRequired, "password", "passwordConfirm"); err != nil {
				return fmt.Errorf("empty body: %w", err)
			}
			pw := "Cf-" + newNonce(16)
			if err := signUpRefused(ctx, c, map[string]any{"password": pw, "passwordConfirm": pw}, codeRequired, "email"); err != nil {
				return fmt.Errorf("no email: %w", err)
			}
			return nil
		},
	},
	{
		ID:      "REC-SIGNUP-002",
		Source:  SourcePocketBase,
		Section: sectionSignUp,
		Name:    "sign-up password shorter than 8",
		Text: "A sign-up whose password (and confirmation) is 7 characters long answers 400 \"" + msgCreateFailed +
			"\" with data.password code \"" + codeMinText + "\"; 8 characters are accepted (200).",
		Run: func(ctx context.Context, c *Client) error {
			if err := signUpRefused(ctx, c, signUpBody(newEmail(), "Cf-"+newNonce(4)), codeMinText, "password"); err != nil {
				return err
			}
			return signUpAccepted(ctx, c, signUpBody(newEmail(), "Cf-"+newNonce(5)))
		},
	},
	{
		ID:      "REC-SIGNUP-003",
		Source:  SourcePocketBase,
		Section: sectionSignUp,
		Name:    "sign-up password longer than 71 bytes",
		Text: "A sign-up whose password (and confirmation) is 72 bytes long answers 400 \"" + msgCreateFailed +
			"\" with data.password code \"" + codeMaxText + "\" (bcrypt reads at most 72 bytes and the " +
			"PocketBase allows 71); 71 bytes are accepted (200).",
		Run: func(ctx context.Context, c *Client) error {
			if err := signUpRefused(ctx, c, signUpBody(newEmail(), "Cf-"+newNonce(69)), codeMaxText, "password"); err != nil {
				return err
			}
			return signUpAccepted(ctx, c, signUpBody(newEmail(), "Cf-"+newNonce(68)))
		},
	},
	{
		ID:      "REC-SIGNUP-004",
		Source:  SourcePocketBase,
		Section: sectionSignUp,
		Name:    "sign-up with a mismatched confirmation",
		Text: "A sign-up whose passwordConfirm differs from password answers 400 \"" + msgCreateFailed +
			"\" with data.passwordConfirm code \"" + codeMismatch + "\".",
		Run: func(ctx context.Context, c *Client) error {
			body := signUpBody(newEmail(), "Cf-"+newNonce(16))
			body["passwordConfirm"] = "Cf-" + newNonce(16)
			return signUpRefused(ctx, c, body, codeMismatch, "passwordConfirm")
		},
	},
	{
		ID:      "REC-SIGNUP-005",
		Source:  SourcePocketBase,
		Section: sectionSignUp,
		Name:    "sign-up with a malformed email",
		Text: "A sign-up whose email is not an email address (\"cf-…-example.com\", no @) answers 400 \"" +
			msgCreateFailed + "\" with data.email code \"" + codeIsEmail + "\".",
		Run: func(ctx context.Context, c *Client) error {
			return signUpRefused(ctx, c, signUpBody("cf-"+newNonce(12)+"-example.com", "Cf-"+newNonce(16)), codeIsEmail, "email")
		},
	},
	{
		ID:      "REC-SIGNUP-006",
		Source:  SourcePocketBase,
		Section: sectionSignUp,
		Name:    "sign-up with an email already taken",
		Text: "A sign-up with the email of an existing user of the collection answers 400 \"" + msgCreateFailed +
			"\" with data.email code \"" + codeNotUnique + "\".",
		Run: withUser(func(ctx context.Context, c *Client, u *user) error {
			return signUpRefused(ctx, c, signUpBody(u.email, "Cf-"+newNonce(16)), codeNotUnique, "email")
		}),
	},
	{
		ID:      "REC-SIGNUP-007",
		Source:  SourcePocketBase,
		Section: sectionSignUp,
		Name:    "sign-up result hides secrets and a private email",
		Text: "A valid sign-up by a guest without emailVisibility answers 200 with the new record: id (15 " +
			"characters [a-z0-9]), collectionId, collectionName \"users\", emailVisibility false, and never " +
			"password, passwordConfirm, tokenKey or email (the email is not visible to a guest).",
		Run: func(ctx context.Context, c *Client) error {
			rec, r, err := signUp(ctx, c, signUpBody(newEmail(), "Cf-"+newNonce(16)))
			if err != nil {
				return err
			}
			if err := expectRecord(r, rec, "users"); err != nil {
				return err
			}
			if v, ok := getBool(rec, "emailVisibility"); !ok || v {
				return Mismatch("emailVisibility false", fmt.Sprintf("%v in %s", rec["emailVisibility"], r))
			}
			if _, ok := rec["email"]; ok {
				return Mismatch("no email in the record returned to a guest (emailVisibility false)", r.String())
			}
			return nil
		},
	},
	{
		ID:      "REC-SIGNUP-008",
		Source:  SourcePocketBase,
		Section: sectionSignUp,
		Name:    "sign-up with emailVisibility shows the email",
		Text: "A valid sign-up by a guest with emailVisibility true answers 200 with a record holding that " +
			"email and emailVisibility true, and still no password or tokenKey.",
		Run: func(ctx context.Context, c *Client) error {
			email := newEmail()
			body := signUpBody(email, "Cf-"+newNonce(16))
			body["emailVisibility"] = true
			rec, r, err := signUp(ctx, c, body)
			if err != nil {
				return err
			}
			if err := expectRecord(r, rec, "users"); err != nil {
				return err
			}
			if v, _ := getBool(rec, "emailVisibility"); !v {
				return Mismatch("emailVisibility true", fmt.Sprintf("%v in %s", rec["emailVisibility"], r))
			}
			if got, _ := getString(rec, "email"); got != email {
				return Mismatch(fmt.Sprintf("email %q (emailVisibility true)", email), fmt.Sprintf("%v in %s", rec["email"], r))
			}
			return nil
		},
	},
	{
		ID:      "REC-SIGNUP-009",
		Source:  SourcePocketBase,
		Section: sectionSignUp + " (the password fields are validated first)",
		Name:    "sign-up judges the password fields first",
		Text: "A sign-up with an email that is not one, a 1-character password and a different confirmation " +
			"answers 400 \"" + msgCreateFailed + "\" with data holding only passwordConfirm {code \"" + codeMismatch +
			"\"}: the record's other fields, and the password's length, are judged only once password and " +
			"passwordConfirm are there and equal. Nothing is created.",
		Run: func(ctx context.Context, c *Client) error {
			body := map[string]any{"email": "cf-" + newNonce(8) + "-example.com", "password": "a", "passwordConfirm": "b"}
			return signUpRefused(ctx, c, body, codeMismatch, "passwordConfirm")
		},
	},

	// ---- who may see which record ----
	{
		ID:      "REC-ACCESS-001",
		Source:  SourcePocketBase,
		Section: sectionRecordAccess,
		Name:    "guest cannot list superusers",
		Text: "GET /api/collections/_superusers/records without a token (the collection's list rule is " +
			"superusers only) answers 403 \"" + msgOnlySuperusers + "\".",
		Run: func(ctx context.Context, c *Client) error {
			r, err := c.get(ctx, "/api/collections/_superusers/records", "")
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusForbidden, msgOnlySuperusers)
			return err
		},
	},
	{
		ID:      "REC-ACCESS-002",
		Source:  SourcePocketBase,
		Section: sectionRecordAccess,
		Name:    "a user views their own record",
		Text: "GET /api/collections/users/records/{id} with the token of the user {id} answers 200 with that " +
			"record, including its email (the owner always sees it), and never password or tokenKey.",
		Run: withUserToken(func(ctx context.Context, c *Client, u *user, tok string) error {
			return expectViewedUser(ctx, c, tok, u)
		}),
	},
	{
		ID:      "REC-ACCESS-003",
		Source:  SourcePocketBase,
		Section: sectionRecordAccess,
		Name:    "another user's record is not found",
		Text: "GET /api/collections/users/records/{id} of another user, with a user's token or without a " +
			"token, answers 404 \"" + msgNotFound + "\" (the view rule lets only the owner see it).",
		Run: withUserToken(func(ctx context.Context, c *Client, _ *user, tok string) error {
			other, err := c.newUser(ctx)
			if err != nil {
				return err
			}
			for _, auth := range []string{tok, ""} {
				who := "another user"
				if auth == "" {
					who = "a guest"
				}
				r, err := c.get(ctx, "/api/collections/users/records/"+seg(other.id), auth)
				if err != nil {
					return err
				}
				if _, err := expectError(r, http.StatusNotFound, msgNotFound); err != nil {
					return fmt.Errorf("as %s: %w", who, err)
				}
			}
			return nil
		}),
	},
	{
		ID:      "REC-ACCESS-004",
		Source:  SourcePocketBase,
		Section: sectionRecordAccess,
		Name:    "a superuser views any user",
		Text: "GET /api/collections/users/records/{id} with a superuser token answers 200 for each of two " +
			"users, with their emails (superusers see every email) and never password or tokenKey.",
		Run: func(ctx context.Context, c *Client) error {
			for range 2 {
				u, err := c.newUser(ctx)
				if err != nil {
					return err
				}
				if err := expectViewedUser(ctx, c, c.su, u); err != nil {
					return err
				}
			}
			return nil
		},
	},
}

// newEmail returns a fresh address for a sign-up.
func newEmail() string { return "cf-" + newNonce(12) + "@example.com" }

// signUpBody is the JSON body of a sign-up with a matching confirmation.
func signUpBody(email, password string) map[string]any {
	return map[string]any{"email": email, "password": password, "passwordConfirm": password}
}

// signUp posts body to the users collection as a guest. On 200 it
// registers the new record's deletion and returns it; any other status
// fails the check.
func signUp(ctx context.Context, c *Client, body map[string]any) (map[string]any, *response, error) {
	r, err := c.post(ctx, "/api/collections/users/records", "", body)
	if err != nil {
		return nil, nil, err
	}
	c.cleanupCreated(r)
	rec, err := okObject(r)
	if err != nil {
		return nil, nil, err
	}
	return rec, r, nil
}

// signUpAccepted requires a sign-up with body to succeed.
func signUpAccepted(ctx context.Context, c *Client, body map[string]any) error {
	pw, _ := body["password"].(string)
	_, _, err := signUp(ctx, c, body)
	if err != nil {
		return fmt.Errorf("password of %d bytes: %w", len(pw), err)
	}
	return nil
}

// signUpRefused requires a sign-up with body to be refused with 400
// msgCreateFailed, code on each of fields and no other field in data. A
// record created anyway is deleted.
func signUpRefused(ctx context.Context, c *Client, body map[string]any, code string, fields ...string) error {
	r, err := c.post(ctx, "/api/collections/users/records", "", body)
	if err != nil {
		return err
	}
	c.cleanupCreated(r)
	env, err := expectError(r, http.StatusBadRequest, msgCreateFailed)
	if err != nil {
		return err
	}
	if err := expectFieldCodes(r, env, code, fields...); err != nil {
		return err
	}
	// PocketBase judges the password fields first and alone, then the
	// rest: the fields named are all the data there is.
	if len(env.data) != len(fields) {
		return Mismatch("data holding only "+strings.Join(fields, ", "), r.String())
	}
	return nil
}

// cleanupCreated registers the deletion of the users record r created, if
// r is a 200 with an id.
func (c *Client) cleanupCreated(r *response) {
	if r.status != http.StatusOK {
		return
	}
	var rec struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(r.body, &rec) != nil || rec.ID == "" {
		return
	}
	u := &user{id: rec.ID}
	c.Cleanup("delete user "+rec.ID, func(ctx context.Context) error { return c.deleteUser(ctx, u) })
}

// expectRecord checks what every record returned by the records API has:
// a 15-character id, collectionId, the collection's name, and no secrets.
func expectRecord(r *response, rec map[string]any, collection string) error {
	if id, _ := getString(rec, "id"); !reLogID.MatchString(id) {
		return Mismatch("id of 15 characters [a-z0-9]", fmt.Sprintf("%v in %s", rec["id"], r))
	}
	if got, _ := getString(rec, "collectionName"); got != collection {
		return Mismatch(fmt.Sprintf("collectionName %q", collection), fmt.Sprintf("%v in %s", rec["collectionName"], r))
	}
	if got, _ := getString(rec, "collectionId"); got == "" {
		return Mismatch("a non-empty collectionId", fmt.Sprintf("%v in %s", rec["collectionId"], r))
	}
	for _, secret := range []string{"password", "passwordConfirm", "tokenKey"} {
		if _, ok := rec[secret]; ok {
			return Mismatch(fmt.Sprintf("a record without %q", secret), r.String())
		}
	}
	return nil
}

// expectViewedUser views u with auth and requires 200 with u's id and email.
func expectViewedUser(ctx context.Context, c *Client, auth string, u *user) error {
	r, rec, err := c.getOK(ctx, "/api/collections/users/records/"+seg(u.id), auth)
	if err != nil {
		return err
	}
	if err := expectRecord(r, rec, "users"); err != nil {
		return err
	}
	if got, _ := getString(rec, "id"); got != u.id {
		return Mismatch(fmt.Sprintf("the record %s", u.id), fmt.Sprintf("id %v in %s", rec["id"], r))
	}
	if got, _ := getString(rec, "email"); got != u.email {
		return Mismatch(fmt.Sprintf("email %q", u.email), fmt.Sprintf("%v in %s", rec["email"], r))
	}
	return nil
}
