package conformance

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
)

// The new-login alert (issue 20): after a completed sign-in from a device
// the record has not signed in from before (PocketBase's fingerprint of
// the client address and the User-Agent, kept as an _authOrigins record),
// a collection with authAlert enabled mails the record its authAlert
// template, except on the record's first sign-in, as PocketBase v0.31.0
// does. Read through the suite's SMTP sink (mail.go).

const sectionAuthAlert = "§1 (record auth: contract not shown); issue 20; PocketBase v0.31.0 (authAlert: the new-login " +
	"alert mail, its default template, and the _authOrigins it keeps)"

const (
	// alertSubject is the subject of PocketBase v0.31.0's default authAlert
	// template, and alertText a sentence of its body.
	alertSubject = "Login from a new location"
	alertText    = "from a new location"
)

var authAlertRequirements = []*Requirement{
	pocketbaseReq("AUTH-ALERT-001", sectionAuthAlert, "a sign-in from a new device mails the alert",
		"With authAlert.enabled on users and the server's mail pointed at the suite's SMTP sink, a new user signs in "+
			"with its password twice with one User-Agent (the record's first sign-in, then a device it used): "+
			"a password reset requested afterwards is the first mail the user gets (no alert before it); it "+
			"then signs in with another User-Agent (200): the user gets a mail with subject \""+alertSubject+
			"\" whose text holds \""+alertText+"\" (PocketBase's default template), and no other mail within 2 s.",
		withMailUser(false, func(ctx context.Context, c *Client, sink *smtpSink, u *user, _ string) error {
			if err := c.enableAuthAlert(ctx, "users"); err != nil {
				return err
			}
			device := "cf-phone-" + newNonce(8)
			for range 2 {
				if err := c.loginAs(ctx, u, device); err != nil {
					return err
				}
			}
			reset, err := firstMailAfterReset(ctx, c, sink, u.email)
			if err != nil {
				return err
			}
			if reset.Subject == alertSubject {
				return Mismatch("no alert on a record's first sign-in nor from a device it used", reset.String())
			}
			if err := c.loginAs(ctx, u, "cf-laptop-"+newNonce(8)); err != nil {
				return err
			}
			m, err := awaitMail(ctx, sink, u.email, "the new-login alert")
			if err != nil {
				return err
			}
			if m.Subject != alertSubject || !strings.Contains(m.Text, alertText) {
				return Mismatch(fmt.Sprintf("the alert mail: subject %q, text holding %q", alertSubject, alertText), m.String())
			}
			if m := sink.wait(ctx, u.email, mailSilence); m != nil {
				return Mismatch("one alert mail for one sign-in from a new device", m.String())
			}
			return nil
		})),
}

// loginAs signs u in to users with its password, sending userAgent as the
// User-Agent, and requires 200 with u's record.
func (c *Client) loginAs(ctx context.Context, u *user, userAgent string) error {
	r, err := c.doWith(ctx, http.MethodPost, "/api/collections/users/auth-with-password",
		http.Header{"User-Agent": {userAgent}}, map[string]string{"identity": u.email, "password": u.password})
	if err != nil {
		return err
	}
	if err := checkAuthResult(r, "users", u.id, u.email); err != nil {
		return fmt.Errorf("signing in with User-Agent %q: %w", userAgent, err)
	}
	return nil
}

// firstMailAfterReset requests a password reset for email (204) and returns
// the first mail to that address that arrives.
func firstMailAfterReset(ctx context.Context, c *Client, sink *smtpSink, email string) (*sinkMail, error) {
	if err := expectNoContent(ctx, c, "request-password-reset", "", map[string]string{"email": email}); err != nil {
		return nil, err
	}
	return awaitMail(ctx, sink, email, "the first mail after the sign-ins (the password reset)")
}

// enableAuthAlert turns authAlert.enabled on for the collection coll
// (keeping its template) when it is off, and registers the cleanup that
// puts the authAlert object back.
func (c *Client) enableAuthAlert(ctx context.Context, coll string) error {
	path := "/api/collections/" + seg(coll)
	r, err := c.get(ctx, path, c.su)
	if err != nil {
		return err
	}
	m, err := okObject(r)
	if err != nil {
		return fmt.Errorf("fixture: GET %s: %w", path, err)
	}
	orig, ok := getObject(m, "authAlert")
	if !ok {
		return Skipf("GET %s shows no authAlert object, so the suite cannot turn the new-login alert on", path)
	}
	if on, _ := getBool(orig, "enabled"); on {
		return nil
	}
	c.Cleanup("restore the authAlert option of "+coll, func(ctx context.Context) error {
		if err := c.patchOK(ctx, path, map[string]any{"authAlert": orig}); err != nil {
			return err
		}
		r, err := c.get(ctx, path, c.su)
		if err != nil {
			return err
		}
		now, err := okObject(r)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(now["authAlert"], orig) {
			return fmt.Errorf("authAlert %s after the restore, want %s", jsonText(now["authAlert"]), jsonText(orig))
		}
		return nil
	})
	on := map[string]any{"enabled": true}
	if t, ok := orig["emailTemplate"]; ok {
		on["emailTemplate"] = t
	}
	if r, err = c.do(ctx, http.MethodPatch, path, c.su, map[string]any{"authAlert": on}); err != nil {
		return err
	}
	if r.status != http.StatusOK {
		return Skipf("the server refused authAlert.enabled on %s: PATCH %s answered %s", coll, path, r)
	}
	return nil
}
