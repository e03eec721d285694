package conformance

import (
	"context"
	"net/http"
)

// The account flows (verification, password reset, email change). The
// interface document is silent on them (§4.5 lists the authentication
// endpoints it shows); these checks follow PocketBase v0.31.0, whose SDKs
// call them. They need no mail: what a client can see without reading a
// mailbox (the answers that must not tell whether an email exists, the
// validation errors, the auth a route needs, the tokens a confirm refuses).

const (
	msgSuperusersVerified = "All superusers are verified by default."
	msgNoSameCollection   = "The request requires auth record from _superusers collection."
)

var accountFlowRequirements = []*Requirement{
	{
		ID:      "FLOW-001",
		Source:  SourcePocketBase,
		Section: "§4.5 (account flows, PocketBase v0.31.0's behaviour)",
		Name:    "a request for an unknown email answers 204",
		Text: "request-verification and request-password-reset on users with an email no record has answer " +
			"204 with an empty body, as for a known one, so accounts cannot be enumerated.",
		Run: func(ctx context.Context, c *Client) error {
			for _, route := range []string{"request-verification", "request-password-reset"} {
				if err := expectNoContent(ctx, c, route, "", map[string]string{"email": "cf-nobody-" + newNonce(10) + "@example.com"}); err != nil {
					return err
				}
			}
			return nil
		},
	},
	{
		ID:      "FLOW-002",
		Source:  SourcePocketBase,
		Section: "§4.5 (account flows); §2.5 (per-field data); PocketBase v0.31.0 (the document is silent on account flows)",
		Name:    "a request without an email is a validation error",
		Text: "request-verification and request-password-reset with an empty JSON object answer 400 \"" +
			msgValidation + "\" with data.email {code \"" + codeRequired + "\", message}.",
		Run: func(ctx context.Context, c *Client) error {
			for _, route := range []string{"request-verification", "request-password-reset"} {
				r, err := c.post(ctx, "/api/collections/users/"+route, "", map[string]any{})
				if err != nil {
					return err
				}
				env, err := expectError(r, http.StatusBadRequest, msgValidation)
				if err != nil {
					return err
				}
				if err := expectFieldCodes(r, env, codeRequired, "email"); err != nil {
					return err
				}
			}
			return nil
		},
	},
	{
		ID:      "FLOW-003",
		Source:  SourcePocketBase,
		Section: "§4.5 (account flows); §5 rule 4; PocketBase v0.31.0 (the document is silent on account flows)",
		Name:    "superusers are verified by default",
		Text: "request-verification on _superusers, even with a superuser's own email, answers 400 \"" +
			msgSuperusersVerified + "\".",
		Run: func(ctx context.Context, c *Client) error {
			r, err := c.post(ctx, "/api/collections/_superusers/request-verification", "",
				map[string]string{"email": c.email})
			if err != nil {
				return err
			}
			return expectErrorEmptyData(r, http.StatusBadRequest, msgSuperusersVerified)
		},
	},
	{
		ID:      "FLOW-004",
		Source:  SourcePocketBase,
		Section: "§4.5 (account flows); §5 status codes (401 missing token); PocketBase v0.31.0 (the document is silent on account flows)",
		Name:    "request-email-change needs the record's own token",
		Text: "request-email-change on users answers 401 \"" + msgNeedsToken + "\" without Authorization, " +
			"and 403 \"" + msgNoSameCollection + "\" with a superuser's token.",
		Run: func(ctx context.Context, c *Client) error {
			body := map[string]string{"newEmail": "cf-new-" + newNonce(10) + "@example.com"}
			r, err := c.post(ctx, "/api/collections/users/request-email-change", "", body)
			if err != nil {
				return err
			}
			if err := expectErrorEmptyData(r, http.StatusUnauthorized, msgNeedsToken); err != nil {
				return err
			}
			r, err = c.post(ctx, "/api/collections/users/request-email-change", c.su, body)
			if err != nil {
				return err
			}
			return expectErrorEmptyData(r, http.StatusForbidden, msgNoSameCollection)
		},
	},
	{
		ID:      "FLOW-005",
		Source:  SourcePocketBase,
		Section: "§4.5 (account flows); §5 rule 1 (tokens); PocketBase v0.31.0 (the document is silent on account flows)",
		Name:    "a confirm refuses an auth token",
		Text: "A user's auth token given as the token of confirm-password-reset (with a valid new password) " +
			"answers 400 \"" + msgValidation + "\" with data.token code \"validation_invalid_token\"; of " +
			"confirm-verification, code \"validation_invalid_token_claims\" (no email claim); of " +
			"confirm-email-change, code \"validation_invalid_token_payload\" (no newEmail claim).",
		Run: withUserToken(func(ctx context.Context, c *Client, u *user, tok string) error {
			pw := "Cf-" + newNonce(12)
			for _, tt := range []struct {
				route string
				body  map[string]string
				code  string
			}{
				{"confirm-password-reset", map[string]string{"token": tok, "password": pw, "passwordConfirm": pw}, "validation_invalid_token"},
				{"confirm-verification", map[string]string{"token": tok}, "validation_invalid_token_claims"},
				{"confirm-email-change", map[string]string{"token": tok, "password": u.password}, "validation_invalid_token_payload"},
			} {
				r, err := c.post(ctx, "/api/collections/users/"+tt.route, "", tt.body)
				if err != nil {
					return err
				}
				if err := expectFieldError(r, msgValidation, "token", tt.code, ""); err != nil {
					return err
				}
			}
			// The password did not change.
			_, err := c.login(ctx, "users", u.email, u.password)
			return err
		}),
	},
}
