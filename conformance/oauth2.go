package conformance

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"time"
)

// OAuth2 sign-in (§4.5 auth-with-oauth2 and auth-methods, §2.6 meta.isNew,
// §2.7, §5 rules 4, 5 and 11), against the suite's own provider
// (oauth2provider.go). Each check starts the provider, reads the users
// collection's oauth2 options, configures the provider there as `oidc`
// through PATCH /api/collections/users, and a cleanup puts the options
// back as they were read, even when the check fails. GET never returns a
// provider's clientSecret, so a users collection that already has
// providers could not be put back: the checks then skip, as they do when
// the server refuses the PATCH. Where the document is silent the checks
// follow PocketBase v0.31.0.

const (
	msgOAuth2Off   = "The collection is not configured to allow OAuth2 authentication."
	msgOAuth2Token = "Failed to fetch OAuth2 token."
	msgOAuth2User  = "Failed to fetch OAuth2 user."
	msgLoadFailed  = "An error occurred while loading the submitted data."

	codeInvalidProvider = "validation_invalid_provider"

	// oauthDisplayName is the display name the suite gives its provider.
	oauthDisplayName = "Conformance OIDC"
)

const (
	sectionOAuth2        = "§4.5 auth-with-oauth2; §2.6"
	refOAuth2            = "PocketBase v0.31.0 (auth-with-oauth2 and its _externalAuths links)"
	sectionOAuth2Methods = "§4.5 auth-methods; §2.7; §5 rules 5, 11; PocketBase v0.31.0 (the oauth2 part of auth-methods)"
)

// metaKeys are the keys of an OAuth2 sign-in's meta, as PocketBase v0.31.0
// sends them.
var metaKeys = []string{"id", "name", "username", "email", "avatarURL", "avatarUrl", "accessToken",
	"refreshToken", "expiry", "isNew", "rawUser"}

var oauth2Requirements = []*Requirement{
	{
		ID:      "AUTH-OAUTH2-001",
		Source:  SourcePocketBase,
		Section: sectionOAuth2Methods,
		Name:    "auth-methods lists a configured provider",
		Text: "With the suite's provider configured on users as \"oidc\" (enabled, PKCE on), auth-methods answers 200 " +
			"with oauth2.enabled true and a provider {name \"oidc\", displayName (the configured one), state " +
			"(non-empty), authURL, codeVerifier (43 to 128 unreserved characters), codeChallenge " +
			"(base64url(SHA-256(codeVerifier)), unpadded), codeChallengeMethod \"S256\"}; authURL is the configured " +
			"authorization URL with client_id, response_type=code, the state, code_challenge and " +
			"code_challenge_method=S256, and ends with \"redirect_uri=\" for the client to complete; a second call " +
			"hands out another state and codeVerifier.",
		Run: withOAuth2(func(ctx context.Context, c *Client, p *oauthProvider) error {
			first, err := oidcMethod(ctx, c, p)
			if err != nil {
				return err
			}
			second, err := oidcMethod(ctx, c, p)
			if err != nil {
				return err
			}
			if first.state == second.state || first.verifier == second.verifier {
				return Mismatch("a fresh state and codeVerifier on every auth-methods call",
					fmt.Sprintf("state %q and %q, codeVerifier %q and %q", first.state, second.state, first.verifier, second.verifier))
			}
			return nil
		}),
	},
	{
		ID:      "AUTH-OAUTH2-002",
		Source:  SourcePocketBase,
		Section: sectionOAuth2 + "; " + refOAuth2,
		Name:    "a first OAuth2 sign-in creates the user",
		Text: "auth-with-oauth2 {provider \"oidc\", code, codeVerifier, redirectURL} with a code the provider issued " +
			"for a new identity with a verified email answers 200 with a JWT token, a users record with that email " +
			"(verified true) and meta holding the keys " + strings.Join(metaKeys, ", ") + ": isNew true, id the " +
			"provider's sub, email, name and avatarURL the provider's, rawUser an object.",
		Run: withOAuth2(func(ctx context.Context, c *Client, p *oauthProvider) error {
			u := newOAuthUser(p)
			_, err := c.oauth2SignIn(ctx, p, u, true)
			return err
		}),
	},
	{
		ID:      "AUTH-OAUTH2-003",
		Source:  SourceDocument,
		Section: sectionOAuth2 + "; " + refOAuth2,
		Name:    "a second OAuth2 sign-in finds the same user",
		Text: "A second auth-with-oauth2 for the same provider identity (a new code) answers 200 with the same " +
			"record id as the first and meta.isNew false.",
		Run: withOAuth2(func(ctx context.Context, c *Client, p *oauthProvider) error {
			u := newOAuthUser(p)
			first, err := c.oauth2SignIn(ctx, p, u, true)
			if err != nil {
				return fmt.Errorf("first sign-in: %w", err)
			}
			second, err := c.oauth2SignIn(ctx, p, u, false)
			if err != nil {
				return fmt.Errorf("second sign-in: %w", err)
			}
			if second != first {
				return Mismatch(fmt.Sprintf("record.id %q (the first sign-in's)", first), fmt.Sprintf("%q", second))
			}
			return nil
		}),
	},
	{
		ID:      "AUTH-OAUTH2-004",
		Source:  SourceDocument,
		Section: sectionOAuth2 + "; §5 status codes (400); " + refOAuth2,
		Name:    "a code the provider refuses",
		Text: "auth-with-oauth2 with a code the provider never issued (its token endpoint answers 400 invalid_grant) " +
			"answers 400 \"" + msgOAuth2Token + "\" with empty data.",
		Run: withOAuth2(func(ctx context.Context, c *Client, p *oauthProvider) error {
			m, err := oidcMethod(ctx, c, p)
			if err != nil {
				return err
			}
			r, err := c.authWithOAuth2(ctx, "users", map[string]any{"provider": "oidc", "code": "cf-code-never-issued-" + newNonce(8),
				"codeVerifier": m.verifier, "redirectURL": c.base + "/api/oauth2-redirect"})
			if err != nil {
				return err
			}
			return expectErrorEmptyData(r, http.StatusBadRequest, msgOAuth2Token)
		}),
	},
	{
		ID:      "AUTH-OAUTH2-005",
		Source:  SourcePocketBase,
		Section: sectionOAuth2 + "; §5 status codes (400); " + refOAuth2,
		Name:    "a failing user endpoint",
		Text: "auth-with-oauth2 with a good code whose access token the provider's user endpoint answers with 500 " +
			"answers 400 \"" + msgOAuth2User + "\" with empty data.",
		Run: withOAuth2(func(ctx context.Context, c *Client, p *oauthProvider) error {
			u := newOAuthUser(p)
			u.FailUserInfo = true
			body, err := c.oauth2Authorize(ctx, p, u)
			if err != nil {
				return err
			}
			r, err := c.authWithOAuth2(ctx, "users", body)
			if err != nil {
				return err
			}
			if err := expectErrorEmptyData(r, http.StatusBadRequest, msgOAuth2User); err != nil {
				return fmt.Errorf("%w%s", err, p.why(r))
			}
			return nil
		}),
	},
	{
		ID:      "AUTH-OAUTH2-006",
		Source:  SourceDocument,
		Section: sectionOAuth2 + "; §5 rule 5; §5 status codes (403); " + refOAuth2,
		Name:    "OAuth2 refused when the collection has it off",
		Text: "With the provider configured on users but oauth2.enabled false, auth-methods reports oauth2.enabled " +
			"false with no providers, and auth-with-oauth2 {provider \"oidc\", code, redirectURL} answers 403 \"" +
			msgOAuth2Off + "\".",
		Run: func(ctx context.Context, c *Client) error {
			p, err := c.oauth2Fixture(ctx, false)
			if err != nil {
				return err
			}
			if err := expectNoOAuth2(ctx, c, "users"); err != nil {
				return err
			}
			r, err := c.authWithOAuth2(ctx, "users", map[string]any{"provider": "oidc", "code": "cf-code-" + newNonce(8),
				"codeVerifier": newNonce(43), "redirectURL": c.base + "/api/oauth2-redirect"})
			if err != nil {
				return err
			}
			if _, err := expectError(r, http.StatusForbidden, msgOAuth2Off); err != nil {
				return fmt.Errorf("%w%s", err, p.refused())
			}
			return nil
		},
	},
	{
		ID:      "AUTH-OAUTH2-007",
		Source:  SourcePocketBase,
		Section: sectionOAuth2 + "; PocketBase v0.31.0 (body validation errors under its loading message)",
		Name:    "a provider not configured on the collection",
		Text: "With only \"oidc\" configured, auth-with-oauth2 with provider \"oidc2\" (a name PocketBase registers) " +
			"and with a name no server registers, each with a code and a redirectURL, answers 400 \"" + msgLoadFailed +
			"\" with data.provider.code \"" + codeInvalidProvider + "\".",
		Run: withOAuth2(func(ctx context.Context, c *Client, _ *oauthProvider) error {
			for _, name := range []string{"oidc2", "cf_" + newNonce(8)} {
				r, err := c.authWithOAuth2(ctx, "users", map[string]any{"provider": name, "code": "cf-code-" + newNonce(8),
					"codeVerifier": newNonce(43), "redirectURL": c.base + "/api/oauth2-redirect"})
				if err != nil {
					return err
				}
				env, err := expectError(r, http.StatusBadRequest, msgLoadFailed)
				if err == nil {
					err = expectFieldCodes(r, env, codeInvalidProvider, "provider")
				}
				if err != nil {
					return fmt.Errorf("provider %q: %w", name, err)
				}
			}
			return nil
		}),
	},
	{
		ID:      "AUTH-OAUTH2-008",
		Source:  SourcePocketBase,
		Section: sectionOAuth2 + "; PocketBase v0.31.0 (body validation errors under its loading message)",
		Name:    "code and redirectURL are required",
		Text: "auth-with-oauth2 {provider \"oidc\"} without code and redirectURL answers 400 \"" + msgLoadFailed +
			"\" with data.code.code and data.redirectURL.code \"" + codeRequired + "\" and nothing under data.provider.",
		Run: withOAuth2(func(ctx context.Context, c *Client, _ *oauthProvider) error {
			r, err := c.authWithOAuth2(ctx, "users", map[string]any{"provider": "oidc"})
			if err != nil {
				return err
			}
			env, err := expectError(r, http.StatusBadRequest, msgLoadFailed)
			if err != nil {
				return err
			}
			if err := expectFieldCodes(r, env, codeRequired, "code", "redirectURL"); err != nil {
				return err
			}
			if _, ok := env.data["provider"]; ok {
				return Mismatch("nothing under data.provider (oidc is configured)", r.String())
			}
			return nil
		}),
	},
	{
		ID:      "AUTH-OAUTH2-009",
		Source:  SourceDocument,
		Section: "§5 rule 4; §2.7; §4.5 auth-with-oauth2; PocketBase v0.31.0 (_superusers cannot enable OAuth2)",
		Name:    "never OAuth2 for _superusers",
		Text: "After PATCH /api/collections/_superusers with oauth2 {enabled true, providers [the suite's \"oidc\"]} " +
			"(refused with 400, or accepted and undone on save), auth-methods of _superusers reports oauth2.enabled " +
			"false with no providers, and auth-with-oauth2 on _superusers answers 403 \"" + msgOAuth2Off + "\".",
		Run: func(ctx context.Context, c *Client) error {
			p, orig, err := c.oauth2Setup(ctx, "_superusers")
			if err != nil {
				return err
			}
			r, err := c.patchOAuth2(ctx, "_superusers", p, orig, true)
			if err != nil {
				return err
			}
			if r.status != http.StatusOK && r.status != http.StatusBadRequest {
				return Mismatch("PATCH of _superusers oauth2 answered 200 or 400", r.String())
			}
			if err := expectNoOAuth2(ctx, c, "_superusers"); err != nil {
				return err
			}
			r, err = c.authWithOAuth2(ctx, "_superusers", map[string]any{"provider": "oidc", "code": "cf-code-" + newNonce(8),
				"codeVerifier": newNonce(43), "redirectURL": c.base + "/api/oauth2-redirect"})
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusForbidden, msgOAuth2Off)
			return err
		},
	},
	oauth2EmailMatch("AUTH-OAUTH2-010", false),
	oauth2EmailMatch("AUTH-OAUTH2-011", true),
}

// ---- fixture -------------------------------------------------------------------

// oauth2Fixture starts the provider and configures it on users as "oidc",
// with oauth2.enabled as given; a refusal skips the check.
func (c *Client) oauth2Fixture(ctx context.Context, enabled bool) (*oauthProvider, error) {
	p, orig, err := c.oauth2Setup(ctx, "users")
	if err != nil {
		return nil, err
	}
	r, err := c.patchOAuth2(ctx, "users", p, orig, enabled)
	if err != nil {
		return nil, err
	}
	if r.status != http.StatusOK {
		return nil, Skipf("the server refused the suite's OAuth2 provider on users: PATCH /api/collections/users answered %s", r)
	}
	return p, nil
}

// oauth2Setup reads the oauth2 options of coll, starts the provider, and
// registers the cleanups that put the options back and stop it. A
// collection that already has providers skips the check: their
// clientSecret is never returned, so they could not be put back.
func (c *Client) oauth2Setup(ctx context.Context, coll string) (*oauthProvider, map[string]any, error) {
	path := "/api/collections/" + seg(coll)
	m, err := getCollectionJSON(ctx, c, coll)
	if err != nil {
		return nil, nil, fmt.Errorf("fixture: GET %s: %w", path, err)
	}
	orig, ok := getObject(m, "oauth2")
	if !ok {
		return nil, nil, Skipf("GET %s shows no oauth2 object, so the suite cannot configure its OAuth2 provider", path)
	}
	if ps, _ := getArray(orig, "providers"); len(ps) > 0 {
		return nil, nil, Skipf("%s already has OAuth2 providers (%s); GET never returns their clientSecret, so the suite "+
			"could not put them back after configuring its own", coll, jsonText(ps))
	}
	serverHost, listenHost := fixtureHosts(c.opts.oauth2Host)
	p, err := startOAuthProvider(listenHost, serverHost)
	if err != nil {
		return nil, nil, fmt.Errorf("fixture: %w", err)
	}
	c.Cleanup("stop the OAuth2 provider", func(context.Context) error { return p.Close() })
	c.Cleanup("restore the oauth2 options of "+coll, func(ctx context.Context) error {
		if now, err := getCollectionJSON(ctx, c, coll); err == nil && reflect.DeepEqual(now["oauth2"], orig) {
			return nil
		}
		if err := c.patchOK(ctx, path, map[string]any{"oauth2": orig}); err != nil {
			return err
		}
		now, err := getCollectionJSON(ctx, c, coll)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(now["oauth2"], orig) {
			return fmt.Errorf("oauth2 is %s after the restore, want %s", jsonText(now["oauth2"]), jsonText(orig))
		}
		return nil
	})
	return p, orig, nil
}

// patchOAuth2 sets the oauth2 options of coll to orig with enabled as
// given and the provider p as the only provider, "oidc".
func (c *Client) patchOAuth2(ctx context.Context, coll string, p *oauthProvider, orig map[string]any, enabled bool) (*response, error) {
	o := maps.Clone(orig)
	o["enabled"] = enabled
	o["providers"] = []any{map[string]any{
		"name": "oidc", "displayName": oauthDisplayName, "clientId": p.clientID, "clientSecret": p.clientSecret,
		"authURL": p.base + oauthPathAuthorize, "tokenURL": p.base + oauthPathToken, "userInfoURL": p.base + oauthPathUserInfo,
		"pkce": true,
	}}
	return c.do(ctx, http.MethodPatch, "/api/collections/"+seg(coll), c.su, map[string]any{"oauth2": o})
}

// ---- helpers -------------------------------------------------------------------

// withOAuth2 is the Run of a check that starts with the provider
// configured and enabled on users (oauth2Fixture).
func withOAuth2(f func(ctx context.Context, c *Client, p *oauthProvider) error) func(context.Context, *Client) error {
	return func(ctx context.Context, c *Client) error {
		p, err := c.oauth2Fixture(ctx, true)
		if err != nil {
			return err
		}
		return f(ctx, c, p)
	}
}

// newOAuthUser is a new identity at p with a verified email; its picture
// is served by p.
func newOAuthUser(p *oauthProvider) *oauthUser {
	n := newNonce(12)
	return &oauthUser{Sub: "cf-sub-" + n, Email: "cf-" + n + "@example.com", EmailVerified: true,
		Name: "Conformance " + n, Picture: p.base + oauthPathAvatar + "?u=" + n}
}

// oidcInfo is the "oidc" provider of an auth-methods answer.
type oidcInfo struct {
	state, verifier, challenge, authURL string
}

// reVerifier is a PKCE code verifier (RFC 7636 §4.1).
var reVerifier = regexp.MustCompile(`^[A-Za-z0-9._~-]{43,128}$`)

// oidcMethod reads auth-methods of users and checks its "oidc" provider
// against what the suite configured.
func oidcMethod(ctx context.Context, c *Client, p *oauthProvider) (*oidcInfo, error) {
	r, m, err := c.getOK(ctx, "/api/collections/users/auth-methods", "")
	if err != nil {
		return nil, err
	}
	oa, _ := getObject(m, "oauth2")
	if on, _ := getBool(oa, "enabled"); !on {
		return nil, Mismatch("oauth2.enabled true", r.String())
	}
	providers, _ := getArray(oa, "providers")
	var po map[string]any
	for _, x := range providers {
		if o, ok := x.(map[string]any); ok && o["name"] == "oidc" {
			po = o
		}
	}
	if po == nil {
		return nil, Mismatch(`a provider named "oidc" in oauth2.providers`, r.String())
	}
	str := func(k string) string { s, _ := getString(po, k); return s }
	info := &oidcInfo{state: str("state"), verifier: str("codeVerifier"), challenge: str("codeChallenge"), authURL: str("authURL")}
	switch {
	case str("displayName") != oauthDisplayName:
		return nil, Mismatch(fmt.Sprintf("displayName %q (the configured one)", oauthDisplayName), jsonText(po))
	case info.state == "":
		return nil, Mismatch("a non-empty state", jsonText(po))
	case !reVerifier.MatchString(info.verifier):
		return nil, Mismatch("a codeVerifier of 43 to 128 unreserved characters (RFC 7636 §4.1)", jsonText(po))
	case info.challenge != pkceChallenge(info.verifier):
		return nil, Mismatch(fmt.Sprintf("codeChallenge %q, base64url(SHA-256(codeVerifier))", pkceChallenge(info.verifier)), jsonText(po))
	case str("codeChallengeMethod") != "S256":
		return nil, Mismatch(`codeChallengeMethod "S256"`, jsonText(po))
	}
	prefix := p.base + oauthPathAuthorize + "?"
	rest, ok := strings.CutPrefix(info.authURL, prefix)
	if !ok || !strings.HasSuffix(info.authURL, "redirect_uri=") {
		return nil, Mismatch(fmt.Sprintf("an authURL starting with %q and ending with \"redirect_uri=\"", prefix), jsonText(po))
	}
	q, err := url.ParseQuery(rest)
	if err != nil {
		return nil, Mismatch("an authURL with a valid query", fmt.Sprintf("%q (%v)", info.authURL, err))
	}
	for k, want := range map[string]string{"client_id": p.clientID, "response_type": "code", "state": info.state,
		"code_challenge": info.challenge, "code_challenge_method": "S256", "redirect_uri": ""} {
		if got := q[k]; len(got) != 1 || got[0] != want {
			return nil, Mismatch(fmt.Sprintf("%s=%s in authURL", k, url.QueryEscape(want)), fmt.Sprintf("%q", info.authURL))
		}
	}
	return info, nil
}

// oauth2Authorize does what a browser does between auth-methods and the
// redirect: it announces u to the provider for the state of auth-methods,
// opens the authURL completed with the redirect URL, and reads the code
// from the provider's redirect. It returns the body of auth-with-oauth2.
func (c *Client) oauth2Authorize(ctx context.Context, p *oauthProvider, u *oauthUser) (map[string]any, error) {
	m, err := oidcMethod(ctx, c, p)
	if err != nil {
		return nil, err
	}
	redirectURL := c.base + "/api/oauth2-redirect"
	p.expect(m.state, u)
	// The authURL names the host the server reaches the provider at; the
	// suite opens it where the provider listens.
	open := p.local + strings.TrimPrefix(m.authURL, p.base) + url.QueryEscape(redirectURL)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, open, nil)
	if err != nil {
		return nil, fmt.Errorf("opening the authURL: %w", err)
	}
	hc := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("opening the authURL: %w", err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil || loc.Query().Get("code") == "" {
		return nil, Mismatch("an authURL the provider accepts (302 to the redirect URL with a code)",
			fmt.Sprintf("%d from %s%s", resp.StatusCode, m.authURL, p.refused()))
	}
	if got := loc.Query().Get("state"); got != m.state {
		return nil, fmt.Errorf("fixture: the provider echoed state %q, want %q", got, m.state)
	}
	return map[string]any{"provider": "oidc", "code": loc.Query().Get("code"), "codeVerifier": m.verifier,
		"redirectURL": redirectURL}, nil
}

// authWithOAuth2 posts body to auth-with-oauth2 of coll.
func (c *Client) authWithOAuth2(ctx context.Context, coll string, body map[string]any) (*response, error) {
	return c.post(ctx, "/api/collections/"+seg(coll)+"/auth-with-oauth2", "", body)
}

// oauth2SignIn signs u in through the provider and auth-with-oauth2,
// requires the §2.6 result with the meta of u and isNew as given, and
// returns the record id. A record in the answer is deleted afterwards.
func (c *Client) oauth2SignIn(ctx context.Context, p *oauthProvider, u *oauthUser, isNew bool) (string, error) {
	body, err := c.oauth2Authorize(ctx, p, u)
	if err != nil {
		return "", err
	}
	r, err := c.authWithOAuth2(ctx, "users", body)
	if err != nil {
		return "", err
	}
	m, _ := object(r)
	rec, _ := getObject(m, "record")
	id, _ := getString(rec, "id")
	if r.status == http.StatusOK && id != "" {
		c.Cleanup("delete the OAuth2 user "+u.Email, func(ctx context.Context) error {
			return c.deleteUser(ctx, &user{id: id, email: u.Email})
		})
	}
	if err := checkAuthResult(r, "users", "", u.Email); err != nil {
		return "", fmt.Errorf("%w%s", err, p.why(r))
	}
	if v, _ := getBool(rec, "verified"); !v {
		return "", Mismatch("record.verified true (its email is the provider's verified one)", r.String())
	}
	meta, ok := getObject(m, "meta")
	if !ok {
		return "", Mismatch("a meta object", r.String())
	}
	var missing []string
	for _, k := range metaKeys {
		if _, ok := meta[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return "", Mismatch("meta with the keys "+strings.Join(metaKeys, ", "), fmt.Sprintf("no %s in %s", strings.Join(missing, ", "), r))
	}
	if got, ok := getBool(meta, "isNew"); !ok || got != isNew {
		return "", Mismatch(fmt.Sprintf("meta.isNew %v", isNew), jsonText(meta["isNew"]))
	}
	for k, want := range map[string]string{"id": u.Sub, "email": u.Email, "name": u.Name, "avatarURL": u.Picture} {
		if got, _ := getString(meta, k); got != want {
			return "", Mismatch(fmt.Sprintf("meta.%s %q (the provider's)", k, want), jsonText(meta[k]))
		}
	}
	if tok, _ := getString(meta, "accessToken"); tok == "" {
		return "", Mismatch("meta.accessToken the provider's access token", jsonText(meta["accessToken"]))
	}
	if _, ok := getObject(meta, "rawUser"); !ok {
		return "", Mismatch("meta.rawUser an object", jsonText(meta["rawUser"]))
	}
	return id, nil
}

// expectNoOAuth2 requires auth-methods of coll to report oauth2.enabled
// false with no providers.
func expectNoOAuth2(ctx context.Context, c *Client, coll string) error {
	r, m, err := c.getOK(ctx, "/api/collections/"+seg(coll)+"/auth-methods", "")
	if err != nil {
		return err
	}
	oa, _ := getObject(m, "oauth2")
	on, ok := getBool(oa, "enabled")
	ps, isArray := getArray(oa, "providers")
	if !ok || on || !isArray || len(ps) != 0 {
		return Mismatch(fmt.Sprintf("auth-methods of %s with oauth2 {enabled false, providers []}", coll), r.String())
	}
	return nil
}

// oauth2EmailMatch builds the requirement that an OAuth2 sign-in whose
// provider reports the verified email of an existing user signs in as
// that user, as PocketBase v0.31.0 does, and that the user's password then
// still works only if the user was verified: an unverified account gets a
// new random password, so that whoever signed it up with someone else's
// email cannot keep a way in (PocketBase's account-takeover protection).
func oauth2EmailMatch(id string, verified bool) *Requirement {
	who, after := "an unverified user (signed up with a password)", "that password no longer signs in (400)"
	name := "OAuth2 with an unverified user's email takes the account over safely"
	if verified {
		who, after = "a verified user", "that password still signs in (200)"
		name = "OAuth2 with a verified user's email signs in as that user"
	}
	return &Requirement{
		ID:      id,
		Source:  SourcePocketBase,
		Section: sectionOAuth2 + " (meta.isNew); " + refOAuth2 + " (email match, account-takeover protection)",
		Name:    name,
		Text: "auth-with-oauth2 for a provider identity whose verified email is that of " + who + " answers 200 " +
			"with that user's record (same id, verified true) and meta.isNew false, and afterwards " + after + ".",
		Run: withOAuth2(func(ctx context.Context, c *Client, p *oauthProvider) error {
			u, err := c.newUser(ctx)
			if err != nil {
				return err
			}
			if verified {
				if err := c.patchUser(ctx, u, map[string]any{"verified": true}); err != nil {
					return err
				}
			}
			ou := newOAuthUser(p)
			ou.Email = u.email
			got, err := c.oauth2SignIn(ctx, p, ou, false)
			if err != nil {
				return err
			}
			if got != u.id {
				return Mismatch(fmt.Sprintf("record.id %q (the existing user's)", u.id), fmt.Sprintf("%q", got))
			}
			r, err := passwordLogin(ctx, c, "", u.email, u.password)
			if err != nil {
				return err
			}
			if verified {
				return checkAuthResult(r, "users", u.id, u.email)
			}
			_, err = expectError(r, http.StatusBadRequest, msgFailedAuth)
			return err
		}),
	}
}
