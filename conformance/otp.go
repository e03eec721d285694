package conformance

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// One-time passwords (§4.5, §5 rule 5, §2.8) and multi-factor
// authentication (§5 rule 6), on the users collection. The checks turn
// otp.enabled (and mfa.enabled) on for their duration and read the codes
// from the mails the server sends to the suite's SMTP sink (mail.go);
// where the document is silent they follow PocketBase v0.31.0. The code
// travels in the password field of auth-with-otp, as PocketBase and its
// SDK send it.

const (
	msgOTPInvalid = "Invalid or expired OTP."
	msgOTPTooMany = "Too many attempts, please try again later with a new OTP."
	msgOTPOff     = "The collection is not configured to allow OTP authentication."
	msgMFASame    = "A different authentication method is required."
	msgMFAInvalid = "Invalid or expired MFA session."
	msgMFAOther   = "Invalid MFA session."

	// otpAttempts is how many codes one record may try within 180 s from
	// one client, as in PocketBase v0.31.0.
	otpAttempts = 5
	// otpAttemptsMax bounds, for the document (which names no number),
	// the attempts by which a 429 must come (OTP-005).
	otpAttemptsMax = 20
)

const (
	sectionOTP = "§4.5 request-otp, auth-with-otp; §5 rule 5; §2.8; PocketBase v0.31.0 (request-otp and auth-with-otp, its OTP options)"
	sectionMFA = "§5 rule 6; §5 status codes (401 with mfaId); PocketBase v0.31.0 (MFA: a second method within mfa.duration)"
)

var otpRequirements = []*Requirement{
	{
		ID:      "OTP-001",
		Source:  SourceDocument,
		Section: sectionOTP,
		Name:    "request-otp answers an otpId and mails the code",
		Text: "With otp.enabled on users, request-otp with a user's email answers 200 with exactly {\"otpId\": " +
			"<non-empty string>} (§2.8), and a mail to that address holds one code of otp.length digits.",
		Run: withOTPUser(false, func(ctx context.Context, c *Client, o *otpUser) error {
			_, _, err := c.otpFor(ctx, o, o.u.email)
			return err
		}),
	},
	{
		ID:      "OTP-002",
		Source:  SourceDocument,
		Section: sectionOTP + "; §2.6",
		Name:    "auth-with-otp with the mailed code",
		Text: "auth-with-otp with the otpId and the mailed code (in password) answers 200 with the §2.6 " +
			"result: a JWT token and the user's record (its id and email).",
		Run: withOTPUser(false, func(ctx context.Context, c *Client, o *otpUser) error {
			r, _, _, err := c.otpSignIn(ctx, o)
			if err != nil {
				return err
			}
			return checkAuthResult(r, "users", o.u.id, o.u.email)
		}),
	},
	{
		ID:      "OTP-003",
		Source:  SourceDocument,
		Section: sectionOTP,
		Name:    "auth-with-otp with a wrong code",
		Text:    "auth-with-otp with a live otpId and a code other than the mailed one answers 400 \"" + msgOTPInvalid + "\" with empty data.",
		Run: withOTPCode(func(ctx context.Context, c *Client, o *otpUser, id, code string) error {
			r, err := authWithOTP(ctx, c, "", id, otherCode(code))
			if err != nil {
				return err
			}
			return expectErrorEmptyData(r, http.StatusBadRequest, msgOTPInvalid)
		}),
	},
	{
		ID:      "OTP-004",
		Source:  SourceDocument,
		Section: sectionOTP,
		Name:    "an OTP is single use",
		Text: "auth-with-otp with an otpId and code already used for a successful sign-in (200) answers 400 \"" +
			msgOTPInvalid + "\".",
		Run: withOTPUser(false, func(ctx context.Context, c *Client, o *otpUser) error {
			r, id, code, err := c.otpSignIn(ctx, o)
			if err != nil {
				return err
			}
			if err := checkAuthResult(r, "users", o.u.id, o.u.email); err != nil {
				return fmt.Errorf("first use: %w", err)
			}
			if r, err = authWithOTP(ctx, c, "", id, code); err != nil {
				return err
			}
			_, err = expectError(r, http.StatusBadRequest, msgOTPInvalid)
			return err
		}),
	},
	{
		ID:      "OTP-005",
		Source:  SourceDocument,
		Section: sectionOTP + "; §5 status codes (429)",
		Name:    "too many OTP attempts are refused",
		Text: fmt.Sprintf("auth-with-otp attempts with wrong codes for one record from one client within 180 s answer "+
			"400 \"%s\" until, from the 2nd to the %dth, one answers 429 \"%s\"; the right code after it answers "+
			"429 too (§5: request a new OTP). The document names no number; PocketBase refuses the %dth "+
			"attempt, which OTP-505 demands.", msgOTPInvalid, otpAttemptsMax, msgOTPTooMany, otpAttempts+1),
		Run: withOTPCode(func(ctx context.Context, c *Client, o *otpUser, id, code string) error {
			wrong := otpAttemptsMax - 1 // the 429 comes at the latest on the otpAttemptsMax-th attempt
			if c.strict() {
				wrong = otpAttempts
			}
			for i := range wrong {
				r, err := authWithOTP(ctx, c, "", id, otherCode(code))
				if err != nil {
					return err
				}
				if i > 0 && !c.strict() && r.status == http.StatusTooManyRequests {
					if _, err := expectError(r, http.StatusTooManyRequests, msgOTPTooMany); err != nil {
						return fmt.Errorf("wrong code %d: %w", i+1, err)
					}
					break
				}
				if _, err := expectError(r, http.StatusBadRequest, msgOTPInvalid); err != nil {
					return fmt.Errorf("wrong code %d of %d: %w", i+1, wrong, err)
				}
			}
			r, err := authWithOTP(ctx, c, "", id, code)
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusTooManyRequests, msgOTPTooMany)
			return err
		}),
	},
	{
		ID:      "OTP-006",
		Source:  SourcePocketBase,
		Section: sectionOTP,
		Name:    "request-otp for an unknown email",
		Text: "request-otp with an email no record has answers 200 with exactly {\"otpId\"}, an id as long " +
			"as a real one's, and sends nothing: no mail to that address arrives within 2 s after a real " +
			"user's OTP mail.",
		Run: withOTPUser(false, func(ctx context.Context, c *Client, o *otpUser) error {
			unknown := "cf-nobody-" + newNonce(10) + "@example.com"
			ghost, err := requestOTP(ctx, c, unknown)
			if err != nil {
				return fmt.Errorf("unknown email: %w", err)
			}
			real, _, err := c.otpFor(ctx, o, o.u.email)
			if err != nil {
				return err
			}
			if len(ghost) != len(real) {
				return Mismatch(fmt.Sprintf("an otpId of %d characters, as a real one (%q)", len(real), real), fmt.Sprintf("%q", ghost))
			}
			if m := o.sink.wait(ctx, unknown, mailSilence); m != nil {
				return Mismatch("no mail to "+unknown+", which no record has", m.String())
			}
			return nil
		}),
	},
	{
		ID:      "OTP-007",
		Source:  SourceDocument,
		Section: sectionOTP + "; §5 status codes (403)",
		Name:    "OTP refused when the collection has it off",
		Text: "With otp.enabled off on users, request-otp with a user's email and auth-with-otp with any " +
			"otpId and code answer 403 \"" + msgOTPOff + "\".",
		Run: func(ctx context.Context, c *Client) error {
			if _, err := c.setAuthOptions(ctx, "users", false, false); err != nil {
				return err
			}
			u, err := c.newUser(ctx)
			if err != nil {
				return err
			}
			r, err := c.post(ctx, "/api/collections/users/request-otp", "", map[string]string{"email": u.email})
			if err != nil {
				return err
			}
			if _, err := expectError(r, http.StatusForbidden, msgOTPOff); err != nil {
				return fmt.Errorf("request-otp: %w", err)
			}
			if r, err = authWithOTP(ctx, c, "", newNonce(15), "12345678"); err != nil {
				return err
			}
			if _, err := expectError(r, http.StatusForbidden, msgOTPOff); err != nil {
				return fmt.Errorf("auth-with-otp: %w", err)
			}
			return nil
		},
	},
	{
		ID:      "OTP-ATTEMPTS-001",
		Source:  SourceStrongbox,
		Section: sectionOTP + "; §5 status codes (429); issue 20 (the attempts are counted on the OTP, across addresses)",
		Name:    "an OTP dies after 5 wrong codes from any addresses",
		Text: "With settings.trustedProxy {headers [\"" + clientAddrHeader + "\"]}, 5 auth-with-otp attempts with wrong " +
			"codes for one OTP, each from a client address of its own (each 400 \"" + msgOTPInvalid + "\"), make " +
			"the right code from yet another address answer 429 \"" + msgOTPTooMany + "\".",
		Run: withOTPCode(func(ctx context.Context, c *Client, o *otpUser, id, code string) error {
			if err := c.trustClientHeader(ctx); err != nil {
				return err
			}
			for i := range otpAttempts {
				r, err := authWithOTPFrom(ctx, c, randomClientAddr(), id, otherCode(code))
				if err != nil {
					return err
				}
				if _, err := expectError(r, http.StatusBadRequest, msgOTPInvalid); err != nil {
					return fmt.Errorf("wrong code %d of %d: %w", i+1, otpAttempts, err)
				}
			}
			r, err := authWithOTPFrom(ctx, c, randomClientAddr(), id, code)
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusTooManyRequests, msgOTPTooMany)
			return err
		}),
	},
}

var mfaRequirements = []*Requirement{
	{
		ID:      "MFA-001",
		Source:  SourceDocument,
		Section: sectionMFA,
		Name:    "a first factor answers 401 with an mfaId",
		Text: "With mfa.enabled and otp.enabled on users, auth-with-password with a user's right password " +
			"answers 401 with a body holding mfaId (a non-empty string), and no token.",
		Run: withMFAUser(func(ctx context.Context, c *Client, u *user) error {
			_, err := firstFactor(ctx, c, u)
			return err
		}),
	},
	{
		ID:      "MFA-002",
		Source:  SourceDocument,
		Section: sectionMFA + "; §2.6",
		Name:    "OTP as second factor completes the sign-in",
		Text: "After a password first factor (401 {\"mfaId\"}), auth-with-otp?mfaId=<it> with the user's mailed " +
			"code answers 200 with the §2.6 result for that user.",
		Run: withOTPUser(true, func(ctx context.Context, c *Client, o *otpUser) error {
			_, err := c.mfaSignIn(ctx, o)
			return err
		}),
	},
	{
		ID:      "MFA-003",
		Source:  SourceDocument,
		Section: sectionMFA,
		Name:    "the second factor must be another method",
		Text: "After a password first factor (401 {\"mfaId\"}), auth-with-password?mfaId=<it> with the same " +
			"right password answers 400 \"" + msgMFASame + "\".",
		Run: withMFAUser(func(ctx context.Context, c *Client, u *user) error {
			mfaID, err := firstFactor(ctx, c, u)
			if err != nil {
				return err
			}
			r, err := passwordLogin(ctx, c, mfaID, u.email, u.password)
			if err != nil {
				return err
			}
			return expectErrorEmptyData(r, http.StatusBadRequest, msgMFASame)
		}),
	},
	{
		ID:      "MFA-004",
		Source:  SourcePocketBase,
		Section: sectionMFA,
		Name:    "an unknown mfaId is refused",
		Text: "With MFA on, auth-with-password?mfaId=<an id no session has> with the user's right password " +
			"answers 400 \"" + msgMFAInvalid + "\".",
		Run: withMFAUser(func(ctx context.Context, c *Client, u *user) error {
			r, err := passwordLogin(ctx, c, newNonce(15), u.email, u.password)
			if err != nil {
				return err
			}
			return expectErrorEmptyData(r, http.StatusBadRequest, msgMFAInvalid)
		}),
	},
	{
		ID:      "MFA-005",
		Source:  SourcePocketBase,
		Section: sectionMFA,
		Name:    "another record's mfaId is refused",
		Text: "With MFA on, user B's auth-with-otp?mfaId=<the mfaId of user A's password first factor> with " +
			"B's right code answers 400 \"" + msgMFAOther + "\".",
		Run: withOTPUser(true, func(ctx context.Context, c *Client, o *otpUser) error {
			b, err := c.newUser(ctx)
			if err != nil {
				return err
			}
			mfaID, err := firstFactor(ctx, c, o.u)
			if err != nil {
				return err
			}
			id, code, err := c.otpFor(ctx, o, b.email)
			if err != nil {
				return err
			}
			r, err := authWithOTP(ctx, c, mfaID, id, code)
			if err != nil {
				return err
			}
			return expectErrorEmptyData(r, http.StatusBadRequest, msgMFAOther)
		}),
	},
	{
		ID:      "MFA-006",
		Source:  SourceDocument,
		Section: sectionMFA + "; §5 rule 8",
		Name:    "auth-refresh needs no second factor",
		Text: "With MFA on, auth-refresh with the token of a completed password + OTP sign-in answers 200 " +
			"with the §2.6 result for that user, not 401 with an mfaId.",
		Run: withOTPUser(true, func(ctx context.Context, c *Client, o *otpUser) error {
			tok, err := c.mfaSignIn(ctx, o)
			if err != nil {
				return err
			}
			return expectRefreshOK(ctx, c, "users", tok, o.u.id)
		}),
	},
	{
		ID:      "MFA-007",
		Source:  SourcePocketBase,
		Section: "§5 rule 6; PocketBase v0.31.0 (mfa.rule: MFA only for the records it matches)",
		Name:    "mfa.rule limits MFA to the records it matches",
		Text: "With otp.enabled, mfa.enabled and mfa.rule `email = \"<A's email>\"` on users, auth-with-password " +
			"of user A answers 401 with an mfaId and no token, and of user B 200 with the §2.6 result: the rule " +
			"decides who needs a second factor.",
		Run: func(ctx context.Context, c *Client) error {
			a, err := c.newUser(ctx)
			if err != nil {
				return err
			}
			b, err := c.newUser(ctx)
			if err != nil {
				return err
			}
			rule := `email = "` + a.email + `"`
			if _, err := c.setAuthOptionsRule(ctx, "users", true, true, &rule); err != nil {
				return err
			}
			if _, err := firstFactor(ctx, c, a); err != nil {
				return fmt.Errorf("user A, whom the rule matches: %w", err)
			}
			r, err := passwordLogin(ctx, c, "", b.email, b.password)
			if err != nil {
				return err
			}
			if err := checkAuthResult(r, "users", b.id, b.email); err != nil {
				return fmt.Errorf("user B, whom the rule does not match: %w", err)
			}
			return nil
		},
	},
	mfaRuleRefused("MFA-008", SourcePocketBase, "§5 rule 5 (methods enabled per auth collection); PocketBase v0.31.0 (mfa.rule is a filter expression, validated on save)",
		"a malformed mfa.rule is refused", "a malformed rule (`email = `)", "email = "),
	mfaRuleRefused("MFA-009", SourceStrongbox, "§5 rule 5; issue 11 (a rule may not read secrets: stricter than PocketBase, which accepts it)",
		"an mfa.rule naming the password is refused", "a rule naming the hidden field password (`password = \"x\"`)", `password = "x"`),
}

// otpUser is the fixture of an OTP check: the sink the server mails
// (mail.go), the options of users with OTP on, and a new user.
type otpUser struct {
	sink *smtpSink
	opts *authOptions
	u    *user
}

// withOTPUser is the Run of an OTP check (an MFA check when mfa is set): it
// points the server's mail at a sink, turns OTP on for users (MFA too when
// mfa is set), creates a user, and runs f.
func withOTPUser(mfa bool, f func(ctx context.Context, c *Client, o *otpUser) error) func(context.Context, *Client) error {
	return withMailbox(func(ctx context.Context, c *Client, sink *smtpSink) error {
		opts, err := c.setAuthOptions(ctx, "users", true, mfa)
		if err != nil {
			return err
		}
		return withUser(func(ctx context.Context, c *Client, u *user) error {
			return f(ctx, c, &otpUser{sink: sink, opts: opts, u: u})
		})(ctx, c)
	})
}

// withOTPCode is withOTPUser (OTP only) for a check that starts with an
// OTP requested for the user: f gets its otpId and the mailed code.
func withOTPCode(f func(ctx context.Context, c *Client, o *otpUser, id, code string) error) func(context.Context, *Client) error {
	return withOTPUser(false, func(ctx context.Context, c *Client, o *otpUser) error {
		id, code, err := c.otpFor(ctx, o, o.u.email)
		if err != nil {
			return err
		}
		return f(ctx, c, o, id, code)
	})
}

// withMFAUser is the Run of an MFA check that reads no mail: it turns OTP
// and MFA on for users, creates a user, and runs f.
func withMFAUser(f func(ctx context.Context, c *Client, u *user) error) func(context.Context, *Client) error {
	return func(ctx context.Context, c *Client) error {
		if _, err := c.setAuthOptions(ctx, "users", true, true); err != nil {
			return err
		}
		return withUser(f)(ctx, c)
	}
}

// requestOTP sends request-otp for email and requires 200 with exactly
// {"otpId": <non-empty string>}.
func requestOTP(ctx context.Context, c *Client, email string) (string, error) {
	r, err := c.post(ctx, "/api/collections/users/request-otp", "", map[string]string{"email": email})
	if err != nil {
		return "", err
	}
	return onlyStringKey(r, http.StatusOK, "otpId")
}

// onlyStringKey requires status and a body of exactly {key: <non-empty
// string>}, and returns the string.
func onlyStringKey(r *response, status int, key string) (string, error) {
	want := fmt.Sprintf("%d with exactly {%q: <non-empty string>}", status, key)
	if r.status != status {
		return "", Mismatch(want, r.String())
	}
	keys, err := objectKeys(r.body)
	m, _ := object(r)
	v, _ := getString(m, key)
	if err != nil || !sameKeys(keys, key) || v == "" {
		return "", Mismatch(want, r.String())
	}
	return v, nil
}

// stringKeyWithoutToken requires status and a JSON object holding key as
// a non-empty string, and no token; other keys may be there.
func stringKeyWithoutToken(r *response, status int, key string) (string, error) {
	want := fmt.Sprintf("%d with an object holding %q (a non-empty string) and no token", status, key)
	if r.status != status {
		return "", Mismatch(want, r.String())
	}
	m, err := object(r)
	if err != nil {
		return "", Mismatch(want, r.String())
	}
	v, _ := getString(m, key)
	if _, token := m["token"]; v == "" || token {
		return "", Mismatch(want, r.String())
	}
	return v, nil
}

// otpFor requests an OTP for email and reads its code from the mail the
// fixture's sink receives.
func (c *Client) otpFor(ctx context.Context, o *otpUser, email string) (id, code string, err error) {
	id, err = requestOTP(ctx, c, email)
	if err != nil {
		return "", "", err
	}
	m, err := awaitMail(ctx, o.sink, email, "the OTP mail")
	if err != nil {
		return "", "", err
	}
	code, err = mailCode(m, o.opts.otpLength)
	if err != nil {
		return "", "", err
	}
	return id, code, nil
}

// otpSignIn requests an OTP for the fixture's user and answers
// auth-with-otp with the mailed code, returning the answer, the otpId and
// the code.
func (c *Client) otpSignIn(ctx context.Context, o *otpUser) (r *response, id, code string, err error) {
	id, code, err = c.otpFor(ctx, o, o.u.email)
	if err != nil {
		return nil, "", "", err
	}
	r, err = authWithOTP(ctx, c, "", id, code)
	return r, id, code, err
}

// authWithOTP posts auth-with-otp to users, with ?mfaId= when mfaID is set.
func authWithOTP(ctx context.Context, c *Client, mfaID, otpID, code string) (*response, error) {
	return c.post(ctx, withQuery("/api/collections/users/auth-with-otp", mfaQuery(mfaID)), "",
		map[string]string{"otpId": otpID, "password": code})
}

// authWithOTPFrom posts auth-with-otp to users as a client at address
// addr (see trustClientHeader).
func authWithOTPFrom(ctx context.Context, c *Client, addr, otpID, code string) (*response, error) {
	return c.doWith(ctx, http.MethodPost, "/api/collections/users/auth-with-otp",
		http.Header{clientAddrHeader: {addr}}, map[string]string{"otpId": otpID, "password": code})
}

// passwordLogin posts auth-with-password to users, with ?mfaId= when
// mfaID is set.
func passwordLogin(ctx context.Context, c *Client, mfaID, identity, password string) (*response, error) {
	return c.post(ctx, withQuery("/api/collections/users/auth-with-password", mfaQuery(mfaID)), "",
		map[string]string{"identity": identity, "password": password})
}

// mfaQuery is the query of a second factor: mfaId, when set.
func mfaQuery(mfaID string) url.Values {
	if mfaID == "" {
		return nil
	}
	return query("mfaId", mfaID)
}

// firstFactor signs u in with its password on an MFA collection and
// requires 401 with a body holding mfaId and no token (exactly {"mfaId"}
// under PocketBase's reading); it returns the id.
func firstFactor(ctx context.Context, c *Client, u *user) (string, error) {
	r, err := passwordLogin(ctx, c, "", u.email, u.password)
	if err != nil {
		return "", err
	}
	// §5.6: the body contains mfaId; PocketBase's holds nothing else.
	id, err := stringKeyWithoutToken(r, http.StatusUnauthorized, "mfaId")
	if c.strict() {
		id, err = onlyStringKey(r, http.StatusUnauthorized, "mfaId")
	}
	if err != nil {
		return "", fmt.Errorf("password as first factor: %w", err)
	}
	return id, nil
}

// mfaSignIn signs the fixture's user in with its password, then its mailed OTP and the
// mfaId, requires the §2.6 result and returns its token.
func (c *Client) mfaSignIn(ctx context.Context, o *otpUser) (string, error) {
	u := o.u
	mfaID, err := firstFactor(ctx, c, u)
	if err != nil {
		return "", err
	}
	id, code, err := c.otpFor(ctx, o, u.email)
	if err != nil {
		return "", err
	}
	r, err := authWithOTP(ctx, c, mfaID, id, code)
	if err != nil {
		return "", err
	}
	if err := checkAuthResult(r, "users", u.id, u.email); err != nil {
		return "", fmt.Errorf("OTP as second factor: %w", err)
	}
	res, _ := parseAuthResult(r)
	return res.token, nil
}

// otherCode returns a code of the same length that differs from code in
// its last digit.
func otherCode(code string) string {
	if code == "" {
		return "0"
	}
	last := code[len(code)-1]
	return code[:len(code)-1] + string(rune('0'+(last-'0'+1)%10))
}

// mfaRuleRefused builds the requirement that PATCH /api/collections/users
// refuses mfa.rule rule (described by what) with validation_invalid_rule,
// changing nothing.
func mfaRuleRefused(id string, source Source, section, name, what, rule string) *Requirement {
	return &Requirement{
		ID:      id,
		Source:  source,
		Section: section,
		Name:    name,
		Text: "PATCH /api/collections/users with otp {enabled: true} and mfa {enabled: true, rule} answers 400 \"" +
			msgCollUpdate + "\" with data.mfa.rule.code validation_invalid_rule for " + what +
			", and the collection's otp and mfa stay as they were.",
		Run: func(ctx context.Context, c *Client) error {
			before, err := getCollectionJSON(ctx, c, "users")
			if err != nil {
				return err
			}
			origOTP, ok1 := getObject(before, "otp")
			orig, ok2 := getObject(before, "mfa")
			if !ok1 || !ok2 {
				return Skipf("GET /api/collections/users shows no otp and mfa objects")
			}
			// With OTP on, MFA has the two methods it needs, so that the
			// rule is what the server judges (PocketBase checks it only
			// when MFA is on).
			body := map[string]any{"otp": map[string]any{"enabled": true}, "mfa": map[string]any{"enabled": true, "rule": rule}}
			r, err := c.do(ctx, http.MethodPatch, "/api/collections/users", c.su, body)
			if err != nil {
				return err
			}
			if r.status == http.StatusOK {
				c.Cleanup("restore the otp and mfa options of users", func(ctx context.Context) error {
					return c.patchCollection(ctx, "users", map[string]any{"otp": origOTP, "mfa": orig})
				})
			}
			env, err := expectError(r, http.StatusBadRequest, msgCollUpdate)
			if err != nil {
				return err
			}
			m, _ := getObject(env.data, "mfa")
			fe, _ := getObject(m, "rule")
			if code, _ := getString(fe, "code"); code != "validation_invalid_rule" {
				return Mismatch("data.mfa.rule.code validation_invalid_rule", r.String())
			}
			after, err := getCollectionJSON(ctx, c, "users")
			if err != nil {
				return err
			}
			if jsonText(after["mfa"]) != jsonText(orig) || jsonText(after["otp"]) != jsonText(origOTP) {
				return Mismatch("otp and mfa unchanged: "+jsonText(origOTP)+", "+jsonText(orig),
					jsonText(after["otp"])+", "+jsonText(after["mfa"]))
			}
			return nil
		},
	}
}
