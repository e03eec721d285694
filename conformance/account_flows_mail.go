package conformance

import (
	"context"
	"fmt"
	"net/http"
)

// The account flows end to end, reading the mails they send (mail.go's
// fixture: the suite's SMTP sink, the server's smtp settings pointed at it
// for the check and put back after). They follow PocketBase v0.31.0 (its
// account flows, their tokens and their mails), as the FLOW- checks of
// account_flows.go do.

const sectionFlowsMail = "§4.5 (account flows); §5 rule 1 (tokens); PocketBase v0.31.0 (its verification, password-reset and email-change tokens and default mail templates)"

var accountFlowMailRequirements = []*Requirement{
	{
		ID:      "FLOW-MAIL-001",
		Source:  SourcePocketBase,
		Section: sectionFlowsMail,
		Name:    "verification by mail",
		Text: "request-verification on users with a new user's email answers 204 with an empty body and mails " +
			"that address a token of type \"verification\" (claims id and email of the record); " +
			"confirm-verification with that token answers 204, and the record then reads verified: true.",
		Run: withMailUser(false, func(ctx context.Context, c *Client, sink *smtpSink, u *user, _ string) error {
			tok, claims, err := mailedToken(ctx, c, sink, mailRequest{route: "request-verification",
				body: map[string]string{"email": u.email}, rcpt: u.email, what: "the verification mail", typ: "verification"})
			if err != nil {
				return err
			}
			if err := expectClaims(claims, map[string]any{"id": u.id, "email": u.email}); err != nil {
				return fmt.Errorf("verification token: %w", err)
			}
			if err := expectNoContent(ctx, c, "confirm-verification", "", map[string]string{"token": tok}); err != nil {
				return err
			}
			r, rec, err := c.getOK(ctx, "/api/collections/users/records/"+seg(u.id), c.su)
			if err != nil {
				return err
			}
			if v, _ := getBool(rec, "verified"); !v {
				return Mismatch("verified: true after confirm-verification", r.String())
			}
			return nil
		}),
	},
	{
		ID:      "FLOW-MAIL-002",
		Source:  SourcePocketBase,
		Section: sectionFlowsMail,
		Name:    "password reset by mail",
		Text: "request-password-reset answers 204 and mails the user a token of type \"passwordReset\"; " +
			"confirm-password-reset with it and a new password answers 204; then the old password answers 400 \"" +
			msgFailedAuth + "\", the new one signs in (200), and auth-refresh with an auth token issued before " +
			"answers 401 \"" + msgNeedsToken + "\".",
		Run: withMailUser(true, func(ctx context.Context, c *Client, sink *smtpSink, u *user, oldTok string) error {
			tok, _, err := mailedToken(ctx, c, sink, mailRequest{route: "request-password-reset",
				body: map[string]string{"email": u.email}, rcpt: u.email, what: "the password reset mail", typ: "passwordReset"})
			if err != nil {
				return err
			}
			pw := "Cf-" + newNonce(16)
			if err := expectNoContent(ctx, c, "confirm-password-reset", "",
				map[string]string{"token": tok, "password": pw, "passwordConfirm": pw}); err != nil {
				return err
			}
			if err := expectLoginRefused(ctx, c, u.email, u.password); err != nil {
				return fmt.Errorf("the old password: %w", err)
			}
			r, err := c.post(ctx, "/api/collections/users/auth-with-password", "",
				map[string]string{"identity": u.email, "password": pw})
			if err != nil {
				return err
			}
			if err := checkAuthResult(r, "users", u.id, u.email); err != nil {
				return fmt.Errorf("the new password: %w", err)
			}
			if err := expectRefreshRejected(ctx, c, "users", oldTok); err != nil {
				return fmt.Errorf("an auth token issued before the reset: %w", err)
			}
			return nil
		}),
	},
	{
		ID:      "FLOW-MAIL-003",
		Source:  SourcePocketBase,
		Section: sectionFlowsMail,
		Name:    "email change by mail",
		Text: "request-email-change with the user's own token and a new address answers 204 and mails the NEW " +
			"address a token of type \"emailChange\" (claim newEmail); confirm-email-change with it and the " +
			"current password answers 204; then the new address signs in (200, record.email the new address) " +
			"and the old one answers 400 \"" + msgFailedAuth + "\".",
		Run: withMailUser(true, func(ctx context.Context, c *Client, sink *smtpSink, u *user, tok string) error {
			addr := newEmail()
			ctok, claims, err := mailedToken(ctx, c, sink, mailRequest{route: "request-email-change", auth: tok,
				body: map[string]string{"newEmail": addr}, rcpt: addr, what: "the email change mail", typ: "emailChange"})
			if err != nil {
				return err
			}
			if err := expectClaims(claims, map[string]any{"id": u.id, "newEmail": addr}); err != nil {
				return fmt.Errorf("email change token: %w", err)
			}
			if err := expectNoContent(ctx, c, "confirm-email-change", "",
				map[string]string{"token": ctok, "password": u.password}); err != nil {
				return err
			}
			r, err := c.post(ctx, "/api/collections/users/auth-with-password", "",
				map[string]string{"identity": addr, "password": u.password})
			if err != nil {
				return err
			}
			if err := checkAuthResult(r, "users", u.id, addr); err != nil {
				return fmt.Errorf("signing in with the new address: %w", err)
			}
			if err := expectLoginRefused(ctx, c, u.email, u.password); err != nil {
				return fmt.Errorf("the old address: %w", err)
			}
			return nil
		}),
	},
	{
		ID:      "FLOW-MAIL-004",
		Source:  SourcePocketBase,
		Section: sectionFlowsMail,
		Name:    "no mail for an unknown email",
		Text: "request-verification and request-password-reset for an email no record has answer 204 and send " +
			"nothing: a password reset requested afterwards for a real user is mailed, and no mail to the " +
			"unknown address arrives within 2 s after it.",
		Run: withMailUser(false, func(ctx context.Context, c *Client, sink *smtpSink, u *user, _ string) error {
			unknown := "cf-nobody-" + newNonce(10) + "@example.com"
			for _, route := range []string{"request-verification", "request-password-reset"} {
				if err := expectNoContent(ctx, c, route, "", map[string]string{"email": unknown}); err != nil {
					return err
				}
			}
			if err := expectNoContent(ctx, c, "request-password-reset", "", map[string]string{"email": u.email}); err != nil {
				return err
			}
			if _, err := awaitMail(ctx, sink, u.email, "the password reset mail of a real user"); err != nil {
				return err
			}
			if m := sink.wait(ctx, unknown, mailSilence); m != nil {
				return Mismatch("no mail to "+unknown+", which no record has", m.String())
			}
			return nil
		}),
	},
}

// withMailUser is the Run of a check that reads mail: it points the
// server's mail at a sink (mailbox), creates a user, signed in when
// signedIn is set, and runs f with the sink, the user and its token ("" when
// not signed in).
func withMailUser(signedIn bool, f func(ctx context.Context, c *Client, sink *smtpSink, u *user, tok string) error) func(context.Context, *Client) error {
	return withMailbox(func(ctx context.Context, c *Client, sink *smtpSink) error {
		var u *user
		tok := ""
		var err error
		if signedIn {
			u, tok, err = c.newUserToken(ctx)
		} else {
			u, err = c.newUser(ctx)
		}
		if err != nil {
			return err
		}
		return f(ctx, c, sink, u, tok)
	})
}

// mailRequest is a request that mails a token: the users collection's
// route, its Authorization and body, and the mail it sends (to rcpt,
// described by what, holding a token of type typ).
type mailRequest struct {
	route, auth     string
	body            map[string]string
	rcpt, what, typ string
}

// mailedToken sends q (204 with an empty body, expectNoContent) and
// returns the token of type q.typ that the mail to q.rcpt holds, and its
// claims.
func mailedToken(ctx context.Context, c *Client, sink *smtpSink, q mailRequest) (string, map[string]any, error) {
	if err := expectNoContent(ctx, c, q.route, q.auth, q.body); err != nil {
		return "", nil, err
	}
	m, err := awaitMail(ctx, sink, q.rcpt, q.what)
	if err != nil {
		return "", nil, err
	}
	return mailToken(m, q.typ)
}

// expectNoContent posts body to the users collection's route and requires
// 204 with an empty body.
func expectNoContent(ctx context.Context, c *Client, route, auth string, body any) error {
	r, err := c.post(ctx, "/api/collections/users/"+route, auth, body)
	if err != nil {
		return err
	}
	if r.status != http.StatusNoContent || len(r.body) != 0 {
		return Mismatch(route+": 204 with an empty body", r.String())
	}
	return nil
}

// expectLoginRefused requires a password login to users to answer 400
// "Failed to authenticate.".
func expectLoginRefused(ctx context.Context, c *Client, identity, password string) error {
	r, err := c.post(ctx, "/api/collections/users/auth-with-password", "",
		map[string]string{"identity": identity, "password": password})
	if err != nil {
		return err
	}
	_, err = expectError(r, http.StatusBadRequest, msgFailedAuth)
	return err
}
