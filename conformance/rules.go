package conformance

import (
	"context"
	"fmt"
	"net/http"
)

// API rules of auth collections (issue 19). The records API is one of the
// areas §1 says exist but whose contract is "not shown", so these follow
// PocketBase v0.31.0: every rule is a filter over the record and the
// request; a list shows what its rule lets through (never 403 for a rule
// that is not null), a view, update or delete the rule denies is 404, a
// create it denies is 400 "Failed to create record.", an authRule that
// denies a sign-in is 403 for every method and is judged before MFA, and
// a record matching the manageRule changes another's email, password and
// verified without its old password. Each check creates an auth
// collection of its own with the rule under test (rules_fixtures.go).

const (
	msgAuthRule     = "The request doesn't satisfy the collection requirements to authenticate."
	msgUpdateFailed = "Failed to update record."
)

const sectionRules = "§1 (records: contract not shown); issue 19; PocketBase v0.31.0 (API rules are filters over the record and the request: "

// ruleReq builds a requirement of the rules: its section names what
// PocketBase does.
func ruleReq(id, what, name, text string, run func(context.Context, *Client) error) *Requirement {
	return pocketbaseReq(id, sectionRules+what+")", name, text, run)
}

// pocketbaseReq builds a requirement whose source is PocketBase v0.31.0.
func pocketbaseReq(id, section, name, text string, run func(context.Context, *Client) error) *Requirement {
	return &Requirement{ID: id, Source: SourcePocketBase, Section: section, Name: name, Text: text, Run: run}
}

var ruleRequirements = []*Requirement{
	ruleReq("RULE-LIST-001", "a list shows only the records its rule lets through, no 403",
		"listRule filters the list",
		"On an auth collection with listRule `verified = true || id = @request.auth.id` holding a verified record A "+
			"and unverified records B and C: a guest's GET of its records answers 200 listing exactly A "+
			"(totalItems 1), and B, signed in, gets 200 listing exactly A and B; never 403.",
		withRuleCollection(map[string]any{"listRule": "verified = true || id = @request.auth.id"}, []bool{true, false, false},
			checkListRule)),
	ruleReq("RULE-VIEW-001", "a view the rule denies is not found",
		"viewRule denial is 404",
		"On an auth collection with viewRule `verified = true`, a guest's GET of an unverified record answers 404 \""+
			msgNotFound+"\" and of a verified one 200 with that record.",
		withRuleCollection(map[string]any{"viewRule": "verified = true"}, []bool{true, false},
			func(ctx context.Context, c *Client, fx *ruleFixture) error {
				if err := expectDenied(ctx, c, http.MethodGet, fx.recordsPath(fx.recs[1].id), nil, nil); err != nil {
					return err
				}
				return expectRecordOK(ctx, c, http.MethodGet, fx.recordsPath(fx.recs[0].id), nil, nil, fx.recs[0])
			})),
	ruleReq("RULE-UPDATE-001", "an update the rule denies is not found",
		"updateRule denial is 404",
		"On an auth collection with viewRule \"\" and updateRule `verified = true`, a guest's PATCH {\"emailVisibility\":true} "+
			"of an unverified record answers 404 \""+msgNotFound+"\" and changes nothing (a superuser still reads "+
			"emailVisibility false); the same PATCH of a verified record answers 200.",
		withRuleCollection(map[string]any{"viewRule": "", "updateRule": "verified = true"}, []bool{true, false}, checkUpdateRule)),
	ruleReq("RULE-DELETE-001", "a delete the rule denies is not found",
		"deleteRule denial is 404",
		"On an auth collection with deleteRule `verified = true`, a guest's DELETE of an unverified record answers 404 \""+
			msgNotFound+"\" and the record stays (a superuser's GET answers 200); the DELETE of a verified record answers 204.",
		withRuleCollection(map[string]any{"deleteRule": "verified = true"}, []bool{true, false}, checkDeleteRule)),
	ruleReq("RULE-CREATE-001", "a create the rule denies is 400 \"Failed to create record.\"",
		"createRule denial is 400",
		"On an auth collection with createRule `@request.auth.id != \"\"`, a guest's valid create answers 400 \""+
			msgCreateFailed+"\" with data {} and creates nothing; the same create by a signed-in user of users answers 200.",
		withRuleCollection(map[string]any{"createRule": `@request.auth.id != ""`}, nil, checkCreateRule)),
	ruleReq("RULE-AUTH-001", "an authRule that denies a sign-in is 403",
		"authRule denies a password sign-in",
		"On an auth collection with authRule `verified = true`, auth-with-password of an unverified record with its "+
			"right password answers 403 \""+msgAuthRule+"\" with data {}; a verified record signs in (200).",
		withRuleCollection(map[string]any{"authRule": "verified = true"}, []bool{true, false},
			func(ctx context.Context, c *Client, fx *ruleFixture) error {
				return expectAuthRule(ctx, c, fx, fx.recs[1], fx.recs[0], http.StatusOK)
			})),
	ruleReq("RULE-AUTH-002", "an authRule that denies a sign-in is 403, for OTP too",
		"authRule denies an OTP sign-in",
		"On an auth collection with OTP on and authRule `emailVisibility = true`, auth-with-otp of a record without "+
			"emailVisibility, with the code mailed to it, answers 403 \""+msgAuthRule+"\" with data {}; a record with "+
			"emailVisibility true signs in with its mailed code (200).",
		withMailbox(checkOTPAuthRule)),
	ruleReq("RULE-AUTH-003", "the authRule is judged before MFA",
		"authRule judged before MFA",
		"On an auth collection with OTP and MFA on and authRule `verified = true`, auth-with-password of an unverified "+
			"record with its right password answers 403 \""+msgAuthRule+"\" (no mfaId); a verified record gets MFA's 401 "+
			"with an mfaId.",
		withRuleCollection(map[string]any{"authRule": "verified = true", "otp": map[string]any{"enabled": true},
			"mfa": map[string]any{"enabled": true}}, []bool{true, false},
			func(ctx context.Context, c *Client, fx *ruleFixture) error {
				return expectAuthRule(ctx, c, fx, fx.recs[1], fx.recs[0], http.StatusUnauthorized)
			})),
	ruleReq("RULE-MANAGE-001", "a record the manageRule matches changes another's email, password and verified",
		"manageRule lets a manager change credentials",
		"On an auth collection with updateRule `@request.auth.id != \"\"` and manageRule `@request.auth.collectionName = "+
			"\"users\"`: a record of the collection itself PATCHing another's password without oldPassword answers 400 \""+
			msgUpdateFailed+"\" with data.oldPassword code \""+codeRequired+"\"; a signed-in user of users PATCHing its "+
			"email, password (and passwordConfirm) and verified true, without oldPassword, answers 200 with the new email "+
			"and verified true, and the record then signs in with the new email and password.",
		withRuleCollection(map[string]any{"updateRule": `@request.auth.id != ""`,
			"manageRule": `@request.auth.collectionName = "users"`}, []bool{false, false}, checkManageRule)),
	ruleReq("RULE-HEADER-001", "@request.headers.* are the request's headers, lowercase with - as _",
		"a rule reads a request header",
		"On an auth collection with listRule `@request.headers.x_cf_key = \"<nonce>\"` holding one record, a guest's "+
			"list without that header answers 200 with no items (totalItems 0), and with the header X-Cf-Key: <nonce> "+
			"200 listing the record.",
		withOperandRule("listRule", `@request.headers.x_cf_key = "%s"`, func(ctx context.Context, c *Client, fx *ruleFixture, nonce string) error {
			if err := c.expectIDs(ctx, fx.recordsPath(), nil, "a guest without the header"); err != nil {
				return err
			}
			return c.expectIDs(ctx, fx.recordsPath(), http.Header{"X-Cf-Key": {nonce}}, "a guest with the header", fx.recs[0])
		})),
	ruleReq("RULE-QUERY-001", "@request.query.* are the query parameters",
		"a rule reads a query parameter",
		"On an auth collection with viewRule `@request.query.cf = \"<nonce>\"`, a guest's GET of a record answers 404 \""+
			msgNotFound+"\" without ?cf=<nonce> and 200 with the record with it.",
		withOperandRule("viewRule", `@request.query.cf = "%s"`, func(ctx context.Context, c *Client, fx *ruleFixture, nonce string) error {
			path := fx.recordsPath(fx.recs[0].id)
			if err := expectDenied(ctx, c, http.MethodGet, path, nil, nil); err != nil {
				return err
			}
			return expectRecordOK(ctx, c, http.MethodGet, withQuery(path, query("cf", nonce)), nil, nil, fx.recs[0])
		})),
	ruleReq("RULE-BODY-001", "@request.body.* are the submitted fields",
		"a rule reads the submitted body",
		"On an auth collection with createRule `@request.body.emailVisibility = true`, a guest's valid create without "+
			"emailVisibility answers 400 \""+msgCreateFailed+"\" with data {} and creates nothing; with emailVisibility "+
			"true it answers 200.",
		withRuleCollection(map[string]any{"createRule": "@request.body.emailVisibility = true"}, nil,
			func(ctx context.Context, c *Client, fx *ruleFixture) error {
				body := signUpBody(newEmail(), "Cf-"+newNonce(16))
				if err := expectCreateDenied(ctx, c, fx, nil, body); err != nil {
					return err
				}
				body["emailVisibility"] = true
				return expectCreated(ctx, c, fx, nil, body)
			})),

	// hidden values (issue 29; rules_hidden.go)
	ruleHiddenReq("RULE-FILTER-001", "a non-superuser's filter comparison naming email holds only where emailVisibility is true",
		"filters find no hidden email",
		"On an auth collection with listRule \"\" holding record A (emailVisibility false) and B (emailVisibility true): "+
			"a guest's list with filter `email = \"<A's email>\"`, `email ~ \"<A's first 9 characters>%\"`, "+
			"`email ?= \"<A's email>\"` or `email = \"\"` answers 200 with no items (totalItems 0), and with "+
			"`email != \"x\"`, `email > \"\"` or `email !~ \"zzz\"` 200 listing exactly B (totalItems 1); A signed in "+
			"gets the same answers, its own email included; a superuser's `email = \"<A's email>\"` lists exactly A and "+
			"`email != \"x\"` exactly A and B.",
		withRuleHiddenCollection(map[string]any{"listRule": ""}, []map[string]any{{"emailVisibility": false}, {"emailVisibility": true}},
			checkEmailFilters)),
	ruleHiddenReq("RULE-FILTER-002", "hidden fields are filterable by superusers only",
		"superusers filter by hidden fields",
		"On an auth collection with listRule \"\" and a hidden text field cfrole holding A (cfrole \"admin\") and B "+
			"(cfrole \"member\"): a superuser's list with filter `cfrole = \"admin\"` answers 200 listing exactly A; the "+
			"same list by a guest and by A signed in answers 400 \""+msgGenericBad+"\".",
		withRuleHiddenCollection(map[string]any{"listRule": ""}, []map[string]any{{"cfrole": "admin"}, {"cfrole": "member"}},
			checkHiddenFieldFilter)),
	ruleHiddenReq("RULE-HIDDEN-001", "rules read the hidden fields of @request.auth",
		"a rule reads a hidden field of the signed-in record",
		"On an auth collection with a hidden bool field cfbanned, viewRule \"\" and updateRule "+
			"`id = @request.auth.id && @request.auth.cfbanned != true`: a record with cfbanned true, signed in, "+
			"PATCHing its own {\"emailVisibility\":true} answers 404 \""+msgNotFound+"\" and changes nothing (a "+
			"superuser still reads emailVisibility false); a record with cfbanned false doing the same answers 200.",
		withRuleHiddenCollection(map[string]any{"viewRule": "", "updateRule": "id = @request.auth.id && @request.auth.cfbanned != true"},
			[]map[string]any{{"cfbanned": false}, {"cfbanned": true}}, checkHiddenAuthUpdate)),
	ruleHiddenReq("RULE-HIDDEN-002", "rules read the hidden fields of @request.auth",
		"a rule matches a hidden role of the signed-in record",
		"On an auth collection with a hidden text field cfrole and listRule `@request.auth.cfrole = \"admin\"` holding A "+
			"(cfrole \"admin\") and B (cfrole \"member\"): A signed in lists exactly A and B (200, totalItems 2); B "+
			"signed in and a guest get 200 with no items (totalItems 0).",
		withRuleHiddenCollection(map[string]any{"listRule": `@request.auth.cfrole = "admin"`},
			[]map[string]any{{"cfrole": "admin"}, {"cfrole": "member"}}, checkHiddenAuthList)),
	ruleHiddenReq("RULE-HIDDEN-003", "a rule may name the record's own hidden fields",
		"a rule reads the record's own hidden field",
		"On an auth collection with a hidden bool field cfbanned, a superuser's PATCH of viewRule `cfbanned = false` "+
			"answers 200; then a guest's GET of a record with cfbanned true answers 404 \""+msgNotFound+"\" and of one "+
			"with cfbanned false 200 with that record.",
		withRuleHiddenCollection(nil, []map[string]any{{"cfbanned": false}, {"cfbanned": true}}, checkOwnHiddenRule)),
	{ID: "RULE-SORT-001", Source: SourceStrongbox,
		Section: "§1 (records: contract not shown); issue 29; strongbox (for anyone but a superuser a hidden email sorts " +
			"as \"\"; PocketBase sorts by it, which tells the hidden emails' order)",
		Name: "sorting tells nothing of hidden emails",
		Text: "On an auth collection with listRule \"\" holding A and C (emailVisibility false) and B (emailVisibility " +
			"true): a guest's list with sort=email answers 200 with B last, with sort=-email 200 with B first, and A and C " +
			"in the same order both times.",
		Run: withRuleHiddenCollection(map[string]any{"listRule": ""},
			[]map[string]any{{"emailVisibility": false}, {"emailVisibility": true}, {"emailVisibility": false}}, checkEmailSort)},
}

// withOperandRule is the Run of a check of an operand: it creates an auth
// collection whose rule (a key such as listRule) is format with a new
// nonce, and one record, and runs f with the nonce.
func withOperandRule(rule, format string, f func(ctx context.Context, c *Client, fx *ruleFixture, nonce string) error) func(context.Context, *Client) error {
	return func(ctx context.Context, c *Client) error {
		nonce := newNonce(12)
		opts := map[string]any{rule: fmt.Sprintf(format, nonce)}
		return withRuleCollection(opts, []bool{false}, func(ctx context.Context, c *Client, fx *ruleFixture) error {
			return f(ctx, c, fx, nonce)
		})(ctx, c)
	}
}

func checkListRule(ctx context.Context, c *Client, fx *ruleFixture) error {
	a, b := fx.recs[0], fx.recs[1]
	if err := c.expectIDs(ctx, fx.recordsPath(), nil, "a guest", a); err != nil {
		return err
	}
	res, err := c.login(ctx, fx.coll, b.email, b.password)
	if err != nil {
		return err
	}
	return c.expectIDs(ctx, fx.recordsPath(), authHeader(res.token), "the unverified record B signed in", a, b)
}

// expectDenied sends method path with hdr and body and requires 404
// msgNotFound.
func expectDenied(ctx context.Context, c *Client, method, path string, hdr http.Header, body any) error {
	r, err := c.doWith(ctx, method, path, hdr, body)
	if err != nil {
		return err
	}
	if _, err := expectExactError(r, http.StatusNotFound, msgNotFound); err != nil {
		return fmt.Errorf("%s %s (denied by the rule): %w", method, redactPath(path), err)
	}
	return nil
}

// expectRecordOK sends method path with hdr and body and requires 200 with
// the record u.
func expectRecordOK(ctx context.Context, c *Client, method, path string, hdr http.Header, body any, u *user) error {
	r, err := c.doWith(ctx, method, path, hdr, body)
	if err != nil {
		return err
	}
	m, err := okObject(r)
	if err == nil {
		if id, _ := getString(m, "id"); id != u.id {
			err = Mismatch("the record "+u.id, r.String())
		}
	}
	if err != nil {
		return fmt.Errorf("%s %s (allowed by the rule): %w", method, redactPath(path), err)
	}
	return nil
}

func checkUpdateRule(ctx context.Context, c *Client, fx *ruleFixture) error {
	body := map[string]any{"emailVisibility": true}
	if err := expectDenied(ctx, c, http.MethodPatch, fx.recordsPath(fx.recs[1].id), nil, body); err != nil {
		return err
	}
	r, m, err := c.getOK(ctx, fx.recordsPath(fx.recs[1].id), c.su)
	if err != nil {
		return err
	}
	if v, _ := getBool(m, "emailVisibility"); v {
		return Mismatch("emailVisibility still false after the denied PATCH", r.String())
	}
	return expectRecordOK(ctx, c, http.MethodPatch, fx.recordsPath(fx.recs[0].id), nil, body, fx.recs[0])
}

func checkDeleteRule(ctx context.Context, c *Client, fx *ruleFixture) error {
	if err := expectDenied(ctx, c, http.MethodDelete, fx.recordsPath(fx.recs[1].id), nil, nil); err != nil {
		return err
	}
	r, err := c.get(ctx, fx.recordsPath(fx.recs[1].id), c.su)
	if err != nil {
		return err
	}
	if err := expectStatus(r, http.StatusOK); err != nil {
		return fmt.Errorf("the record after the denied DELETE: %w", err)
	}
	r, err = c.do(ctx, http.MethodDelete, fx.recordsPath(fx.recs[0].id), "", nil)
	if err != nil {
		return err
	}
	if err := expectStatus(r, http.StatusNoContent); err != nil {
		return fmt.Errorf("DELETE allowed by the rule: %w", err)
	}
	return nil
}

func checkCreateRule(ctx context.Context, c *Client, fx *ruleFixture) error {
	body := signUpBody(newEmail(), "Cf-"+newNonce(16))
	if err := expectCreateDenied(ctx, c, fx, nil, body); err != nil {
		return err
	}
	_, tok, err := c.newUserToken(ctx)
	if err != nil {
		return err
	}
	return expectCreated(ctx, c, fx, authHeader(tok), body)
}

// expectCreateDenied posts body to the fixture's records with hdr and
// requires 400 msgCreateFailed with data {}, and that nothing was created.
func expectCreateDenied(ctx context.Context, c *Client, fx *ruleFixture, hdr http.Header, body map[string]any) error {
	r, err := c.doWith(ctx, http.MethodPost, fx.recordsPath(), hdr, body)
	if err != nil {
		return err
	}
	c.cleanupRecordCreated(fx, r)
	if _, err := expectExactError(r, http.StatusBadRequest, msgCreateFailed); err != nil {
		return fmt.Errorf("create denied by the rule: %w", err)
	}
	if err := expectErrorEmptyData(r, http.StatusBadRequest, msgCreateFailed); err != nil {
		return fmt.Errorf("create denied by the rule: %w", err)
	}
	return c.expectIDs(ctx, fx.recordsPath(), authHeader(c.su), "the superuser, after the denied create", fx.recs...)
}

// expectCreated posts body to the fixture's records with hdr and requires
// 200 with a record.
func expectCreated(ctx context.Context, c *Client, fx *ruleFixture, hdr http.Header, body map[string]any) error {
	r, err := c.doWith(ctx, http.MethodPost, fx.recordsPath(), hdr, body)
	if err != nil {
		return err
	}
	c.cleanupRecordCreated(fx, r)
	m, err := okObject(r)
	if err == nil {
		err = expectRecord(r, m, fx.coll)
	}
	if err != nil {
		return fmt.Errorf("create allowed by the rule: %w", err)
	}
	return nil
}

// cleanupRecordCreated registers the deletion of the record r created in
// the fixture's collection, if r is a 200 with an id.
func (c *Client) cleanupRecordCreated(fx *ruleFixture, r *response) {
	m, err := object(r)
	if r.status != http.StatusOK || err != nil {
		return
	}
	if id, _ := getString(m, "id"); id != "" {
		c.Cleanup("delete record "+id, func(ctx context.Context) error { return c.deleteIfThere(ctx, fx.recordsPath(id)) })
	}
}

// expectAuthRule requires the password sign-in of denied into the
// fixture's collection to answer 403 msgAuthRule with data {}, and that of
// allowed to answer allowedStatus (200, or MFA's 401).
func expectAuthRule(ctx context.Context, c *Client, fx *ruleFixture, denied, allowed *user, allowedStatus int) error {
	path := "/api/collections/" + seg(fx.coll) + "/auth-with-password"
	r, err := c.post(ctx, path, "", map[string]string{"identity": denied.email, "password": denied.password})
	if err != nil {
		return err
	}
	if _, err := expectExactError(r, http.StatusForbidden, msgAuthRule); err != nil {
		return fmt.Errorf("sign-in the authRule denies: %w", err)
	}
	if err := expectErrorEmptyData(r, http.StatusForbidden, msgAuthRule); err != nil {
		return fmt.Errorf("sign-in the authRule denies: %w", err)
	}
	r, err = c.post(ctx, path, "", map[string]string{"identity": allowed.email, "password": allowed.password})
	if err != nil {
		return err
	}
	if allowedStatus == http.StatusUnauthorized {
		_, err = stringKeyWithoutToken(r, allowedStatus, "mfaId")
	} else {
		_, err = parseAuthResult(r)
	}
	if err != nil {
		return fmt.Errorf("sign-in the authRule allows: %w", err)
	}
	return nil
}

func checkOTPAuthRule(ctx context.Context, c *Client, sink *smtpSink) error {
	opts := map[string]any{"authRule": "emailVisibility = true", "otp": map[string]any{"enabled": true}}
	return withRuleCollection(opts, nil, func(ctx context.Context, c *Client, fx *ruleFixture) error {
		for _, visible := range []bool{false, true} {
			u, err := c.addRecord(ctx, fx.coll, map[string]any{"emailVisibility": visible})
			if err != nil {
				return err
			}
			id, code, err := c.otpOf(ctx, sink, fx.coll, u.email)
			if err != nil {
				return err
			}
			r, err := c.post(ctx, "/api/collections/"+seg(fx.coll)+"/auth-with-otp", "",
				map[string]string{"otpId": id, "password": code})
			if err != nil {
				return err
			}
			if visible {
				if _, err := parseAuthResult(r); err != nil {
					return fmt.Errorf("OTP sign-in the authRule allows: %w", err)
				}
				continue
			}
			if err := expectErrorEmptyData(r, http.StatusForbidden, msgAuthRule); err != nil {
				return fmt.Errorf("OTP sign-in the authRule denies: %w", err)
			}
			if _, err := expectExactError(r, http.StatusForbidden, msgAuthRule); err != nil {
				return fmt.Errorf("OTP sign-in the authRule denies: %w", err)
			}
		}
		return nil
	})(ctx, c)
}

// otpOf requests an OTP for email in coll and reads the code (of the
// collection's otp.length digits, 8 when not shown) from the mail sink
// receives.
func (c *Client) otpOf(ctx context.Context, sink *smtpSink, coll, email string) (id, code string, err error) {
	length := 8
	if m, err := getCollectionJSON(ctx, c, coll); err == nil {
		otp, _ := getObject(m, "otp")
		if n, ok := getNumber(otp, "length"); ok && n > 0 {
			length = int(n)
		}
	}
	r, err := c.post(ctx, "/api/collections/"+seg(coll)+"/request-otp", "", map[string]string{"email": email})
	if err != nil {
		return "", "", err
	}
	if id, err = onlyStringKey(r, http.StatusOK, "otpId"); err != nil {
		return "", "", fmt.Errorf("request-otp: %w", err)
	}
	m, err := awaitMail(ctx, sink, email, "the OTP mail")
	if err != nil {
		return "", "", err
	}
	code, err = mailCode(m, length)
	return id, code, err
}

func checkManageRule(ctx context.Context, c *Client, fx *ruleFixture) error {
	target, other := fx.recs[0], fx.recs[1]
	res, err := c.login(ctx, fx.coll, other.email, other.password)
	if err != nil {
		return err
	}
	pw := "Cf-" + newNonce(16)
	r, err := c.do(ctx, http.MethodPatch, fx.recordsPath(target.id), res.token, map[string]any{"password": pw, "passwordConfirm": pw})
	if err != nil {
		return err
	}
	env, err := expectExactError(r, http.StatusBadRequest, msgUpdateFailed)
	if err == nil {
		err = expectFieldCodes(r, env, codeRequired, "oldPassword")
	}
	if err != nil {
		return fmt.Errorf("a record the manageRule does not match, changing another's password: %w", err)
	}
	_, tok, err := c.newUserToken(ctx)
	if err != nil {
		return err
	}
	email := newEmail()
	r, err = c.do(ctx, http.MethodPatch, fx.recordsPath(target.id), tok,
		map[string]any{"email": email, "password": pw, "passwordConfirm": pw, "verified": true})
	if err != nil {
		return err
	}
	m, err := okObject(r)
	if err != nil {
		return fmt.Errorf("the manager's PATCH: %w", err)
	}
	if v, _ := getBool(m, "verified"); !v || m["email"] != email {
		return Mismatch(fmt.Sprintf("the record with email %q and verified true", email), r.String())
	}
	if _, err := c.login(ctx, fx.coll, email, pw); err != nil {
		return Mismatch("a sign-in with the email and password the manager set", err.Error())
	}
	return nil
}
