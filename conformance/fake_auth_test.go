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
	claims := map[string]any{"id": rec.id, "collectionId": c.id, "type": typ}
	if lifetime == 0 && f.bugs["users-exp"] {
		lifetime = 604800
	}
	if lifetime > 0 {
		claims["exp"] = time.Now().Unix() + lifetime
	}
	if refreshable != nil {
		claims["refreshable"] = *refreshable
	}
	signing := b64JSON(map[string]any{"alg": "HS256", "typ": "JWT"}) + "." + b64JSON(claims)
	mac := hmac.New(sha256.New, []byte(rec.tokenKey+c.secret+typ))
	mac.Write([]byte(signing))
	return signing + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func (f *fakeServer) loadAuth(header, typ string) (*fakeRecord, *fakeCollection) {
	tok := strings.TrimPrefix(header, "Bearer ")
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil, nil
	}
	h, claims, err := splitJWT(tok)
	if err != nil || h["alg"] != "HS256" || (claims["type"] != typ && !f.bugs["any-token-type"]) {
		return nil, nil
	}
	cid, _ := claims["collectionId"].(string)
	id, _ := claims["id"].(string)
	c := f.collection(cid)
	if c == nil || c.records[id] == nil {
		return nil, nil
	}
	rec := c.records[id]
	keyType := typ
	if f.bugs["any-token-type"] {
		keyType, _ = claims["type"].(string) // the classic confusion: trust the token's own type
	}
	mac := hmac.New(sha256.New, []byte(rec.tokenKey+c.secret+keyType))
	mac.Write([]byte(parts[0] + "." + parts[1]))
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if (err != nil || !hmac.Equal(sig, mac.Sum(nil))) && !f.bugs["no-signature-check"] {
		return nil, nil
	}
	if exp, ok := claims["exp"].(float64); ok && int64(exp) < time.Now().Unix() && !f.bugs["ignore-exp"] {
		return nil, nil
	}
	return rec, c
}

func recordJSON(c *fakeCollection, rec *fakeRecord) map[string]any {
	return map[string]any{"id": rec.id, "email": rec.email, "collectionId": c.id, "collectionName": c.name,
		"created": rec.created, "updated": rec.created, "emailVisibility": false, "verified": false}
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
		no := false
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
		fields := []string{}
		if c.passwordEnabled {
			fields = []string{"email"}
		}
		return q.json(200, map[string]any{
			"password": map[string]any{"identityFields": fields, "enabled": c.passwordEnabled},
			"oauth2":   map[string]any{"providers": []any{}, "enabled": false},
			"mfa":      map[string]any{"enabled": false, "duration": 0},
			"otp":      map[string]any{"enabled": false, "duration": 0},
		})
	case action == "auth-with-password" && r.Method == "POST":
		if !c.passwordEnabled {
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
		throttleKey, err := f.loginThrottled(q, c, identity)
		if err != nil {
			return err
		}
		for _, rec := range c.records {
			if rec.email == identity && rec.password == password {
				f.loginDone(throttleKey, true)
				yes := true
				return q.json(200, map[string]any{"record": recordJSON(c, rec), "token": f.sign(c, rec, "auth", c.duration, &yes)})
			}
		}
		f.loginDone(throttleKey, false)
		return ferr(400, msgFailedAuth)
	case action == "auth-refresh" && r.Method == "POST":
		if q.auth == nil {
			return ferr(401, msgNeedsToken)
		}
		if q.authColl != c {
			return ferr(403, "The request requires auth record from "+q.authColl.name+" collection.")
		}
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		_, claims, _ := splitJWT(tok)
		if claims["refreshable"] == true || f.bugs["always-refresh"] {
			yes := true
			tok = f.sign(c, q.auth, "auth", c.duration, &yes)
		}
		return q.json(200, map[string]any{"record": recordJSON(c, q.auth), "token": tok})
	}
	return ferr(404, msgNotFound)
}
