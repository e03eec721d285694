package conformance

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"time"
)

// The mail fixture of the checks that read mail (the account flows with a
// mailbox, OTP and MFA). Each such check starts an SMTP sink of its own
// (smtpsink.go), points the server's smtp settings at it through PATCH
// /api/settings, and turns on what it needs of the users collection's otp
// and mfa options through PATCH /api/collections/users. Cleanups put back
// every setting and option changed, even when the check fails or panics,
// and then close the sink. A server that refuses the configuration makes
// those checks skip, with its answer as the reason.

const (
	// mailSilence is how long a check watches for a mail that must not
	// come, after a mail sent later has arrived.
	mailSilence = 2 * time.Second
)

// mailbox starts an SMTP sink, points the server's smtp settings at it,
// and registers the cleanups that put the settings back and close it.
func (c *Client) mailbox(ctx context.Context) (*smtpSink, error) {
	orig, err := c.smtpSettings(ctx)
	if err != nil {
		return nil, err
	}
	if u, _ := getString(orig, "username"); u != "" {
		return nil, Skipf("the server's smtp settings hold credentials (username %q), which the suite could not put "+
			"back after pointing them at its SMTP sink (GET /api/settings never returns the password)", u)
	}
	serverHost, listenHost := fixtureHosts(c.opts.smtpHost)
	sink, err := startSMTPSink(listenHost, c.opts.wait)
	if err != nil {
		return nil, fmt.Errorf("fixture: %w", err)
	}
	c.Cleanup("close the SMTP sink", func(context.Context) error { return sink.Close() })
	c.Cleanup("restore the smtp settings", func(ctx context.Context) error {
		return c.restoreSettingsKey(ctx, "smtp", orig)
	})
	want := map[string]any{"enabled": true, "host": serverHost, "port": sink.port(), "tls": false}
	r, err := c.do(ctx, http.MethodPatch, "/api/settings", c.su, map[string]any{"smtp": want})
	if err != nil {
		return nil, err
	}
	if r.status != http.StatusOK {
		return nil, Skipf("the server refused to send its mail to the suite's SMTP sink: PATCH /api/settings %s answered %s",
			jsonText(map[string]any{"smtp": want}), r)
	}
	return sink, nil
}

// smtpSettings returns the smtp object of GET /api/settings.
func (c *Client) smtpSettings(ctx context.Context) (map[string]any, error) {
	st, err := c.readSettings(ctx)
	if err != nil {
		return nil, fmt.Errorf("fixture: reading the settings: %w", err)
	}
	smtp, ok := getObject(st.all, "smtp")
	if !ok {
		return nil, Skipf("GET /api/settings shows no smtp object, so the suite cannot point the server's mail at its SMTP sink")
	}
	return smtp, nil
}

// restoreSettingsKey puts the settings object under key back to want
// when it changed, and requires the settings read afterwards to show it.
func (c *Client) restoreSettingsKey(ctx context.Context, key string, want map[string]any) error {
	now, err := c.readSettings(ctx)
	if err == nil && reflect.DeepEqual(now.all[key], want) {
		return nil
	}
	r, err := c.do(ctx, http.MethodPatch, "/api/settings", c.su, map[string]any{key: want})
	if err != nil {
		return err
	}
	if r.status != http.StatusOK {
		return fmt.Errorf("PATCH /api/settings %s: expected 200, got %s", jsonText(map[string]any{key: want}), r)
	}
	now, err = c.readSettings(ctx)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(now.all[key], want) {
		return fmt.Errorf("%s is %s after the restore, want %s", key, jsonText(now.all[key]), jsonText(want))
	}
	return nil
}

// authOptions is what a check learns of the users collection's OTP options.
type authOptions struct {
	otpLength int // digits of a code (otp.length, 8 when not shown)
}

// setAuthOptions sets otp.enabled and mfa.enabled of the collection coll,
// keeping the rest of both objects, and registers the cleanup that puts
// both back as they were.
func (c *Client) setAuthOptions(ctx context.Context, coll string, otp, mfa bool) (*authOptions, error) {
	return c.setAuthOptionsRule(ctx, coll, otp, mfa, nil)
}

// setAuthOptionsRule is setAuthOptions that also sets mfa.rule to *rule
// when rule is not nil.
func (c *Client) setAuthOptionsRule(ctx context.Context, coll string, otp, mfa bool, rule *string) (*authOptions, error) {
	path := "/api/collections/" + seg(coll)
	r, err := c.get(ctx, path, c.su)
	if err != nil {
		return nil, err
	}
	m, err := okObject(r)
	if err != nil {
		return nil, fmt.Errorf("fixture: GET %s: %w", path, err)
	}
	origOTP, ok1 := getObject(m, "otp")
	origMFA, ok2 := getObject(m, "mfa")
	if !ok1 || !ok2 {
		return nil, Skipf("GET %s shows no otp and mfa objects, so the suite cannot turn OTP and MFA on", path)
	}
	opts := &authOptions{otpLength: 8}
	if n, ok := getNumber(origOTP, "length"); ok && n > 0 {
		opts.otpLength = int(n)
	}
	c.Cleanup("restore the otp and mfa options of "+coll, func(ctx context.Context) error {
		want := map[string]any{"otp": origOTP, "mfa": origMFA}
		r, err := c.get(ctx, path, c.su)
		if err != nil {
			return err
		}
		if now, err := okObject(r); err == nil && reflect.DeepEqual(now["otp"], origOTP) && reflect.DeepEqual(now["mfa"], origMFA) {
			return nil
		}
		if err := c.patchOK(ctx, path, want); err != nil {
			return err
		}
		if r, err = c.get(ctx, path, c.su); err != nil {
			return err
		}
		now, err := okObject(r)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(now["otp"], origOTP) || !reflect.DeepEqual(now["mfa"], origMFA) {
			return fmt.Errorf("otp %s and mfa %s after the restore, want %s and %s",
				jsonText(now["otp"]), jsonText(now["mfa"]), jsonText(origOTP), jsonText(origMFA))
		}
		return nil
	})
	newOTP, newMFA := maps.Clone(origOTP), maps.Clone(origMFA)
	newOTP["enabled"], newMFA["enabled"] = otp, mfa
	if rule != nil {
		newMFA["rule"] = *rule
	}
	body := map[string]any{"otp": newOTP, "mfa": newMFA}
	if r, err = c.do(ctx, http.MethodPatch, path, c.su, body); err != nil {
		return nil, err
	}
	if r.status != http.StatusOK {
		return nil, Skipf("the server refused otp.enabled %v and mfa.enabled %v on %s: PATCH %s answered %s",
			otp, mfa, coll, path, r)
	}
	return opts, nil
}

// withMailbox is the Run of a check that reads mail: it points the
// server's mail at a sink (mailbox) and runs f with it.
func withMailbox(f func(ctx context.Context, c *Client, sink *smtpSink) error) func(context.Context, *Client) error {
	return func(ctx context.Context, c *Client) error {
		sink, err := c.mailbox(ctx)
		if err != nil {
			return err
		}
		return f(ctx, c, sink)
	}
}

// awaitMail waits up to Config.WaitTimeout for a mail to rcpt (mail may
// leave through a queue, after the answer); none is a failure.
func awaitMail(ctx context.Context, sink *smtpSink, rcpt, what string) (*sinkMail, error) {
	m := sink.wait(ctx, rcpt, sink.await)
	if m == nil && ctx.Err() != nil {
		return nil, fmt.Errorf("waiting for %s: %w", what, context.Cause(ctx))
	}
	if m == nil {
		return nil, Mismatch(fmt.Sprintf("%s mailed to %s within %v", what, rcpt, sink.await), "no mail")
	}
	if m.ParseErr != nil {
		return nil, Mismatch(fmt.Sprintf("%s to %s as an RFC 5322 message with MIME parts", what, rcpt), m.String())
	}
	return m, nil
}

// reJWT finds compact JWS strings in a mail's text.
var reJWT = regexp.MustCompile(`[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)

// mailToken returns the first JWT in m's text whose type claim is typ,
// and its claims.
func mailToken(m *sinkMail, typ string) (string, map[string]any, error) {
	for _, tok := range reJWT.FindAllString(m.Text, -1) {
		if _, claims, err := splitJWT(tok); err == nil && claims["type"] == typ {
			return tok, claims, nil
		}
	}
	return "", nil, Mismatch(fmt.Sprintf("a mail holding a token of type %q", typ), m.String())
}

// mailCode returns the one code of n digits in m's text (the HTML and the
// text part may each hold it).
func mailCode(m *sinkMail, n int) (string, error) {
	re := regexp.MustCompile(fmt.Sprintf(`(?:^|[^0-9A-Za-z])([0-9]{%d})(?:[^0-9A-Za-z]|$)`, n))
	var codes []string
	for _, sm := range re.FindAllStringSubmatch(m.Text, -1) {
		if !slices.Contains(codes, sm[1]) {
			codes = append(codes, sm[1])
		}
	}
	if len(codes) != 1 {
		return "", Mismatch(fmt.Sprintf("a mail holding one code of %d digits", n), fmt.Sprintf("codes %v in %s", codes, m))
	}
	return codes[0], nil
}
