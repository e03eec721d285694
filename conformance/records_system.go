package conformance

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// The auth system collections through the records API (issue 19): what a
// server keeps of sign-ins (_authOrigins), MFA challenges (_mfas) and OTPs
// (_otps), listed, viewed and deleted by superusers under PocketBase
// v0.31.0's field names, and _authOrigins by the record it belongs to, as
// PocketBase's rules for these collections allow. Never the OTP's code, its
// hash or the address it was sent to (hidden fields).

const sectionSystemRecords = "§1 (records: contract not shown); issue 19; PocketBase v0.31.0 (its system collections " +
	"_authOrigins, _mfas and _otps through the records API: "

// systemRecordKeys are the keys of a record of each system collection, as
// PocketBase answers them (hidden fields left out).
var systemRecordKeys = map[string][]string{
	"_authOrigins": {"id", "collectionId", "collectionName", "collectionRef", "recordRef", "fingerprint", "created", "updated"},
	"_mfas":        {"id", "collectionId", "collectionName", "collectionRef", "recordRef", "method", "created", "updated"},
	"_otps":        {"id", "collectionId", "collectionName", "collectionRef", "recordRef", "created", "updated"},
}

// systemRecordReq builds a requirement of the system collections' records:
// its section names what PocketBase does.
func systemRecordReq(id, what, name, text string, run func(context.Context, *Client) error) *Requirement {
	return pocketbaseReq(id, sectionSystemRecords+what+")", name, text, run)
}

var systemRecordRequirements = []*Requirement{
	systemRecordReq("SYSREC-001", "superusers list, view and delete _authOrigins",
		"_authOrigins for superusers",
		"After a user signs in with its password, a superuser's GET /api/collections/_authOrigins/records?filter=recordRef='<id>' "+
			"answers 200 listing one record with exactly the keys "+strings.Join(systemRecordKeys["_authOrigins"], ", ")+
			" (collectionName \"_authOrigins\", collectionRef the users collection's id, recordRef the user's id, a non-empty "+
			"fingerprint); GET …/records/{id} answers 200 with it, DELETE answers 204, and a GET afterwards 404 \""+msgNotFound+"\".",
		withUser(func(ctx context.Context, c *Client, u *user) error {
			if _, err := c.login(ctx, "users", u.email, u.password); err != nil {
				return err
			}
			return superuserSystemRecord(ctx, c, "_authOrigins", "recordRef = '"+u.id+"'", func(rec map[string]any) bool {
				fp, _ := getString(rec, "fingerprint")
				return rec["recordRef"] == u.id && rec["collectionRef"] == u.collectionID && fp != ""
			})
		})),
	systemRecordReq("SYSREC-002", "a record lists, views and deletes its own _authOrigins, and only those",
		"_authOrigins for the record they belong to",
		"A signed-in user's GET /api/collections/_authOrigins/records answers 200 listing only records whose recordRef is "+
			"its id (at least one); its GET of another user's _authOrigins record answers 404 \""+msgNotFound+"\"; a guest's "+
			"list answers 200 with no items; the user's DELETE of its own record answers 204.",
		checkOwnAuthOrigins),
	systemRecordReq("SYSREC-003", "superusers list, view and delete _mfas",
		"_mfas for superusers",
		"On an auth collection with OTP and MFA on, after a record's password sign-in answers 401 with an mfaId, a "+
			"superuser's GET /api/collections/_mfas/records?filter=id='<mfaId>' answers 200 listing one record with exactly "+
			"the keys "+strings.Join(systemRecordKeys["_mfas"], ", ")+" (collectionName \"_mfas\", collectionRef the "+
			"collection's id, recordRef the record's id, method \"password\"); GET …/records/{mfaId} answers 200 with it, "+
			"DELETE answers 204, and a GET afterwards 404 \""+msgNotFound+"\".",
		withRuleCollection(map[string]any{"otp": map[string]any{"enabled": true}, "mfa": map[string]any{"enabled": true}},
			[]bool{false}, checkSuperuserMFAs)),
	systemRecordReq("SYSREC-004", "superusers list, view and delete _otps, never seeing the code",
		"_otps for superusers, without the code",
		"On an auth collection with OTP on, after request-otp for a record, a superuser's GET "+
			"/api/collections/_otps/records?filter=id='<otpId>' answers 200 listing one record with exactly the keys "+
			strings.Join(systemRecordKeys["_otps"], ", ")+" (collectionName \"_otps\"), and at most the hidden fields "+
			"PocketBase shows superusers: password, always \"\", and sentTo, a string; the mailed code appears in no answer); GET …/records/{otpId} answers 200 with it, DELETE answers 204, and a GET "+
			"afterwards 404 \""+msgNotFound+"\".",
		withMailbox(checkSuperuserOTPs)),
}

// superuserSystemRecord lists the system collection coll as superuser with
// filter, requires exactly one record with the collection's keys that ok
// accepts, then views it (200, the same record), deletes it (204) and
// views it again (404). It returns the record.
func superuserSystemRecord(ctx context.Context, c *Client, coll, filter string, ok func(map[string]any) bool) error {
	path := "/api/collections/" + seg(coll) + "/records"
	r, m, err := c.getOK(ctx, withQuery(path, query("filter", filter)), c.su)
	if err != nil {
		return fmt.Errorf("the superuser's list: %w", err)
	}
	items, _ := getArray(m, "items")
	if len(items) != 1 {
		return Mismatch(fmt.Sprintf("one record of %s matching %s", coll, filter), r.String())
	}
	rec, _ := items[0].(map[string]any)
	if err := expectSystemRecord(r, rec, coll, ok); err != nil {
		return fmt.Errorf("the superuser's list: %w", err)
	}
	id, _ := getString(rec, "id")
	r, view, err := c.getOK(ctx, path+"/"+seg(id), c.su)
	if err != nil {
		return fmt.Errorf("the superuser's view: %w", err)
	}
	if err := expectSystemRecord(r, view, coll, func(v map[string]any) bool { return v["id"] == id && ok(v) }); err != nil {
		return fmt.Errorf("the superuser's view: %w", err)
	}
	return deleteSystemRecord(ctx, c, coll, id, c.su)
}

// expectSystemRecord requires rec to have exactly the keys of a record of
// coll (and, for _otps, at most the hidden fields PocketBase shows a
// superuser: password, always "", and sentTo), its collectionName, and to
// be accepted by ok.
func expectSystemRecord(r *response, rec map[string]any, coll string, ok func(map[string]any) bool) error {
	keys := systemRecordKeys[coll]
	got := maps.Clone(rec)
	if coll == "_otps" {
		pw, isString := got["password"].(string)
		_, sentTo := got["sentTo"].(string)
		if (got["password"] != nil && (!isString || pw != "")) || (got["sentTo"] != nil && !sentTo) {
			return Mismatch("an _otps record whose password, if shown, is \"\" and whose sentTo, if shown, is a string",
				jsonText(rec)+" in "+r.String())
		}
		delete(got, "password")
		delete(got, "sentTo")
	}
	if !sameKeys(mapKeys(got), keys...) || rec["collectionName"] != coll || !ok(rec) {
		return Mismatch(fmt.Sprintf("a record of %s with exactly the keys %s and the expected values", coll, strings.Join(keys, ", ")),
			jsonText(rec)+" in "+r.String())
	}
	return nil
}

// deleteSystemRecord deletes the record id of coll with auth (204), and
// requires a superuser's GET of it afterwards to answer 404.
func deleteSystemRecord(ctx context.Context, c *Client, coll, id, auth string) error {
	path := "/api/collections/" + seg(coll) + "/records/" + seg(id)
	r, err := c.do(ctx, http.MethodDelete, path, auth, nil)
	if err != nil {
		return err
	}
	if err := expectStatus(r, http.StatusNoContent); err != nil {
		return fmt.Errorf("DELETE %s: %w", redactPath(path), err)
	}
	r, err = c.get(ctx, path, c.su)
	if err != nil {
		return err
	}
	if _, err := expectExactError(r, http.StatusNotFound, msgNotFound); err != nil {
		return fmt.Errorf("GET %s after its DELETE: %w", redactPath(path), err)
	}
	return nil
}

func checkOwnAuthOrigins(ctx context.Context, c *Client) error {
	u, tok, err := c.newUserToken(ctx)
	if err != nil {
		return err
	}
	other, _, err := c.newUserToken(ctx)
	if err != nil {
		return err
	}
	const path = "/api/collections/_authOrigins/records"
	r, m, err := c.getOK(ctx, path, tok)
	if err != nil {
		return fmt.Errorf("the user's list: %w", err)
	}
	items, _ := getArray(m, "items")
	var own string
	for _, it := range items {
		rec, _ := it.(map[string]any)
		if rec["recordRef"] != u.id {
			return Mismatch("only records whose recordRef is "+u.id, r.String())
		}
		own, _ = getString(rec, "id")
	}
	if own == "" {
		return Mismatch("at least one record of "+u.id+" (it signed in)", r.String())
	}
	filter := query("filter", "recordRef = '"+other.id+"'")
	_, m, err = c.getOK(ctx, withQuery(path, filter), c.su)
	if err != nil {
		return fmt.Errorf("the superuser's list: %w", err)
	}
	items, _ = getArray(m, "items")
	if len(items) == 0 {
		return Mismatch("a record of the other user, who signed in", jsonText(m))
	}
	rec, _ := items[0].(map[string]any)
	otherID, _ := getString(rec, "id")
	if err := expectDenied(ctx, c, http.MethodGet, path+"/"+seg(otherID), authHeader(tok), nil); err != nil {
		return fmt.Errorf("the user's view of another's record: %w", err)
	}
	if err := c.expectIDs(ctx, path, nil, "a guest"); err != nil {
		return err
	}
	return deleteSystemRecord(ctx, c, "_authOrigins", own, tok)
}

func checkSuperuserMFAs(ctx context.Context, c *Client, fx *ruleFixture) error {
	u := fx.recs[0]
	r, err := c.post(ctx, "/api/collections/"+seg(fx.coll)+"/auth-with-password", "",
		map[string]string{"identity": u.email, "password": u.password})
	if err != nil {
		return err
	}
	mfaID, err := stringKeyWithoutToken(r, http.StatusUnauthorized, "mfaId")
	if err != nil {
		return fmt.Errorf("password as first factor: %w", err)
	}
	return superuserSystemRecord(ctx, c, "_mfas", "id = '"+mfaID+"'", func(rec map[string]any) bool {
		return rec["recordRef"] == u.id && rec["collectionRef"] == fx.collID && rec["method"] == "password"
	})
}

func checkSuperuserOTPs(ctx context.Context, c *Client, sink *smtpSink) error {
	return withRuleCollection(map[string]any{"otp": map[string]any{"enabled": true}}, []bool{false},
		func(ctx context.Context, c *Client, fx *ruleFixture) error {
			u := fx.recs[0]
			otpID, code, err := c.otpOf(ctx, sink, fx.coll, u.email)
			if err != nil {
				return err
			}
			var answers []string
			err = superuserSystemRecord(ctx, c, "_otps", "id = '"+otpID+"'", func(rec map[string]any) bool {
				answers = append(answers, jsonText(rec))
				return rec["recordRef"] == u.id && rec["collectionRef"] == fx.collID && rec["id"] == otpID
			})
			if err != nil {
				return err
			}
			if i := slices.IndexFunc(answers, func(s string) bool { return strings.Contains(s, code) }); i >= 0 {
				return Mismatch("no answer holding the OTP's code", answers[i])
			}
			return nil
		})(ctx, c)
}
