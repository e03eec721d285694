package conformance

import (
	"net/http"
	"strings"

	"strongbox/conformance/oauth2provider"
)

// The OAuth2 provider: the identity provider of the OAuth2 checks
// (oauth2.go), an HTTP server of the suite's own on 127.0.0.1 and port 0
// unless Config.OAuth2Host names another address. It is package
// oauth2provider, shared with the OAuth2 tests of the other packages;
// these names keep the checks' own. The user it signs in is the one a
// check announced for the state of the authorization request (expect), so
// a check decides who the server will see; users' pictures are its 1×1
// PNG, so that a server that downloads avatars (PocketBase does) never
// leaves for another host.

// Paths of the provider's endpoints.
const (
	oauthPathAuthorize = oauth2provider.PathAuthorize
	oauthPathToken     = oauth2provider.PathToken
	oauthPathUserInfo  = oauth2provider.PathUserInfo
	oauthPathAvatar    = oauth2provider.PathAvatar
)

// oauthUser is the user one authorization signs in, and how the provider
// treats the code it buys.
type oauthUser struct {
	Sub, Email, Name, Picture string
	EmailVerified             bool
	// FailUserInfo makes the user endpoint answer 500 for this user's
	// access token.
	FailUserInfo bool
}

// claims is the user-info JSON of u.
func (u *oauthUser) claims() map[string]any {
	return map[string]any{"sub": u.Sub, "email": u.Email, "email_verified": u.EmailVerified,
		"name": u.Name, "picture": u.Picture}
}

// oauthProvider is a running provider. Close stops it. base is its root
// as the server under test reaches it (scheme, the configured host and
// the port); local the same as the suite reaches it.
type oauthProvider struct {
	*oauth2provider.Provider
	base, local            string
	clientID, clientSecret string
}

// startOAuthProvider listens on listenHost (an IP address; "" means every
// interface) at a free port; serverHost is the host the server under test
// is told to reach it at.
func startOAuthProvider(listenHost, serverHost string) (*oauthProvider, error) {
	if listenHost == "" {
		listenHost = "*"
	}
	p, err := oauth2provider.New(oauth2provider.Options{Host: listenHost, ServerHost: serverHost,
		ClientID: "cf-client-" + newNonce(8), ClientSecret: "cf-secret-" + newNonce(24)})
	if err != nil {
		return nil, err
	}
	return &oauthProvider{Provider: p, base: p.URL, local: p.Local, clientID: p.ClientID, clientSecret: p.ClientSecret}, nil
}

// expect announces the user the authorization with this state signs in.
func (p *oauthProvider) expect(state string, u *oauthUser) {
	p.Expect(state, oauth2provider.Grant{User: u.claims(), FailUserInfo: u.FailUserInfo,
		Token: map[string]any{"scope": "openid email profile"}})
}

// refused returns why the provider refused requests so far, for a
// failure's detail ("" when it refused none).
func (p *oauthProvider) refused() string {
	why := p.Refused()
	if len(why) == 0 {
		return ""
	}
	return " (the suite's provider refused: " + strings.Join(why, "; ") + ")"
}

// why explains a sign-in that failed with the answer r: why the provider
// refused requests, or, when it refused none and r is the token step's
// 400, that the server may not have reached the provider at all. A server
// that refuses provider URLs on loopback and private addresses, as
// strongbox does unless STRONGBOX_OAUTH2_ALLOW_PRIVATE=1, cannot reach the
// suite's provider on 127.0.0.1 (or on a private --oauth2-host).
func (p *oauthProvider) why(r *response) string {
	if why := p.refused(); why != "" {
		return why
	}
	if r == nil || r.status != http.StatusBadRequest || r.exchange().Message != msgOAuth2Token {
		return ""
	}
	return " (the suite's provider refused nothing: did the server reach it at " + p.base + "? A server that " +
		"refuses OAuth2 provider URLs on loopback and private addresses cannot; strongbox needs " +
		"STRONGBOX_OAUTH2_ALLOW_PRIVATE=1 for it)"
}

// pkceChallenge is the S256 challenge of verifier: base64url(SHA-256),
// without padding (RFC 7636 §4.2).
func pkceChallenge(verifier string) string { return oauth2provider.S256(verifier) }
