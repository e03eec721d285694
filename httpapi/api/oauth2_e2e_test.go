package api

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"strongbox/authn/oauth2"
	"strongbox/conformance/oauth2provider"
)

// oauth2E2E is an env whose OAuth2 client is the real one
// (oauth2.NewClient, as httpapi/app wires it), with an oidc provider on
// users pointing at a loopback provider.
type oauth2E2E struct {
	*env
	p *oauth2provider.Provider
}

func newOAuth2E2E(t *testing.T) *oauth2E2E {
	t.Helper()
	return newOAuth2E2EWith(t, "oidc", "Loopback")
}

// newOAuth2E2EWith is newOAuth2E2E with the provider name (a preset) and
// its displayName ("" = the preset's).
func newOAuth2E2EWith(t *testing.T, name, displayName string) *oauth2E2E {
	t.Helper()
	p := oauth2provider.Start(t)
	var e *env
	// The client's clock is the server's, so meta.expiry is exact; it
	// allows the provider's private address, 127.0.0.1.
	client := oauth2.NewClient(oauth2.Options{Now: func() time.Time { return e.clock.Now() }, Timeout: 10 * time.Second, AllowPrivate: true})
	e = newEnvWith(t, Config{OAuth2: client}, HTTPConfig{})
	p.RedirectURIs = []string{e.srv.URL + "/api/oauth2-redirect"}
	body := map[string]any{"oauth2": map[string]any{"enabled": true, "providers": []any{map[string]any{
		"name": name, "displayName": displayName, "clientId": p.ClientID, "clientSecret": p.ClientSecret,
		"authURL": p.URL + oauth2provider.PathAuthorize, "tokenURL": p.URL + oauth2provider.PathToken,
		"userInfoURL": p.URL + oauth2provider.PathUserInfo,
	}}}}
	if res := e.do("PATCH", "/api/collections/users", e.su, body); res.Status != 200 {
		t.Fatalf("enable OAuth2: %d %s", res.Status, res.Body)
	}
	return &oauth2E2E{env: e, p: p}
}

// popup is what one run of the SDK's flow saw.
type popup struct {
	hops  []string // the URLs the popup visited, in order
	page  string   // the page it ended on
	event sseEvent // the @oauth2 event of the realtime stream
	state string   // the client id, which the SDK sends as state
	// What the SDK keeps from auth-methods for auth-with-oauth2.
	verifier, redirectURL string
}

// onlyProvider reads auth-methods of users and returns its one OAuth2
// provider; name is what the test expects, for the failure message.
func (e *oauth2E2E) onlyProvider(t *testing.T, name string) providerInfo {
	t.Helper()
	res := e.do("GET", "/api/collections/users/auth-methods", "", nil)
	var methods struct {
		OAuth2 struct {
			Providers []providerInfo `json:"providers"`
		} `json:"oauth2"`
	}
	if err := json.Unmarshal(res.Body, &methods); err != nil || res.Status != 200 || len(methods.OAuth2.Providers) != 1 {
		t.Fatalf("auth-methods = %d %s, want the %s provider", res.Status, res.Body, name)
	}
	return methods.OAuth2.Providers[0]
}

// sdkPopup runs authWithOAuth2({provider:"oidc"}) of the PocketBase JS SDK
// (v0.26) up to the code: auth-methods; the realtime stream and its
// client id; the subscription to @oauth2; the provider's URL with the
// client id as state and redirect_uri = <base>/api/oauth2-redirect, opened
// in a popup that follows every redirect; and the event the stream gets.
func (e *oauth2E2E) sdkPopup(t *testing.T) popup {
	t.Helper()
	pi := e.onlyProvider(t, "oidc")
	if pi.Name != "oidc" || pi.DisplayName != "Loopback" || pi.CodeChallengeMethod != "S256" ||
		pi.CodeChallenge != oauth2.Challenge(pi.CodeVerifier) ||
		!strings.HasPrefix(pi.AuthURL, e.p.URL+oauth2provider.PathAuthorize+"?client_id=client-id&") ||
		!strings.HasSuffix(pi.AuthURL, "&redirect_uri=") {
		t.Fatalf("auth-methods provider = %+v", pi)
	}

	c := openStream(t, e.srv.URL, "")
	defer c.close()
	e.subscribe(c.id, "", "@oauth2")

	redirectURL := e.srv.URL + "/api/oauth2-redirect"
	u := sdkReplaceQuery(pi.AuthURL+redirectURL, map[string]string{"state": c.id})
	var hops []string
	browser := &http.Client{
		Timeout: 10 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > 5 {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
	res2, err := browser.Get(u)
	if err != nil {
		t.Fatalf("popup: %v", err)
	}
	page, err := io.ReadAll(res2.Body)
	res2.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for r := res2.Request; r != nil; {
		hops = append([]string{r.URL.String()}, hops...)
		if r.Response == nil {
			break
		}
		r = r.Response.Request
	}
	if res2.StatusCode != 200 {
		t.Fatalf("popup ended with %d %s after %q", res2.StatusCode, page, hops)
	}
	ev, err := c.next() // bounded by streamDeadline
	if err != nil {
		t.Fatalf("reading the @oauth2 event: %v", err)
	}
	return popup{hops: hops, page: string(page), event: ev, state: c.id, verifier: pi.CodeVerifier, redirectURL: redirectURL}
}

// sdkReplaceQuery is the SDK's _replaceQueryParams: the query of u
// (split at the first "?") decoded pair by pair, the values in
// replacements set (in place, or appended), and encoded again as
// encodeURIComponent does (a space as %20).
func sdkReplaceQuery(u string, replacements map[string]string) string {
	base, query, _ := strings.Cut(u, "?")
	var keys []string
	vals := map[string]string{}
	for _, pair := range strings.Split(query, "&") {
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		k, _ = url.QueryUnescape(k)
		v, _ = url.QueryUnescape(v)
		if _, ok := vals[k]; !ok {
			keys = append(keys, k)
		}
		vals[k] = v
	}
	for k, v := range replacements {
		if _, ok := vals[k]; !ok {
			keys = append(keys, k)
		}
		vals[k] = v
	}
	// QueryEscape turns a "+" into %2B: any "+" left is a space.
	escape := func(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") }
	pairs := make([]string, len(keys))
	for i, k := range keys {
		pairs[i] = escape(k) + "=" + escape(vals[k])
	}
	return base + "?" + strings.Join(pairs, "&")
}

// code checks the event as the SDK does (its state is the client id; a
// code and no error) and returns the code.
func (pp popup) code(t *testing.T) string {
	t.Helper()
	var data struct {
		State, Code string
		Error       *string
	}
	if err := json.Unmarshal([]byte(pp.event.Data), &data); err != nil || pp.event.Event != "@oauth2" || pp.event.ID != pp.state ||
		data.State != pp.state || data.Code == "" || data.Error != nil {
		t.Fatalf("event = %+v, want @oauth2 with state %s and a code", pp.event, pp.state)
	}
	want := []string{
		"", // the provider's URL, checked below
		pp.redirectURL + "?code=" + url.QueryEscape(data.Code) + "&state=" + pp.state,
		strings.TrimSuffix(pp.redirectURL, "oauth2-redirect") + "oauth2-redirect-success",
	}
	if len(pp.hops) != 3 || pp.hops[1] != want[1] || pp.hops[2] != want[2] || pp.page != string(oauth2Pages[oauth2SuccessLocation]) {
		t.Fatalf("popup went through %q, ending on %q; want the provider, then %q", pp.hops, pp.page, want[1:])
	}
	return data.Code
}

// signIn posts auth-with-oauth2 as the SDK's authWithOAuth2Code does.
func (e *oauth2E2E) signIn(code, verifier, redirectURL string) *response {
	e.t.Helper()
	return e.do("POST", "/api/collections/users/auth-with-oauth2", "",
		map[string]any{"provider": "oidc", "code": code, "codeVerifier": verifier, "redirectURL": redirectURL, "createData": map[string]any{}})
}

// TestOAuth2EndToEnd: the SDK's all-in-one flow against the real OAuth2
// client and a loopback provider: a new account, the same account again,
// a verifier that is not the code's, and the user refusing at the
// provider.
func TestOAuth2EndToEnd(t *testing.T) {
	t.Parallel()
	e := newOAuth2E2E(t)
	ada := map[string]any{"sub": "ada-1", "name": "Ada Lovelace", "preferred_username": "ada",
		"email": "ada@example.com", "email_verified": true, "picture": "https://img.test/ada.png"}
	e.p.SignIn(oauth2provider.Grant{User: ada})

	pp := e.sdkPopup(t)
	if got, want := pp.hops[0], sdkReplaceQuery(e.p.URL+oauth2provider.PathAuthorize+"?client_id=client-id&code_challenge="+
		oauth2.Challenge(pp.verifier)+"&code_challenge_method=S256&response_type=code&scope=openid%20email%20profile&state=x&redirect_uri="+
		pp.redirectURL, map[string]string{"state": pp.state}); got != want {
		t.Errorf("the popup opened %s\nwant %s", got, want)
	}
	var first struct {
		Token  string         `json:"token"`
		Record map[string]any `json:"record"`
		Meta   map[string]any `json:"meta"`
	}
	res := e.signIn(pp.code(t), pp.verifier, pp.redirectURL)
	if err := json.Unmarshal(res.Body, &first); err != nil || res.Status != 200 {
		t.Fatalf("auth-with-oauth2 = %d %s, want 200", res.Status, res.Body)
	}
	// The provider's tokens are random: checked for shape, then compared
	// as placeholders.
	for k, prefix := range map[string]string{"accessToken": "at-", "refreshToken": "rt-"} {
		if s, _ := first.Meta[k].(string); !strings.HasPrefix(s, prefix) {
			t.Errorf("meta.%s = %v, want the provider's %s…", k, first.Meta[k], prefix)
		}
		first.Meta[k] = prefix
	}
	meta, _ := json.Marshal(first.Meta)
	wantMeta := `{"accessToken":"at-","avatarURL":"https://img.test/ada.png","avatarUrl":"https://img.test/ada.png","email":"ada@example.com",` +
		`"expiry":"2026-11-22 11:00:00.000Z","id":"ada-1","isNew":true,"name":"Ada Lovelace",` +
		`"rawUser":{"email":"ada@example.com","email_verified":true,"name":"Ada Lovelace","picture":"https://img.test/ada.png","preferred_username":"ada","sub":"ada-1"},` +
		`"refreshToken":"rt-","username":"ada"}`
	if string(meta) != wantMeta {
		t.Errorf("meta = %s\nwant %s", meta, wantMeta)
	}
	adaID, _ := first.Record["id"].(string)
	if first.Record["email"] != "ada@example.com" || first.Record["verified"] != true || first.Record["collectionName"] != "users" || adaID == "" {
		t.Errorf("record = %v, want a verified users record with ada@example.com", first.Record)
	}
	// The token is the record's.
	refreshed := e.do("POST", "/api/collections/users/auth-refresh", first.Token, nil)
	if refreshed.Status != 200 || refreshed.JSON(t)["record"].(map[string]any)["id"] != adaID {
		t.Errorf("auth-refresh with the token = %d %s", refreshed.Status, refreshed.Body)
	}

	// The same provider user again: the linked record, isNew false.
	pp = e.sdkPopup(t)
	res = e.signIn(pp.code(t), pp.verifier, pp.redirectURL)
	if m := res.JSON(t); res.Status != 200 || m["record"].(map[string]any)["id"] != adaID ||
		m["meta"].(map[string]any)["isNew"] != false || m["meta"].(map[string]any)["email"] != "ada@example.com" {
		t.Errorf("second sign-in = %d %s, want record %s and isNew false", res.Status, res.Body, adaID)
	}
	links := e.do("GET", "/api/collections/_externalAuths/records", e.su, nil).JSON(t)
	if links["totalItems"] != float64(1) || links["items"].([]any)[0].(map[string]any)["providerId"] != "ada-1" {
		t.Errorf("links = %v, want one, for ada-1", links)
	}

	// PKCE binds the code to its auth-methods call: the verifier of
	// another call is refused by the provider.
	other := e.sdkPopup(t)
	pp = e.sdkPopup(t)
	wantError(t, e.signIn(pp.code(t), other.verifier, pp.redirectURL), 400, "Failed to fetch OAuth2 token.")
	// So is a redirectURL that is not the one the code was issued for.
	pp = e.sdkPopup(t)
	wantError(t, e.signIn(pp.code(t), pp.verifier, e.srv.URL+"/elsewhere"), 400, "Failed to fetch OAuth2 token.")

	// The user refuses at the provider: the event carries the error and
	// no code, and the popup ends on the failure page. The SDK stops
	// there, without calling auth-with-oauth2.
	e.p.Deny("access_denied")
	pp = e.sdkPopup(t)
	if want := (sseEvent{ID: pp.state, Event: "@oauth2", Data: `{"state":"` + pp.state + `","code":"","error":"access_denied"}`}); pp.event != want {
		t.Errorf("event = %+v, want %+v", pp.event, want)
	}
	wantHops := []string{pp.redirectURL + "?error=access_denied&state=" + pp.state, e.srv.URL + "/api/oauth2-redirect-failure"}
	if len(pp.hops) != 3 || pp.hops[1] != wantHops[0] || pp.hops[2] != wantHops[1] || pp.page != string(oauth2Pages[oauth2FailureLocation]) {
		t.Errorf("popup went through %q, ending on %q; want the provider, then %q and the failure page", pp.hops, pp.page, wantHops)
	}
}

// TestOAuth2PresetEndToEnd: a preset other than oidc (twitch, whose user
// JSON is a `data` list and whose API wants the client id as Client-Id)
// through the real client and the loopback provider: auth-methods lists
// it with the preset's displayName, PKCE and scope, and auth-with-oauth2
// signs its user up with the verified email Twitch gives.
func TestOAuth2PresetEndToEnd(t *testing.T) {
	t.Parallel()
	e := newOAuth2E2EWith(t, "twitch", "")
	pi := e.onlyProvider(t, "twitch")
	if pi.Name != "twitch" || pi.DisplayName != "Twitch" || pi.CodeChallengeMethod != "S256" || pi.CodeChallenge != oauth2.Challenge(pi.CodeVerifier) ||
		!strings.HasPrefix(pi.AuthURL, e.p.URL+oauth2provider.PathAuthorize+"?client_id=client-id&code_challenge="+pi.CodeChallenge+"&") ||
		!strings.Contains(pi.AuthURL, "&scope=user%3Aread%3Aemail&") {
		t.Fatalf("auth-methods provider = %+v", pi)
	}
	redirectURL := e.srv.URL + "/api/oauth2-redirect"
	code := e.p.Grant(oauth2provider.Grant{Challenge: pi.CodeChallenge, RedirectURI: redirectURL, User: map[string]any{"data": []any{map[string]any{
		"id": "141981764", "login": "twitchdev", "display_name": "TwitchDev", "email": "tw@example.com",
		"profile_image_url": "https://img.test/tw.png"}}}})
	res := e.do("POST", "/api/collections/users/auth-with-oauth2", "",
		map[string]any{"provider": "twitch", "code": code, "codeVerifier": pi.CodeVerifier, "redirectURL": redirectURL, "createData": map[string]any{}})
	var got struct {
		Record map[string]any `json:"record"`
		Meta   map[string]any `json:"meta"`
	}
	if err := json.Unmarshal(res.Body, &got); err != nil || res.Status != 200 {
		t.Fatalf("auth-with-oauth2 = %d %s, want 200", res.Status, res.Body)
	}
	for k, want := range map[string]any{"id": "141981764", "name": "TwitchDev", "username": "twitchdev", "email": "tw@example.com",
		"avatarURL": "https://img.test/tw.png", "isNew": true} {
		if got.Meta[k] != want {
			t.Errorf("meta.%s = %v, want %v", k, got.Meta[k], want)
		}
	}
	if got.Record["email"] != "tw@example.com" || got.Record["verified"] != true {
		t.Errorf("record = %v, want a verified record with tw@example.com", got.Record)
	}
	if refused := e.p.Refused(); len(refused) > 0 {
		t.Errorf("the provider refused %q", refused)
	}
}
