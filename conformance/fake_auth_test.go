package conformance

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"time"
)

// The fake's tokens and auth endpoints (§4.5, §5).

func (f *fakeServer) sign(c *fakeCollection, rec *fakeRecord, typ string, lifetime int64, refreshable *bool) string {
	return f.signWith(c, rec, typ, lifetime, refreshable, nil)
}

// signWith is sign with extra claims (the email of the account flows'
// tokens).
func (f *fakeServer) signWith(c *fakeCollection, rec *fakeRecord, typ string, lifetime int64, refreshable *bool, extra map[string]any) string {
	claims := map[string]any{"id": rec.id, "collectionId": c.id, "type": typ}
	for k, v := range extra {
		claims[k] = v
	}
	if lifetime == 0 && f.bug("users-exp") {
		lifetime = 604800
	}
	if lifetime > 0 {
		claims["exp"] = time.Now().Unix() + lifetime
	}
	if refreshable != nil && !(*refreshable && f.bug("no-refreshable-claim")) {
		claims["refreshable"] = *refreshable
	}
	signing := b64JSON(map[string]any{"alg": "HS256", "typ": "JWT"}) + "." + b64JSON(claims)
	mac := hmac.New(sha256.New, []byte(rec.tokenKey+c.secret+typ))
	mac.Write([]byte(signing))
	return signing + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// tokenOf takes the token out of an Authorization header: "Bearer " is
// matched as PocketBase v0.31.0 does, in that case only, except under the
// bug document-readings, where the scheme's case is free (§5.1 names none).
func (f *fakeServer) tokenOf(header string) string {
	if f.bug("document-readings") && len(header) > 7 && strings.EqualFold(header[:7], "Bearer ") {
		return header[7:]
	}
	return strings.TrimPrefix(header, "Bearer ")
}

func (f *fakeServer) loadAuth(header, typ string) (*fakeRecord, *fakeCollection) {
	tok := f.tokenOf(header)
	parts := strings.Split(tok, ".")
	if len(parts) > 3 && f.bug("ignore-extra-segments") {
		parts = parts[:3]
		tok = strings.Join(parts, ".")
	}
	if len(parts) != 3 {
		return nil, nil
	}
	h, claims, err := splitJWT(tok)
	if err != nil && strings.HasSuffix(tok, ".") && f.bug("trust-alg-header") {
		h, claims, err = splitJWT(tok + "AA") // alg none has no signature
	}
	// The classic alg confusion: a header naming another algorithm (or
	// none) is believed, and the signature is then not checked.
	trustAlg := h["alg"] != "HS256" && f.bug("trust-alg-header")
	if err != nil || (h["alg"] != "HS256" && !trustAlg) || (claims["type"] != typ && !f.bug("any-token-type")) {
		return nil, nil
	}
	cid, _ := claims["collectionId"].(string)
	id, _ := claims["id"].(string)
	c := f.collection(cid)
	if c == nil {
		return nil, nil
	}
	rec := c.records[id]
	if rec == nil && f.bug("deleted-records-authenticate") {
		rec = c.deleted[id]
	}
	if rec == nil {
		return nil, nil
	}
	keyType := typ
	if f.bug("any-token-type") {
		keyType, _ = claims["type"].(string) // the classic confusion: trust the token's own type
	}
	mac := hmac.New(sha256.New, []byte(rec.tokenKey+c.secret+keyType))
	mac.Write([]byte(parts[0] + "." + parts[1]))
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if (err != nil || !hmac.Equal(sig, mac.Sum(nil))) && !f.bug("no-signature-check") && !trustAlg {
		return nil, nil
	}
	if exp, ok := claims["exp"].(float64); ok && int64(exp) < time.Now().Unix() && !f.bug("ignore-exp") {
		return nil, nil
	}
	return rec, c
}

func recordJSON(c *fakeCollection, rec *fakeRecord) map[string]any {
	return map[string]any{"id": rec.id, "email": rec.email, "collectionId": c.id, "collectionName": c.name,
		"created": rec.created, "updated": rec.created, "emailVisibility": false, "verified": rec.verified}
}

// ---- auth endpoints ----------------------------------------------------------

func (f *fakeServer) handleAuth(q *fakeReq, collName, action, target string) error {
	r := q.r
	c := f.collection(collName)
	if strings.HasPrefix(action, "impersonate/") {
		if r.Method != "POST" {
			return ferr(404, msgNotFound)
		}
		if q.auth == nil {
			return ferr(401, msgNeedsToken)
		}
		if q.authColl.name != "_superusers" {
			return ferr(403, msgNotAllowed)
		}
		if c == nil || c.typ != "auth" {
			return ferr(404, msgNoAuthColl)
		}
		body, err := readBody(r)
		if err != nil {
			return err
		}
		dur := c.duration
		if d, ok := body["duration"].(float64); ok {
			if d < 0 {
				return &fakeErr{status: 400, msg: msgValidation, data: map[string]any{"duration": map[string]any{
					"code": codeMinGreaterThan, "message": "Must be no less than 0."}}}
			}
			if d > 0 {
				dur = int64(d)
			}
		}
		if dur == 0 {
			dur = 604800
		}
		rec := c.records[target]
		if rec == nil {
			return ferr(404, msgNotFound)
		}
		no := f.bug("impersonate-refreshable")
		return q.json(200, map[string]any{"record": recordJSON(c, rec), "token": f.sign(c, rec, "auth", dur, &no)})
	}
	if c == nil {
		return ferr(404, msgNoCollection)
	}
	if c.typ != "auth" {
		return ferr(404, msgNoAuthColl)
	}
	switch {
	case action == "auth-methods" && r.Method == "GET":
		enabled := c.passwordEnabled
		fields := []string{}
		if enabled {
			fields = []string{"email"}
		}
		out := map[string]any{
			"password": map[string]any{"identityFields": fields, "enabled": enabled},
			"oauth2":   map[string]any{"providers": f.oauth2Methods(c), "enabled": c.oauth2Enabled},
			"mfa":      map[string]any{"enabled": false, "duration": 0},
			"otp":      map[string]any{"enabled": false, "duration": 0},
		}
		if f.bug("document-readings") {
			delete(out, "otp")
			delete(out["password"].(map[string]any), "identityFields")
		}
		return q.json(200, out)
	case action == "auth-with-password" && r.Method == "POST":
		if !c.passwordEnabled && !f.bug("ignore-password-disabled") {
			return ferr(403, msgPasswordOff)
		}
		body, err := readBody(r)
		if err != nil {
			return err
		}
		identity, _ := body["identity"].(string)
		password, _ := body["password"].(string)
		if identity == "" || password == "" {
			data := map[string]any{}
			for k, v := range map[string]string{"identity": identity, "password": password} {
				if v == "" {
					data[k] = map[string]any{"code": codeRequired, "message": "Cannot be blank."}
				}
			}
			return &fakeErr{status: 400, msg: msgValidation, data: data}
		}
		for _, rec := range c.records {
			if rec.email == identity && rec.password == password {
				if done, err := f.mfaGate(q, c, rec, "password"); done {
					return err
				}
				yes := true
				out := recordJSON(c, rec)
				lifetime := c.duration
				if c.system && f.bug("superuser-static-login") {
					lifetime = 0
				}
				return q.json(200, map[string]any{"record": out, "token": f.sign(c, rec, "auth", lifetime, &yes)})
			}
		}
		return ferr(400, msgFailedAuth)
	case action == "auth-with-oauth2" && r.Method == "POST":
		return f.handleAuthWithOAuth2(q, c)
	case action == "auth-refresh" && r.Method == "POST":
		if q.auth == nil {
			return ferr(401, msgNeedsToken)
		}
		if q.authColl != c {
			return ferr(403, "The request requires auth record from "+q.authColl.name+" collection.")
		}
		if on, _ := c.mfa["enabled"].(bool); on && f.bug("mfa-on-refresh") {
			return q.json(401, map[string]any{"mfaId": fakeID()})
		}
		tok := f.tokenOf(r.Header.Get("Authorization"))
		_, claims, _ := splitJWT(tok)
		if claims["refreshable"] == true || f.bug("always-refresh") {
			yes := true
			lifetime := c.duration
			if c.system && f.bug("superuser-refresh-static") {
				lifetime = 0
			}
			tok = f.sign(c, q.auth, "auth", lifetime, &yes)
		}
		return q.json(200, map[string]any{"record": recordJSON(c, q.auth), "token": tok})
	}
	return ferr(404, msgNotFound)
}
