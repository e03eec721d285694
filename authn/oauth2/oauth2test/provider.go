// Package oauth2test runs an OAuth2 / OpenID Connect provider on loopback
// for tests: an authorization endpoint that a test's "browser" can visit
// (it redirects back with a code, or an error, as the user at the
// keyboard was told to answer: SignIn, Deny), an authorization-code token
// endpoint that enforces PKCE
// (RFC 7636 §4.6) and the client's credentials, a user-info endpoint, a
// GitHub-style emails endpoint, a JWKS with an RSA key generated in the
// process, and signed id_tokens. Each endpoint can be told to misbehave
// (Mode): answer 500, hang, answer malformed JSON or a huge body, or
// redirect to another host.
//
//	p := oauth2test.New(t)
//	code := p.Grant(oauth2test.Grant{User: map[string]any{"sub": "1"}})
//	// exchange code at p.URL+oauth2test.PathToken
package oauth2test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The provider's endpoint paths, under Provider.URL.
const (
	PathAuthorize = "/authorize"
	PathToken     = "/token"
	PathUserInfo  = "/userinfo"
	PathEmails    = "/userinfo/emails"
	PathJWKS      = "/jwks"
	PathDiscovery = "/.well-known/openid-configuration"
)

// Mode is how an endpoint behaves.
type Mode int32

const (
	ModeOK       Mode = iota // answer normally
	Mode500                  // answer 500 with an OAuth2 error body
	ModeHang                 // never answer (until the client gives up)
	ModeBadJSON              // answer 200 with malformed JSON
	ModeHugeBody             // answer 200 with a body of HugeBodySize bytes
	ModeRedirect             // redirect (307) to the same path on another host
)

// HugeBodySize is the size of a ModeHugeBody answer: 2 MiB.
const HugeBodySize = 2 << 20

// Grant is what one authorization code stands for.
type Grant struct {
	// Challenge is the PKCE S256 code challenge sent with the
	// authorization request; "" = none was sent, and then a code_verifier
	// is refused (RFC 9700 §2.1.1 downgrade protection).
	Challenge string
	// RedirectURI, when set, must equal the token request's redirect_uri.
	RedirectURI string
	// User is the user-info JSON (any value json.Marshal accepts), served
	// to the access token this code buys.
	User any
	// Emails is the emails-endpoint JSON (GitHub's list shape).
	Emails any
	// IDToken, when not nil, are the claims of a signed id_token returned
	// with the token. The provider adds iss, aud and the times unless set.
	IDToken map[string]any
	// Token adds or replaces fields of the token response.
	Token map[string]any
}

// Provider is a running fake provider. Its fields are set by New.
type Provider struct {
	URL          string // base URL, http://127.0.0.1:port
	Issuer       string // the iss of its id_tokens (= URL)
	ClientID     string
	ClientSecret string
	Key          *rsa.PrivateKey // signs id_tokens; published in the JWKS
	KeyID        string
	// Now is the clock of id_token times; set it before use.
	Now func() time.Time
	// RedirectURIs are the client's registered redirect URIs; when set,
	// the authorization endpoint accepts only these (exactly). Set it
	// before use.
	RedirectURIs []string

	srv   *httptest.Server
	other *httptest.Server // the other host of ModeRedirect
	done  chan struct{}    // closed when the test ends: hanging handlers return

	modes    sync.Map // path → Mode
	basicOff atomic.Bool

	mu     sync.Mutex
	codes  map[string]*Grant // unused codes
	tokens map[string]*Grant // access token → grant
	n      int
	login  *Grant // who signs in at PathAuthorize; nil = nobody (denied)
	deny   string // the error PathAuthorize answers when login is nil

	requests atomic.Int64
	busy     atomic.Int64 // nanoseconds spent in handlers
}

var (
	keyOnce sync.Once
	key     *rsa.PrivateKey
)

// rsaKey is generated once per test binary: 2048-bit keys take a while.
func rsaKey() *rsa.PrivateKey {
	keyOnce.Do(func() {
		var err error
		if key, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
	})
	return key
}

// New starts a provider on 127.0.0.1 with client "client-id" /
// "client-secret"; it stops when the test ends.
func New(tb testing.TB) *Provider {
	tb.Helper()
	p := &Provider{
		ClientID:     "client-id",
		ClientSecret: "client-secret",
		Key:          rsaKey(),
		KeyID:        "k1",
		Now:          time.Now,
		done:         make(chan struct{}),
		codes:        map[string]*Grant{},
		tokens:       map[string]*Grant{},
		deny:         "access_denied",
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PathAuthorize, p.handleAuthorize)
	mux.HandleFunc("POST "+PathToken, p.handleToken)
	mux.HandleFunc("GET "+PathUserInfo, p.handleUserInfo)
	mux.HandleFunc("GET "+PathEmails, p.handleEmails)
	mux.HandleFunc("GET "+PathJWKS, p.handleJWKS)
	mux.HandleFunc("GET "+PathDiscovery, p.handleDiscovery)
	p.srv = newLoopback(tb, p.wrap(mux))
	p.other = newLoopback(tb, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"access_token":"from-the-other-host","sub":"other"}`)
	}))
	p.URL, p.Issuer = p.srv.URL, p.srv.URL
	tb.Cleanup(func() {
		close(p.done)
		p.srv.Close()
		p.other.Close()
	})
	return p
}

func newLoopback(tb testing.TB, h http.Handler) *httptest.Server {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("oauth2test: listen: %v", err)
	}
	s := httptest.NewUnstartedServer(h)
	s.Listener.Close()
	s.Listener = l
	s.Start()
	return s
}

// SetMode makes the endpoint at path behave as m (ModeOK to restore).
func (p *Provider) SetMode(path string, m Mode) { p.modes.Store(path, m) }

// RefuseBasicAuth makes the token endpoint refuse HTTP Basic client
// authentication (400 invalid_client), so that clients must send the
// credentials in the body.
func (p *Provider) RefuseBasicAuth(refuse bool) { p.basicOff.Store(refuse) }

// Grant registers an authorization code for g and returns it.
func (p *Provider) Grant(g Grant) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	code := fmt.Sprintf("code-%d-%s", p.n, random(8))
	p.codes[code] = &g
	return code
}

// SignIn plays the user at the provider's authorization page: from now
// on every valid authorization request is approved for g, with a fresh
// code whose Challenge and RedirectURI are the request's.
func (p *Provider) SignIn(g Grant) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.login = &g
}

// Deny makes the user refuse: from now on every valid authorization
// request is sent back with error=code (RFC 6749 §4.1.2.1, e.g.
// "access_denied") and no code. It is also how the provider starts.
func (p *Provider) Deny(code string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.login, p.deny = nil, code
}

// Stats returns how many requests the provider served and the mean time
// its handlers took: the provider's own latency, to report beside a
// client's.
func (p *Provider) Stats() (requests int64, mean time.Duration) {
	n := p.requests.Load()
	if n == 0 {
		return 0, 0
	}
	return n, time.Duration(p.busy.Load() / n)
}

// ResetStats zeroes the counters of Stats.
func (p *Provider) ResetStats() { p.requests.Store(0); p.busy.Store(0) }

// wrap applies the endpoint's Mode and counts the handler's time.
func (p *Provider) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		defer func() {
			p.requests.Add(1)
			p.busy.Add(int64(time.Since(start)))
		}()
		m, _ := p.modes.Load(r.URL.Path)
		switch m {
		case Mode500:
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "server_error", "error_description": "the provider failed"})
		case ModeHang:
			select {
			case <-r.Context().Done():
			case <-p.done:
			}
		case ModeBadJSON:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"access_token": "x", "sub": `)
		case ModeHugeBody:
			w.Header().Set("Content-Type", "application/json")
			chunk := []byte(`{"pad":"` + strings.Repeat("x", 1000) + `"}` + "\n")
			for n := 0; n < HugeBodySize; n += len(chunk) {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case ModeRedirect:
			http.Redirect(w, r, p.other.URL+r.URL.Path, http.StatusTemporaryRedirect)
		default:
			h.ServeHTTP(w, r)
		}
	})
}

// handleAuthorize serves the authorization request of the code flow
// (RFC 6749 §4.1.1), response_mode query only. A request with an unknown
// client_id or a bad redirect_uri is answered 400 here, never redirected
// (§4.1.2.1: the redirect URI is not trusted yet). Other faults go back
// to redirect_uri as error=invalid_request or unsupported_response_type,
// with the state: a code_challenge must be 43 base64url characters with
// code_challenge_method S256 (RFC 7636 §4.2, §4.4.1: "plain" is not
// supported). Otherwise the user answers as SignIn or Deny told: a
// redirect (302) with code and state, or with error and state.
func (p *Provider) handleAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != p.ClientID {
		oauthError(w, http.StatusBadRequest, "invalid_client", "unknown client_id")
		return
	}
	redirect := q.Get("redirect_uri")
	back, err := url.Parse(redirect)
	switch {
	case err != nil || (back.Scheme != "http" && back.Scheme != "https") || back.Host == "" || back.Fragment != "":
		oauthError(w, http.StatusBadRequest, "invalid_request", "redirect_uri must be an absolute http(s) URL without a fragment")
		return
	case len(p.RedirectURIs) > 0 && !slices.Contains(p.RedirectURIs, redirect):
		oauthError(w, http.StatusBadRequest, "invalid_request", "redirect_uri is not registered")
		return
	}
	// §3.1.2: the redirect keeps the query redirect_uri already has.
	answer := back.Query()
	if st := q.Get("state"); st != "" {
		answer.Set("state", st)
	}
	send := func() {
		back.RawQuery = answer.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	}
	challenge, method := q.Get("code_challenge"), q.Get("code_challenge_method")
	switch {
	case q.Get("response_type") != "code":
		answer.Set("error", "unsupported_response_type")
	case q.Has("response_mode") && q.Get("response_mode") != "query":
		answer.Set("error", "invalid_request")
		answer.Set("error_description", "only response_mode query is served")
	case challenge == "" && method != "":
		answer.Set("error", "invalid_request")
		answer.Set("error_description", "code_challenge_method without code_challenge")
	case challenge != "" && method != "S256":
		answer.Set("error", "invalid_request")
		answer.Set("error_description", "transform algorithm not supported")
	case challenge != "" && !isChallenge(challenge):
		answer.Set("error", "invalid_request")
		answer.Set("error_description", "code_challenge is not 43 base64url characters")
	}
	if answer.Has("error") {
		send()
		return
	}
	p.mu.Lock()
	login, deny := p.login, p.deny
	p.mu.Unlock()
	if login == nil {
		answer.Set("error", deny)
		send()
		return
	}
	g := *login
	g.Challenge, g.RedirectURI = challenge, redirect
	answer.Set("code", p.Grant(g))
	send()
}

// isChallenge reports whether s has the shape of an S256 challenge: the
// unpadded base64url of 32 bytes.
func isChallenge(s string) bool {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && len(b) == sha256.Size
}

// handleToken serves the authorization-code grant (RFC 6749 §4.1.3).
func (p *Provider) handleToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "malformed form")
		return
	}
	id, secret, basic := r.BasicAuth()
	if basic && p.basicOff.Load() {
		oauthError(w, http.StatusBadRequest, "invalid_client", "use client_secret_post")
		return
	}
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	} else {
		// RFC 6749 §2.3.1: both are form-urlencoded before Basic.
		id, secret = unescape(id), unescape(secret)
	}
	if id != p.ClientID || subtle.ConstantTimeCompare([]byte(secret), []byte(p.ClientSecret)) != 1 {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "bad client credentials")
		return
	}
	if gt := r.PostForm.Get("grant_type"); gt != "authorization_code" {
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "grant_type "+gt)
		return
	}
	code := r.PostForm.Get("code")
	p.mu.Lock()
	g := p.codes[code]
	delete(p.codes, code) // codes are single-use, even when the request fails
	p.mu.Unlock()
	if g == nil {
		oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown or used code")
		return
	}
	if g.RedirectURI != "" && r.PostForm.Get("redirect_uri") != g.RedirectURI {
		oauthError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri mismatch")
		return
	}
	verifier, sent := r.PostForm["code_verifier"]
	switch {
	case g.Challenge == "" && sent:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "code_verifier without a challenge")
		return
	case g.Challenge != "" && (!sent || s256(verifier[0]) != g.Challenge):
		oauthError(w, http.StatusBadRequest, "invalid_grant", "PKCE verification failed")
		return
	}
	access := "at-" + random(16)
	p.mu.Lock()
	p.tokens[access] = g
	p.mu.Unlock()
	resp := map[string]any{
		"access_token":  access,
		"token_type":    "Bearer",
		"expires_in":    3600,
		"refresh_token": "rt-" + random(16),
	}
	if g.IDToken != nil {
		resp["id_token"] = p.IDToken(g.IDToken)
	}
	for k, v := range g.Token {
		resp[k] = v
	}
	writeJSON(w, http.StatusOK, resp)
}

func (p *Provider) bearer(r *http.Request) *Grant {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tokens[tok]
}

func (p *Provider) handleUserInfo(w http.ResponseWriter, r *http.Request) {
	g := p.bearer(r)
	if g == nil {
		oauthError(w, http.StatusUnauthorized, "invalid_token", "bad access token")
		return
	}
	writeJSON(w, http.StatusOK, g.User)
}

func (p *Provider) handleEmails(w http.ResponseWriter, r *http.Request) {
	g := p.bearer(r)
	switch {
	case g == nil:
		oauthError(w, http.StatusUnauthorized, "invalid_token", "bad access token")
	case g.Emails == nil:
		oauthError(w, http.StatusNotFound, "not_found", "no emails")
	default:
		writeJSON(w, http.StatusOK, g.Emails)
	}
}

func (p *Provider) handleJWKS(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"keys": []any{JWK(&p.Key.PublicKey, p.KeyID)}})
}

func (p *Provider) handleDiscovery(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                 p.Issuer,
		"authorization_endpoint": p.URL + PathAuthorize,
		"token_endpoint":         p.URL + PathToken,
		"userinfo_endpoint":      p.URL + PathUserInfo,
		"jwks_uri":               p.URL + PathJWKS,
	})
}

// IDToken signs claims as an RS256 id_token with the provider's key,
// adding iss (Issuer), aud (ClientID), iat and exp (Now, Now+1h) when
// claims lack them. A claim set to nil is left out.
func (p *Provider) IDToken(claims map[string]any) string {
	now := p.Now()
	c := map[string]any{"iss": p.Issuer, "aud": p.ClientID, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	for k, v := range claims {
		if v == nil {
			delete(c, k)
			continue
		}
		c[k] = v
	}
	return Sign(p.Key, p.KeyID, c)
}

// Sign returns the compact RS256 JWS of claims under key, with kid in the
// header ("" = none).
func Sign(key *rsa.PrivateKey, kid string, claims any) string {
	h := map[string]string{"alg": "RS256", "typ": "JWT"}
	if kid != "" {
		h["kid"] = kid
	}
	hj, _ := json.Marshal(h)
	cj, err := json.Marshal(claims)
	if err != nil {
		panic(err)
	}
	in := b64(hj) + "." + b64(cj)
	sum := sha256.Sum256([]byte(in))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		panic(err)
	}
	return in + "." + b64(sig)
}

// JWK is the public key as a JWK (RFC 7517) for a JWKS.
func JWK(pub *rsa.PublicKey, kid string) map[string]string {
	return map[string]string{
		"kty": "RSA", "use": "sig", "alg": "RS256", "kid": kid,
		"n": b64(pub.N.Bytes()), "e": b64(big.NewInt(int64(pub.E)).Bytes()),
	}
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func s256(v string) string {
	sum := sha256.Sum256([]byte(v))
	return b64(sum[:])
}

func random(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return b64(b)
}

func unescape(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"server_error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}
