package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"strongbox/conformance/oauth2provider"
)

// TestDashboardCollectionsBrowser drives the Collections screen in headless
// Chromium (testdata/dashboard/collections.mjs): the superuser signs in,
// users is chosen first (the hash names it), the sidebar search narrows
// the collections; a create with passwords that differ shows the field's
// error next to it; the record is created, listed, filtered to, edited
// (verified) in its side panel and deleted; the list sorts by a column
// both ways, and three users are selected and deleted at once; Escape
// closes a panel and the focus returns; another user is impersonated and
// the token the page shows is accepted by GET
// /api/collections/users/records/{id}, and its OAuth2 account (linked here
// through a loopback provider) is unlinked; a field is added to users (a
// bad name refused beside it first), moved, and read back from the API;
// a rule the server refuses shows its message beside it; a rule with text
// is locked (after a question) and unlocked with its text kept, and saved;
// options and an OAuth2 provider of users (its URLs and PKCE switch too)
// are saved and read back after a reload of the deep link (and an
// option's error shows next to it); a collection is created, renamed and
// deleted; every screen is shot at 1280 and 390 px wide and none scrolls
// sideways at 390; no console error, page error or dialog. It runs and
// skips as TestDashboardBrowser does (same variables).
func TestDashboardCollectionsBrowser(t *testing.T) {
	chromium, pptr, node := browserTools(t)
	ts, d := dashServed(t, map[string]string{"STRONGBOX_OAUTH2_ALLOW_PRIVATE": "1"})
	d.su = d.login("_superusers", dashEmail, dashPassword)
	imp := d.newUser("impersonated")
	d.linkOIDC(imp)
	const bulkPrefix = "bulk-"
	var bulk []dashUser
	for i := 1; i <= 3; i++ {
		bulk = append(bulk, d.newUser(fmt.Sprintf("%s%d", bulkPrefix, i)))
	}
	const newField = "nickname"
	const newEmail = "created-in-dashboard@example.com"
	const listRule = `verified = true && email != ""`
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cfg := map[string]string{
		"base": ts.base, "chromium": chromium, "shots": dashArtifacts(t),
		"email": dashEmail, "password": dashPassword,
		"newEmail": newEmail, "userPassword": dashUserPW, "impEmail": imp.email,
		"listRule": listRule, "bulkPrefix": bulkPrefix, "field": newField, "clientId": "client-id-of-the-test", "newCollection": "members", "renamed": "members2",
		"authURL": "https://auth.example.com/authorize", "tokenURL": "https://auth.example.com/token",
	}
	out := runDashScript(t, ctx, node, pptr, "collections.mjs", cfg, 0)
	if n := len(regexp.MustCompile(`(?m)^ok `).FindAllString(out, -1)); n != 21 {
		t.Fatalf("%d steps passed, want 21", n)
	}
	if !strings.Contains(out, "field-error \"") || strings.Contains(out, "field-error \"\"") {
		t.Error("the create with passwords that differ showed no error next to passwordConfirm")
	}
	tok := regexp.MustCompile(`(?m)^token (\S+)$`).FindStringSubmatch(out)
	if tok == nil {
		t.Fatal("the script printed no impersonation token")
	}
	var rec struct{ ID string }
	if b := d.mustCall("GET", "/api/collections/users/records/"+imp.id, tok[1], "", 200); json.Unmarshal(b, &rec) != nil || rec.ID != imp.id {
		t.Errorf("GET the impersonated record with its token = %s, want id %s", b, imp.id)
	}
	if b := d.mustCall("GET", "/api/collections/_externalAuths/records", d.su, "", 200); !bytes.Contains(b, []byte(`"totalItems":0`)) {
		t.Errorf("after Unlink, GET _externalAuths = %s, want none", b)
	}
	var users struct {
		ListRule *string
		OTP      struct{ Duration int }
		OAuth2   struct {
			Enabled      bool
			Providers    []map[string]any
			MappedFields struct{ Name string }
		}
	}
	if b := d.mustCall("GET", "/api/collections/users", d.su, "", 200); json.Unmarshal(b, &users) != nil ||
		users.ListRule == nil || *users.ListRule != listRule || users.OTP.Duration != 240 {
		t.Errorf("after the options form, GET /api/collections/users = %s, want listRule %q and otp.duration 240", b, listRule)
	}
	if o := users.OAuth2; !o.Enabled || len(o.Providers) != 1 || o.Providers[0]["name"] != "oidc" ||
		o.Providers[0]["clientId"] != "client-id-of-the-test" || o.Providers[0]["clientSecret"] != nil || o.MappedFields.Name != "name" {
		t.Errorf("after the OAuth2 form, users.oauth2 = %+v, want oidc enabled with its client id and the name mapped", o)
	} else if p := o.Providers[0]; p["authURL"] != cfg["authURL"] || p["tokenURL"] != cfg["tokenURL"] || p["userInfoURL"] != "" || p["pkce"] != false {
		t.Errorf("after the OAuth2 form, the provider = %v, want its auth and token URLs, no user info URL and pkce false", p)
	}
	if !regexp.MustCompile(`(?m)^option-error "[^"]`).MatchString(out) {
		t.Error("the options form showed no error next to passwordResetToken.duration for 0")
	}
	if !regexp.MustCompile(`(?m)^rule-error "[^"]*join`).MatchString(out) {
		t.Error("the refused viewRule showed no message about joins beside it")
	}
	if !regexp.MustCompile(`(?m)^field-row-error "[^"]`).MatchString(out) {
		t.Error("the field with a bad name showed no error on its row")
	}
	for _, u := range bulk {
		d.mustCall("GET", "/api/collections/users/records/"+u.id, d.su, "", 404)
	}
	type field struct {
		Name, Type string
		Required   bool
		Max        float64
	}
	var withField struct{ Fields []field }
	if b := d.mustCall("GET", "/api/collections/users", d.su, "", 200); json.Unmarshal(b, &withField) != nil ||
		!slices.Contains(withField.Fields, field{newField, "text", true, 40}) {
		t.Errorf("after the Fields tab, GET /api/collections/users = %s, want the required text field %s, max 40", b, newField)
	}
	d.login("users", imp.email, dashUserPW) // the token secrets the form does not send are kept
	for _, name := range []string{"members", "members2"} {
		d.mustCall("GET", "/api/collections/"+name, d.su, "", 404)
	}
	var list struct{ TotalItems int }
	b := d.mustCall("GET", `/api/collections/users/records?filter=email%3D%22`+newEmail+`%22`, d.su, "", 200)
	if json.Unmarshal(b, &list) != nil || list.TotalItems != 0 {
		t.Errorf("the record deleted in the dashboard is still there: %s", b)
	}
}

// linkOIDC links u to an account of a loopback OpenID provider ("oidc",
// subject "ext-1") by signing in with OAuth2 as u, then takes the provider
// off users again (the link stays).
func (d *dashAPI) linkOIDC(u dashUser) {
	d.t.Helper()
	p := oauth2provider.Start(d.t)
	verifier := strings.Repeat("v", 43)
	sum := sha256.Sum256([]byte(verifier))
	redirect := d.base + "/api/oauth2-redirect"
	code := p.Grant(oauth2provider.Grant{Challenge: base64.RawURLEncoding.EncodeToString(sum[:]), RedirectURI: redirect,
		User: map[string]any{"sub": "ext-1", "email": u.email, "email_verified": true}})
	d.mustCall("PATCH", "/api/collections/users", d.su, fmt.Sprintf(`{"oauth2":{"enabled":true,"providers":[{"name":"oidc",
		"clientId":%q,"clientSecret":%q,"authURL":%q,"tokenURL":%q,"userInfoURL":%q}]}}`, p.ClientID, p.ClientSecret,
		p.URL+oauth2provider.PathAuthorize, p.URL+oauth2provider.PathToken, p.URL+oauth2provider.PathUserInfo), 200)
	d.mustCall("POST", "/api/collections/users/auth-with-oauth2", d.login("users", u.email, dashUserPW),
		fmt.Sprintf(`{"provider":"oidc","code":%q,"codeVerifier":%q,"redirectURL":%q}`, code, verifier, redirect), 200)
	d.mustCall("PATCH", "/api/collections/users", d.su, `{"oauth2":{"enabled":false,"providers":[]}}`, 200)
}
