package conformance

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// The OAuth2 provider: the identity provider of the OAuth2 checks
// (oauth2.go). It is an HTTP server of the suite's own, on 127.0.0.1 and
// port 0 unless Config.OAuth2Host names another address, that plays a
// minimal OpenID Connect provider for one client (RFC 6749 §4.1, the
// authorization code grant; RFC 7636, PKCE):
//
//   - GET /authorize checks client_id, response_type=code, a redirect_uri,
//     a state and, when a code_challenge is sent, the method S256; it
//     redirects (302) to redirect_uri with a fresh code and the state. The
//     user it signs in is the one a check announced for that state
//     (expect), so a check decides who the server will see.
//   - POST /token checks the client (HTTP Basic, RFC 6749 §2.3.1, or
//     client_id and client_secret in the body), grant_type, that the code
//     is one it issued and not yet used, redirect_uri equal to the one
//     of the authorization request and, when a challenge was sent,
//     base64url(SHA-256(code_verifier)) equal to it (RFC 7636 §4.6); it
//     answers a Bearer access token (RFC 6749 §5.1), or 400 invalid_grant
//     (401 invalid_client) with the reason kept for the check's report.
//   - GET /userinfo with that Bearer token answers the user's claims
//     (sub, email, email_verified, name, picture), or 500 when the check
//     asked for a failing user endpoint.
//   - GET /avatar.png answers a 1×1 PNG: the users' picture, so that a
//     server that downloads avatars (PocketBase does) never leaves for
//     another host.
//
// Everything is kept in maps under one mutex; codes are single use.
// Requests are bounded by the server's timeouts and a 64 KiB form.

// Paths of the provider's endpoints.
const (
	oauthPathAuthorize = "/authorize"
	oauthPathToken     = "/token"
	oauthPathUserInfo  = "/userinfo"
	oauthPathAvatar    = "/avatar.png"
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

// oauthGrant is an issued code: who it signs in and what the token request
// must repeat.
type oauthGrant struct {
	user        *oauthUser
	redirectURI string
	challenge   string // "" when the authorization request sent none
}

// oauthProvider is a running provider. Close stops it.
type oauthProvider struct {
	ln           net.Listener
	srv          *http.Server
	clientID     string
	clientSecret string
	// base is the provider's root as the server under test reaches it
	// (scheme, the configured host and the port); local the same as the
	// suite reaches it.
	base, local string

	mu       sync.Mutex
	expected map[string]*oauthUser  // by state, announced by a check
	codes    map[string]*oauthGrant // unused codes
	tokens   map[string]*oauthUser  // access token → user
	refusals []string               // why requests were refused, oldest first
}

// startOAuthProvider listens on listenHost (an IP address; "" means every
// interface) at a free port; serverHost is the host the server under test
// is told to reach it at.
func startOAuthProvider(listenHost, serverHost string) (*oauthProvider, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(listenHost, "0"))
	if err != nil {
		return nil, fmt.Errorf("OAuth2 provider: %w", err)
	}
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	localHost := listenHost
	if localHost == "" {
		localHost = "127.0.0.1"
	}
	p := &oauthProvider{ln: ln, clientID: "cf-client-" + newNonce(8), clientSecret: "cf-secret-" + newNonce(24),
		base: "http://" + net.JoinHostPort(serverHost, port), local: "http://" + net.JoinHostPort(localHost, port),
		expected: map[string]*oauthUser{}, codes: map[string]*oauthGrant{}, tokens: map[string]*oauthUser{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+oauthPathAuthorize, p.authorize)
	mux.HandleFunc("POST "+oauthPathToken, p.token)
	mux.HandleFunc("GET "+oauthPathUserInfo, p.userInfo)
	mux.HandleFunc("GET "+oauthPathAvatar, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		png.Encode(w, image.NewGray(image.Rect(0, 0, 1, 1)))
	})
	p.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10}
	go p.srv.Serve(ln)
	return p, nil
}

// Close stops the provider and ends its connections.
func (p *oauthProvider) Close() error { return p.srv.Close() }

// expect announces the user the authorization with this state signs in.
func (p *oauthProvider) expect(state string, u *oauthUser) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expected[state] = u
}

// refused returns why the provider refused requests so far, for a
// failure's detail ("" when it refused none).
func (p *oauthProvider) refused() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.refusals) == 0 {
		return ""
	}
	return " (the suite's provider refused: " + strings.Join(p.refusals, "; ") + ")"
}

// refuse records why a request was refused and answers the OAuth2 error
// JSON (RFC 6749 §5.2).
func (p *oauthProvider) refuse(w http.ResponseWriter, status int, code, why string) {
	p.mu.Lock()
	p.refusals = append(p.refusals, why)
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": why})
}

func (p *oauthProvider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state, redirect, challenge := q.Get("state"), q.Get("redirect_uri"), q.Get("code_challenge")
	switch {
	case q.Get("client_id") != p.clientID:
		p.refuse(w, http.StatusBadRequest, "unauthorized_client", fmt.Sprintf("authorize: client_id %q", q.Get("client_id")))
		return
	case q.Get("response_type") != "code":
		p.refuse(w, http.StatusBadRequest, "unsupported_response_type", fmt.Sprintf("authorize: response_type %q", q.Get("response_type")))
		return
	case redirect == "":
		p.refuse(w, http.StatusBadRequest, "invalid_request", "authorize: no redirect_uri")
		return
	case challenge != "" && q.Get("code_challenge_method") != "S256":
		p.refuse(w, http.StatusBadRequest, "invalid_request",
			fmt.Sprintf("authorize: code_challenge_method %q, want S256", q.Get("code_challenge_method")))
		return
	}
	p.mu.Lock()
	u := p.expected[state]
	delete(p.expected, state)
	p.mu.Unlock()
	if u == nil {
		p.refuse(w, http.StatusBadRequest, "access_denied", fmt.Sprintf("authorize: state %q announces no user", state))
		return
	}
	code := "cf-code-" + newNonce(24)
	p.mu.Lock()
	p.codes[code] = &oauthGrant{user: u, redirectURI: redirect, challenge: challenge}
	p.mu.Unlock()
	to, err := url.Parse(redirect)
	if err != nil {
		p.refuse(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("authorize: redirect_uri %q", redirect))
		return
	}
	back := to.Query()
	back.Set("code", code)
	back.Set("state", state)
	to.RawQuery = back.Encode()
	http.Redirect(w, r, to.String(), http.StatusFound)
}

func (p *oauthProvider) token(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		p.refuse(w, http.StatusBadRequest, "invalid_request", "token: "+err.Error())
		return
	}
	id, secret, basic := r.BasicAuth()
	if basic {
		// RFC 6749 §2.3.1: the credentials are form-encoded first.
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != p.clientID || subtle.ConstantTimeCompare([]byte(secret), []byte(p.clientSecret)) != 1 {
		p.refuse(w, http.StatusUnauthorized, "invalid_client", fmt.Sprintf("token: client %q with a wrong or no secret", id))
		return
	}
	if gt := r.PostForm.Get("grant_type"); gt != "authorization_code" {
		p.refuse(w, http.StatusBadRequest, "unsupported_grant_type", fmt.Sprintf("token: grant_type %q", gt))
		return
	}
	code := r.PostForm.Get("code")
	p.mu.Lock()
	g := p.codes[code]
	delete(p.codes, code)
	p.mu.Unlock()
	if g == nil {
		p.refuse(w, http.StatusBadRequest, "invalid_grant", fmt.Sprintf("token: code %q was never issued or is used", code))
		return
	}
	if ru := r.PostForm.Get("redirect_uri"); ru != g.redirectURI {
		p.refuse(w, http.StatusBadRequest, "invalid_grant",
			fmt.Sprintf("token: redirect_uri %q, the authorization request had %q", ru, g.redirectURI))
		return
	}
	verifier := r.PostForm.Get("code_verifier")
	switch {
	case g.challenge == "" && verifier != "":
		p.refuse(w, http.StatusBadRequest, "invalid_grant", "token: a code_verifier for a code issued without a challenge")
		return
	case g.challenge != "" && pkceChallenge(verifier) != g.challenge:
		p.refuse(w, http.StatusBadRequest, "invalid_grant", fmt.Sprintf("token: code_verifier %q does not match the challenge", verifier))
		return
	}
	access := "cf-access-" + newNonce(24)
	p.mu.Lock()
	p.tokens[access] = g.user
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": 3600,
		"refresh_token": "cf-refresh-" + newNonce(24), "scope": "openid email profile"})
}

func (p *oauthProvider) userInfo(w http.ResponseWriter, r *http.Request) {
	access, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	p.mu.Lock()
	u := p.tokens[access]
	p.mu.Unlock()
	switch {
	case !ok || u == nil:
		p.refuse(w, http.StatusUnauthorized, "invalid_token", "userinfo: no or an unknown Bearer token")
		return
	case u.FailUserInfo:
		// Asked for by the check: not a refusal to report.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"error":"server_error","error_description":"the user endpoint fails on purpose"}`)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(u.claims())
}

// pkceChallenge is the S256 challenge of verifier: base64url(SHA-256),
// without padding (RFC 7636 §4.2).
func pkceChallenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
