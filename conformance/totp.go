package conformance

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"time"
)

// Authenticator apps (TOTP) as a second factor: strongbox's own promise
// (issue 34), which PocketBase v0.31.0 does not make. The checks turn
// totp.enabled on for users for their duration, enrol a fresh user, and
// compute its codes themselves (RFC 6238: HMAC-SHA1, 6 digits, 30 s steps)
// from the secret totp/setup answers, at the suite's clock: a server whose
// clock is more than a step off fails them.

const (
	msgTOTPInvalid = "Invalid TOTP code."
	msgTOTPTooMany = "Too many attempts, please try again later."

	sectionTOTP = "issue 34 (strongbox: authenticator apps, TOTP per RFC 6238, as a second factor); §5 rule 6 (401 with mfaId); §2.6"
)

var totpRequirements = []*Requirement{
	{
		ID:      "TOTP-001",
		Source:  SourceStrongbox,
		Section: sectionTOTP,
		Name:    "totp/setup answers a secret and its otpauth URI",
		Text: "With totp.enabled on users, auth-methods answers totp.enabled true, and POST totp/setup with the " +
			"user's token answers 200 with exactly {secret, uri}: secret unpadded base32 of 20 bytes, uri " +
			"otpauth://totp/… holding secret=<the secret> and issuer=.",
		Run: withTOTPSetup(func(ctx context.Context, c *Client, t *totpUser) error {
			r, err := c.get(ctx, "/api/collections/users/auth-methods", "")
			if err != nil {
				return err
			}
			m, err := okObject(r)
			if err != nil {
				return err
			}
			if o, _ := getObject(m, "totp"); o["enabled"] != true {
				return Mismatch("auth-methods totp.enabled true", r.String())
			}
			return nil
		}),
	},
	{
		ID:      "TOTP-002",
		Source:  SourceStrongbox,
		Section: sectionTOTP,
		Name:    "totp/confirm answers ten recovery codes",
		Text: "POST totp/confirm {code} with a current code of the secret answers 200 with exactly " +
			"{recoveryCodes}: 10 distinct non-empty strings.",
		Run: withTOTPUser(func(ctx context.Context, c *Client, t *totpUser) error { return nil }),
	},
	{
		ID:      "TOTP-003",
		Source:  SourceStrongbox,
		Section: sectionTOTP,
		Name:    "a password sign-in asks for the second factor",
		Text: "Once TOTP is confirmed, auth-with-password of the user answers 401 with exactly {mfaId} " +
			"(a non-empty string), although mfa.enabled is off.",
		Run: withTOTPUser(func(ctx context.Context, c *Client, t *totpUser) error {
			_, err := c.totpFirstFactor(ctx, t)
			return err
		}),
	},
	{
		ID:      "TOTP-004",
		Source:  SourceStrongbox,
		Section: sectionTOTP,
		Name:    "auth-with-totp completes the sign-in",
		Text: "POST auth-with-totp?mfaId=<the 401's> {code} with the next step's code answers 200 with the " +
			"§2.6 result: a JWT and the user's record.",
		Run: withTOTPUser(func(ctx context.Context, c *Client, t *totpUser) error {
			r, err := c.totpSignIn(ctx, t, t.code(1))
			if err != nil {
				return err
			}
			return checkAuthResult(r, "users", t.u.id, t.u.email)
		}),
	},
	{
		ID:      "TOTP-005",
		Source:  SourceStrongbox,
		Section: sectionTOTP,
		Name:    "a TOTP code is accepted once",
		Text: "The code that completed a sign-in (200), sent again with a new mfaId, answers 400 \"" + msgTOTPInvalid +
			"\" with empty data; so does a wrong code; an unknown mfaId answers 400 \"" + msgMFAInvalid + "\".",
		Run: withTOTPUser(func(ctx context.Context, c *Client, t *totpUser) error {
			code := t.code(1)
			r, err := c.totpSignIn(ctx, t, code)
			if err != nil {
				return err
			}
			if err := checkAuthResult(r, "users", t.u.id, t.u.email); err != nil {
				return fmt.Errorf("first use: %w", err)
			}
			for what, code := range map[string]string{"the same code again": code, "a wrong code": otherTOTPCode(t)} {
				if r, err = c.totpSignIn(ctx, t, code); err != nil {
					return err
				}
				if err := expectErrorEmptyData(r, http.StatusBadRequest, msgTOTPInvalid); err != nil {
					return fmt.Errorf("%s: %w", what, err)
				}
			}
			if r, err = authWithTOTP(ctx, c, "cfnosuchmfa"+newNonce(4), t.code(0)); err != nil {
				return err
			}
			return expectErrorEmptyData(r, http.StatusBadRequest, msgMFAInvalid)
		}),
	},
	{
		ID:      "TOTP-006",
		Source:  SourceStrongbox,
		Section: sectionTOTP,
		Name:    "a recovery code works once",
		Text: "auth-with-totp with one of the recovery codes in place of a code answers 200 with the §2.6 result; " +
			"the same recovery code in a new MFA session answers 400 \"" + msgTOTPInvalid + "\".",
		Run: withTOTPUser(func(ctx context.Context, c *Client, t *totpUser) error {
			r, err := c.totpSignIn(ctx, t, t.recovery[0])
			if err != nil {
				return err
			}
			if err := checkAuthResult(r, "users", t.u.id, t.u.email); err != nil {
				return fmt.Errorf("first use: %w", err)
			}
			if r, err = c.totpSignIn(ctx, t, t.recovery[0]); err != nil {
				return err
			}
			_, err = expectError(r, http.StatusBadRequest, msgTOTPInvalid)
			return err
		}),
	},
	{
		ID:      "TOTP-007",
		Source:  SourceStrongbox,
		Section: sectionTOTP,
		Name:    "the sixth code of an MFA session is refused",
		Text: "After 5 wrong codes with one mfaId (each 400 \"" + msgTOTPInvalid + "\"), auth-with-totp with the " +
			"right code answers 429 \"" + msgTOTPTooMany + "\".",
		Run: withTOTPUser(func(ctx context.Context, c *Client, t *totpUser) error {
			mfa, err := c.totpFirstFactor(ctx, t)
			if err != nil {
				return err
			}
			for i := range 5 {
				r, err := authWithTOTP(ctx, c, mfa, otherTOTPCode(t))
				if err != nil {
					return err
				}
				if _, err := expectError(r, http.StatusBadRequest, msgTOTPInvalid); err != nil {
					return fmt.Errorf("wrong code %d of 5: %w", i+1, err)
				}
			}
			r, err := authWithTOTP(ctx, c, mfa, t.code(1))
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusTooManyRequests, msgTOTPTooMany)
			return err
		}),
	},
	{
		ID:      "TOTP-008",
		Source:  SourceStrongbox,
		Section: sectionTOTP,
		Name:    "totp/disable ends the second factor",
		Text: "POST totp/disable {code} with the user's token and a current code answers 204; then " +
			"auth-with-password answers 200 with the §2.6 result again.",
		Run: withTOTPUser(func(ctx context.Context, c *Client, t *totpUser) error {
			r, err := c.post(ctx, "/api/collections/users/totp/disable", t.token, map[string]string{"code": t.code(1)})
			if err != nil {
				return err
			}
			if r.status != http.StatusNoContent {
				return Mismatch("204", r.String())
			}
			if r, err = c.post(ctx, "/api/collections/users/auth-with-password", "",
				map[string]string{"identity": t.u.email, "password": t.u.password}); err != nil {
				return err
			}
			return checkAuthResult(r, "users", t.u.id, t.u.email)
		}),
	},
}

// totpUser is a fresh user with a TOTP set up (and, by withTOTPUser,
// confirmed at step: its codes of later steps are the fresh ones).
type totpUser struct {
	u        *user
	token    string
	key      []byte
	step     int64    // the step of the confirming code
	recovery []string // the recovery codes confirm answered
}

// code returns the user's code of the confirming step plus d.
func (t *totpUser) code(d int64) string { return totpCode(t.key, t.step+d) }

// otherTOTPCode is a code that none of the steps around now has.
func otherTOTPCode(t *totpUser) string {
	for n := 0; ; n++ {
		c := fmt.Sprintf("%06d", n)
		if c != t.code(-1) && c != t.code(0) && c != t.code(1) && c != t.code(2) {
			return c
		}
	}
}

// totpCode is RFC 6238's code of step under key (HMAC-SHA1, RFC 4226's
// dynamic truncation, 6 digits).
func totpCode(key []byte, step int64) string {
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(step))
	m := hmac.New(sha1.New, key)
	m.Write(msg[:])
	sum := m.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	v := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	return fmt.Sprintf("%06d", v%1_000_000)
}

// totpStep is the step of now at the suite's clock.
func totpStep() int64 { return time.Now().Unix() / 30 }

// withTOTPSetup turns totp on for users for the check's duration (a
// server without the option is skipped), signs up a user and sets up its
// TOTP, requiring the answer TOTP-001 states.
func withTOTPSetup(f func(ctx context.Context, c *Client, t *totpUser) error) func(context.Context, *Client) error {
	return func(ctx context.Context, c *Client) error {
		if err := c.enableTOTP(ctx); err != nil {
			return err
		}
		u, token, err := c.newUserToken(ctx)
		if err != nil {
			return err
		}
		t := &totpUser{u: u, token: token}
		r, err := c.post(ctx, "/api/collections/users/totp/setup", token, nil)
		if err != nil {
			return err
		}
		m, err := okObject(r)
		if err != nil {
			return err
		}
		secret, _ := getString(m, "secret")
		uri, _ := getString(m, "uri")
		t.key, err = base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(secret)
		if len(m) != 2 || err != nil || len(t.key) != 20 {
			return Mismatch("exactly {secret: base32 of 20 bytes, uri}", r.String())
		}
		p, err := url.Parse(uri)
		if err != nil || p.Scheme != "otpauth" || p.Host != "totp" || p.Query().Get("secret") != secret || !p.Query().Has("issuer") ||
			!strings.HasSuffix(p.Path, u.email) {
			return Mismatch("uri otpauth://totp/ISSUER:"+u.email+"?secret=<the secret>&issuer=ISSUER", r.String())
		}
		return f(ctx, c, t)
	}
}

// withTOTPUser is withTOTPSetup with the TOTP confirmed by the code of
// the step now, requiring the answer TOTP-002 states.
func withTOTPUser(f func(ctx context.Context, c *Client, t *totpUser) error) func(context.Context, *Client) error {
	return withTOTPSetup(func(ctx context.Context, c *Client, t *totpUser) error {
		t.step = totpStep()
		r, err := c.post(ctx, "/api/collections/users/totp/confirm", t.token, map[string]string{"code": t.code(0)})
		if err != nil {
			return err
		}
		m, err := okObject(r)
		if err != nil {
			return err
		}
		list, _ := m["recoveryCodes"].([]any)
		seen := map[string]bool{}
		for _, v := range list {
			if s, ok := v.(string); ok && s != "" && !seen[s] {
				seen[s] = true
				t.recovery = append(t.recovery, s)
			}
		}
		if len(m) != 1 || len(list) != 10 || len(t.recovery) != 10 {
			return Mismatch("exactly {recoveryCodes: 10 distinct strings}", r.String())
		}
		return f(ctx, c, t)
	})
}

// enableTOTP turns totp.enabled on for users and registers putting the
// option back as it was.
func (c *Client) enableTOTP(ctx context.Context) error {
	const path = "/api/collections/users"
	r, err := c.get(ctx, path, c.su)
	if err != nil {
		return err
	}
	m, err := okObject(r)
	if err != nil {
		return fmt.Errorf("fixture: GET %s: %w", path, err)
	}
	orig, ok := getObject(m, "totp")
	if !ok {
		return Skipf("GET %s shows no totp option: the server has no authenticator-app sign-in", path)
	}
	c.Cleanup("restore the totp option of users", func(ctx context.Context) error {
		if r, err := c.get(ctx, path, c.su); err == nil {
			if now, err := okObject(r); err == nil && reflect.DeepEqual(now["totp"], orig) {
				return nil
			}
		}
		return c.patchOK(ctx, path, map[string]any{"totp": orig})
	})
	return c.patchOK(ctx, path, map[string]any{"totp": map[string]any{"enabled": true}})
}

// totpFirstFactor signs t's user in by password and requires 401 with
// exactly {mfaId}, which it returns.
func (c *Client) totpFirstFactor(ctx context.Context, t *totpUser) (string, error) {
	r, err := c.post(ctx, "/api/collections/users/auth-with-password", "",
		map[string]string{"identity": t.u.email, "password": t.u.password})
	if err != nil {
		return "", err
	}
	m, _ := object(r)
	id, _ := getString(m, "mfaId")
	if r.status != http.StatusUnauthorized || len(m) != 1 || id == "" {
		return "", Mismatch("401 with exactly {mfaId}", r.String())
	}
	return id, nil
}

// totpSignIn is a password sign-in of t's user completed by
// auth-with-totp with code; it returns the latter's answer.
func (c *Client) totpSignIn(ctx context.Context, t *totpUser, code string) (*response, error) {
	mfa, err := c.totpFirstFactor(ctx, t)
	if err != nil {
		return nil, err
	}
	return authWithTOTP(ctx, c, mfa, code)
}

// authWithTOTP sends auth-with-totp on users with mfaId in the query.
func authWithTOTP(ctx context.Context, c *Client, mfaID, code string) (*response, error) {
	return c.post(ctx, "/api/collections/users/auth-with-totp?mfaId="+url.QueryEscape(mfaID), "", map[string]string{"code": code})
}
