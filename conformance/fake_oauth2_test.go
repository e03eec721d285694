package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The fake's OAuth2 sign-in: the providers of a collection kept as they
// were PATCHed (the clientSecret never shown), auth-methods with a fresh
// state and PKCE pair on every call, and auth-with-oauth2, which exchanges
// the code at the provider's token URL and reads its user endpoint (the
// suite's provider: the fake calls it under its lock, and the provider
// never calls the fake), then finds the linked record, else the record
// with the verified email, else creates one.

// fakeOAuthClient talks to the providers.
var fakeOAuthClient = &http.Client{Timeout: 10 * time.Second}

// oauth2View is the oauth2 object of c as GET shows it.
func (c *fakeCollection) oauth2View() map[string]any {
	ps := []any{}
	for _, p := range c.oauth2Providers {
		v := maps.Clone(p)
		delete(v, "clientSecret")
		ps = append(ps, v)
	}
	return map[string]any{"enabled": c.oauth2Enabled, "providers": ps, "mappedFields": maps.Clone(c.oauth2Mapped)}
}

// setOAuth2Providers applies the providers and mappedFields of a PATCHed
// oauth2 object; with allowed false (a system collection) the providers
// are cleared. A provider sent back without its clientSecret keeps the
// stored one.
func (c *fakeCollection) setOAuth2Providers(o map[string]any, allowed bool) {
	if mf, ok := o["mappedFields"].(map[string]any); ok {
		c.oauth2Mapped = maps.Clone(mf)
	}
	list, ok := o["providers"].([]any)
	if !ok {
		return
	}
	var out []map[string]any
	for _, x := range list {
		p, ok := x.(map[string]any)
		if !ok || !allowed {
			continue
		}
		p = maps.Clone(p)
		if _, ok := p["clientSecret"]; !ok {
			if name, _ := p["name"].(string); c.oauth2Provider(name) != nil {
				p["clientSecret"] = c.oauth2Provider(name)["clientSecret"]
			}
		}
		out = append(out, p)
	}
	c.oauth2Providers = out
}

// oauth2Provider is the provider of c named name, or nil.
func (c *fakeCollection) oauth2Provider(name string) map[string]any {
	for _, p := range c.oauth2Providers {
		if p["name"] == name {
			return p
		}
	}
	return nil
}

// oauth2Methods lists the providers of c for auth-methods.
func (f *fakeServer) oauth2Methods(c *fakeCollection) []any {
	out := []any{}
	if !c.oauth2Enabled {
		return out
	}
	for _, p := range c.oauth2Providers {
		str := func(k string) string { s, _ := p[k].(string); return s }
		state, verifier := newNonce(30), newNonce(43)
		challenge, method := pkceChallenge(verifier), "S256"
		if f.bug("oauth2-plain-pkce") {
			challenge, method = verifier, "plain"
		}
		q := url.Values{"client_id": {str("clientId")}, "code_challenge": {challenge}, "code_challenge_method": {method},
			"response_type": {"code"}, "scope": {"openid email profile"}, "state": {state}}
		authURL := str("authURL") + "?" + q.Encode() + "&redirect_uri="
		display := str("displayName")
		if display == "" {
			display = "OIDC"
		}
		out = append(out, map[string]any{"name": str("name"), "displayName": display, "state": state,
			"authURL": authURL, "authUrl": authURL, "codeVerifier": verifier, "codeChallenge": challenge,
			"codeChallengeMethod": method})
	}
	return out
}

func (f *fakeServer) handleAuthWithOAuth2(q *fakeReq, c *fakeCollection) error {
	if !c.oauth2Enabled && !f.bug("oauth2-ignore-enabled") {
		return ferr(403, msgOAuth2Off)
	}
	body, err := readBody(q.r)
	if err != nil {
		return err
	}
	str := func(k string) string { s, _ := body[k].(string); return s }
	name, code, verifier, redirect := str("provider"), str("code"), str("codeVerifier"), str("redirectURL")
	required := map[string]any{"code": codeRequired, "message": "Cannot be blank."}
	data := map[string]any{}
	p := c.oauth2Provider(name)
	switch {
	case name == "":
		data["provider"] = required
	case p == nil && !f.bug("oauth2-any-provider"):
		data["provider"] = map[string]any{"code": codeInvalidProvider,
			"message": "Provider with name " + name + " is missing or is not enabled."}
	}
	if code == "" {
		data["code"] = required
	}
	if redirect == "" {
		data["redirectURL"] = required
	}
	if len(data) > 0 {
		msg := msgLoadFailed
		if f.bug("oauth2-validation-message") {
			msg = msgValidation
		}
		return &fakeErr{status: 400, msg: msg, data: data}
	}
	tokenFailed := ferr(400, msgOAuth2Token)
	if f.bug("oauth2-token-failure-500") {
		tokenFailed = ferr(500, msgGenericBad)
	}
	if p == nil {
		return tokenFailed
	}
	access, err := fakeTokenExchange(p, code, verifier, redirect)
	if err != nil {
		return tokenFailed
	}
	claims, err := fakeUserInfo(p, access)
	if err != nil {
		if f.bug("oauth2-user-failure-as-token") {
			return ferr(400, msgOAuth2Token)
		}
		return ferr(400, msgOAuth2User)
	}
	cstr := func(k string) string { s, _ := claims[k].(string); return s }
	sub, email := cstr("sub"), cstr("email")
	if v, _ := claims["email_verified"].(bool); !v {
		email = ""
	}
	if sub == "" {
		return ferr(400, msgOAuth2User)
	}
	key := c.id + "/" + name + "/" + sub
	var rec *fakeRecord
	isNew := false
	if id, ok := f.oauthLinks[key]; ok {
		rec = c.records[id]
	}
	if rec == nil && email != "" && !f.bug("oauth2-no-email-match") {
		rec = f.recordByEmail(c, email)
		// Account-takeover protection: whoever signed an unverified
		// account up with this email loses the password they chose.
		if rec != nil && !rec.verified && rec.email != "" && !f.bug("oauth2-takeover") {
			rec.password, rec.tokenKey = fakeID()+fakeID(), fakeID()
		}
	}
	if rec == nil {
		if email == "" {
			return &fakeErr{status: 400, msg: msgCreateFailed, data: map[string]any{"email": required}}
		}
		rec = &fakeRecord{id: fakeID(), email: email, password: fakeID() + fakeID(), tokenKey: fakeID(), created: fakeNow()}
		c.records[rec.id] = rec
		isNew = true
	}
	rec.verified = rec.verified || rec.email == email
	f.oauthLinks[key] = rec.id
	if done, err := f.mfaGate(q, c, rec, "oauth2"); done {
		return err
	}
	meta := map[string]any{"id": sub, "name": cstr("name"), "username": "", "email": email,
		"avatarURL": cstr("picture"), "avatarUrl": cstr("picture"), "accessToken": access, "refreshToken": "",
		"expiry": "", "isNew": isNew || f.bug("oauth2-isnew-always"), "rawUser": claims}
	if f.bug("oauth2-meta-without-isnew") {
		delete(meta, "isNew")
	}
	yes := true
	return q.json(200, map[string]any{"meta": meta, "record": recordJSON(c, rec), "token": f.sign(c, rec, "auth", c.duration, &yes)})
}

// fakeTokenExchange trades code for an access token at p's token URL,
// the client authenticating with HTTP Basic.
func fakeTokenExchange(p map[string]any, code, verifier, redirect string) (string, error) {
	str := func(k string) string { s, _ := p[k].(string); return s }
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}}
	if verifier != "" {
		form.Set("code_verifier", verifier)
	}
	req, err := http.NewRequest(http.MethodPost, str("tokenURL"), strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(str("clientId")), url.QueryEscape(str("clientSecret")))
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := fakeOAuthJSON(req, &tok); err != nil {
		return "", err
	}
	if tok.AccessToken == "" {
		return "", errors.New("no access_token")
	}
	return tok.AccessToken, nil
}

// fakeUserInfo reads the user's claims from p's user endpoint.
func fakeUserInfo(p map[string]any, access string) (map[string]any, error) {
	u, _ := p["userInfoURL"].(string)
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+access)
	var claims map[string]any
	if err := fakeOAuthJSON(req, &claims); err != nil {
		return nil, err
	}
	return claims, nil
}

// fakeOAuthJSON sends req and decodes a 200 JSON answer into v.
func fakeOAuthJSON(req *http.Request, v any) error {
	resp, err := fakeOAuthClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %d %s", req.URL.Path, resp.StatusCode, b)
	}
	return json.Unmarshal(b, v)
}
