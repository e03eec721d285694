// Package oauth2provider runs an OAuth2 / OpenID Connect provider: the
// identity provider of the conformance suite's OAuth2 checks, and of the
// OAuth2 tests of the other packages. It plays a minimal provider for one
// client (RFC 6749 §4.1, the authorization code grant; RFC 7636, PKCE):
// an authorization endpoint that a "browser" can visit (it redirects back
// with a code, or an error, as the user at the keyboard was told to
// answer: Expect for one state, SignIn, Deny), an authorization-code token
// endpoint that enforces PKCE (RFC 7636 §4.6) and the client's
// credentials, a user-info endpoint, a GitHub-style emails endpoint, a
// 1×1 PNG avatar, a JWKS with an RSA key generated in the process, and
// signed id_tokens. Each endpoint can be told to misbehave (Mode): answer
// 500, hang, answer malformed JSON or a huge body, or redirect to another
// host. Why it refused requests is kept (Refused), for a failure's report.
//
// It imports only the standard library (not even testing: the helpers for
// tests take a TB), so that the conformance suite, which imports nothing
// else from the project, can use it.
//
//	p := oauth2provider.Start(t)
//	code := p.Grant(oauth2provider.Grant{User: map[string]any{"sub": "1"}})
//	// exchange code at p.URL+oauth2provider.PathToken
package oauth2provider

import (
	"cmp"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
	PathAvatar    = "/avatar.png"
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
	// FailUserInfo makes the user endpoint answer 500 to the access token
	// this code buys.
	FailUserInfo bool
}

// Options configures a Provider.
type Options struct {
	// Host is the IP address to listen on: "" is 127.0.0.1, "*" every
	// interface.
	Host string
	// ServerHost is the host its URL names, where the client reaches it:
	// "" is Host (127.0.0.1 for every interface).
	ServerHost string
	// ClientID and ClientSecret are the one client's: "client-id" and
	// "client-secret" when empty.
	ClientID, ClientSecret string
}

// TB is the part of testing.TB the helpers for tests use.
type TB interface {
	Helper()
	Fatal(args ...any)
	Cleanup(func())
}

// Provider is a running provider. Its fields are set by New; Close stops
// it.
type Provider struct {
	URL          string // base URL as the client reaches it, http://<ServerHost>:port
	Local        string // base URL where it listens, http://<Host>:port (127.0.0.1 for every interface)
	Issuer       string // the iss of its id_tokens (= URL)
	ClientID     string
	ClientSecret string
	KeyID        string // of the key that signs id_tokens (the process's, generated on first use)
	// Now is the clock of id_token times; set it before use.
	Now func() time.Time
	// RedirectURIs are the client's registered redirect URIs; when set,
	// the authorization endpoint accepts only these (exactly). Set it
	// before use.
	RedirectURIs []string

	srv       *http.Server
	other     *http.Server // the other host of ModeRedirect, started by SetMode
	otherURL  string
	done      chan struct{} // closed by Close: hanging handlers return
	closeOnce sync.Once

	modes    sync.Map // path → Mode
	basicOff atomic.Bool

	mu       sync.Mutex
	codes    map[string]*Grant // unused codes
	tokens   map[string]*Grant // access token → grant
	n        int
	expected map[string]*Grant // who signs in, by state (Expect)
	login    *Grant            // who signs in at PathAuthorize otherwise; nil = nobody (denied)
	deny     string            // the error PathAuthorize answers when nobody signs in
	refusals []string          // why requests were refused, oldest first

	requests atomic.Int64
	busy     atomic.Int64 // nanoseconds spent in handlers
}

var (
	keyOnce sync.Once
	key     *rsa.PrivateKey
)

// rsaKey is generated once per process, on first use: 2048-bit keys take
// a while.
func rsaKey() *rsa.PrivateKey {
	keyOnce.Do(func() {
		var err error
		if key, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
	})
	return key
}

// New starts a provider on a free port of opts.Host; it serves until
// Close.
func New(opts Options) (*Provider, error) {
	listen, local := opts.Host, opts.Host
	switch opts.Host {
	case "":
		listen, local = "127.0.0.1", "127.0.0.1"
	case "*":
		listen, local = "", "127.0.0.1"
	}
	server := opts.ServerHost
	if server == "" {
		server = local
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(listen, "0"))
	if err != nil {
		return nil, fmt.Errorf("OAuth2 provider: %w", err)
	}
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	p := &Provider{
		URL: "http://" + net.JoinHostPort(server, port), Local: "http://" + net.JoinHostPort(local, port),
		ClientID: cmp.Or(opts.ClientID, "client-id"), ClientSecret: cmp.Or(opts.ClientSecret, "client-secret"),
		KeyID: "k1", Now: time.Now, done: make(chan struct{}),
		codes: map[string]*Grant{}, tokens: map[string]*Grant{}, expected: map[string]*Grant{}, deny: "access_denied",
	}
	p.Issuer = p.URL
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PathAuthorize, p.handleAuthorize)
	mux.HandleFunc("POST "+PathToken, p.handleToken)
	mux.HandleFunc("GET "+PathUserInfo, p.handleUserInfo)
	mux.HandleFunc("GET "+PathEmails, p.handleEmails)
	mux.HandleFunc("GET "+PathJWKS, p.handleJWKS)
	mux.HandleFunc("GET "+PathDiscovery, p.handleDiscovery)
	mux.HandleFunc("GET "+PathAvatar, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		png.Encode(w, image.NewGray(image.Rect(0, 0, 1, 1)))
	})
	p.srv = serve(ln, p.wrap(mux))
	return p, nil
}

// serve serves h on ln, with bounded reads and writes.
func serve(ln net.Listener, h http.Handler) *http.Server {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10}
	go srv.Serve(ln)
	return srv
}

// Start starts a provider on 127.0.0.1 with client "client-id" /
// "client-secret"; it stops when the test ends.
func Start(tb TB) *Provider {
	tb.Helper()
	p, err := New(Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Close() })
	return p
}

// Close stops the provider and ends its connections.
func (p *Provider) Close() error {
	p.closeOnce.Do(func() { close(p.done) })
	p.mu.Lock()
	other := p.other
	p.mu.Unlock()
	if other != nil {
		other.Close()
	}
	return p.srv.Close()
}

// Expect announces the user the authorization request with this state
// signs in: g, with the request's Challenge and RedirectURI.
func (p *Provider) Expect(state string, g Grant) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expected[state] = &g
}

// Refused returns why the provider refused requests so far, oldest first.
func (p *Provider) Refused() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.refusals)
}

// SetMode makes the endpoint at path behave as m (ModeOK to restore).
func (p *Provider) SetMode(path string, m Mode) {
	if m == ModeRedirect {
		p.startOther()
	}
	p.modes.Store(path, m)
}

// startOther starts the other host of ModeRedirect, once.
func (p *Provider) startOther() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.other != nil {
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return
	}
	p.otherURL = "http://" + ln.Addr().String()
	p.other = serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"access_token":"from-the-other-host","sub":"other"}`)
	}))
}

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
			http.Redirect(w, r, p.otherURL+r.URL.Path, http.StatusTemporaryRedirect)
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
		p.refuse(w, http.StatusBadRequest, "invalid_client", "unknown client_id")
		return
	}
	redirect := q.Get("redirect_uri")
	back, err := url.Parse(redirect)
	switch {
	case err != nil || (back.Scheme != "http" && back.Scheme != "https") || back.Host == "" || back.Fragment != "":
		p.refuse(w, http.StatusBadRequest, "invalid_request", "redirect_uri must be an absolute http(s) URL without a fragment")
		return
	case len(p.RedirectURIs) > 0 && !slices.Contains(p.RedirectURIs, redirect):
		p.refuse(w, http.StatusBadRequest, "invalid_request", "redirect_uri is not registered")
		return
	}
	// §3.1.2: the redirect keeps the query redirect_uri already has.
	answer := back.Query()
	if st := q.Get("state"); st != "" {
		answer.Set("state", st)
	}
	send := func() {
		if answer.Has("error") {
			p.refused("authorize: " + strings.TrimSpace(answer.Get("error")+" "+answer.Get("error_description")))
		}
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
	if g := p.expected[q.Get("state")]; g != nil {
		login = g
		delete(p.expected, q.Get("state"))
	}
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
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		p.refuse(w, http.StatusBadRequest, "invalid_request", "malformed form")
		return
	}
	id, secret, basic := r.BasicAuth()
	if basic && p.basicOff.Load() {
		p.refuse(w, http.StatusBadRequest, "invalid_client", "use client_secret_post")
		return
	}
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	} else {
		// RFC 6749 §2.3.1: both are form-urlencoded before Basic.
		id, secret = unescape(id), unescape(secret)
	}
	if id != p.ClientID || subtle.ConstantTimeCompare([]byte(secret), []byte(p.ClientSecret)) != 1 {
		p.refuse(w, http.StatusUnauthorized, "invalid_client", "bad client credentials")
		return
	}
	if gt := r.PostForm.Get("grant_type"); gt != "authorization_code" {
		p.refuse(w, http.StatusBadRequest, "unsupported_grant_type", "grant_type "+gt)
		return
	}
	code := r.PostForm.Get("code")
	p.mu.Lock()
	g := p.codes[code]
	delete(p.codes, code) // codes are single-use, even when the request fails
	p.mu.Unlock()
	if g == nil {
		p.refuse(w, http.StatusBadRequest, "invalid_grant", "unknown or used code")
		return
	}
	if g.RedirectURI != "" && r.PostForm.Get("redirect_uri") != g.RedirectURI {
		p.refuse(w, http.StatusBadRequest, "invalid_grant", "redirect_uri mismatch")
		return
	}
	verifier, sent := r.PostForm["code_verifier"]
	switch {
	case g.Challenge == "" && sent:
		p.refuse(w, http.StatusBadRequest, "invalid_grant", "code_verifier without a challenge")
		return
	case g.Challenge != "" && (!sent || S256(verifier[0]) != g.Challenge):
		p.refuse(w, http.StatusBadRequest, "invalid_grant", "PKCE verification failed")
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
		p.refuse(w, http.StatusUnauthorized, "invalid_token", "bad access token")
		return
	}
	if g.FailUserInfo { // asked for: no refusal to report
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "server_error",
			"error_description": "the user endpoint fails on purpose"})
		return
	}
	writeJSON(w, http.StatusOK, g.User)
}

func (p *Provider) handleEmails(w http.ResponseWriter, r *http.Request) {
	g := p.bearer(r)
	switch {
	case g == nil:
		p.refuse(w, http.StatusUnauthorized, "invalid_token", "bad access token")
	case g.Emails == nil:
		p.refuse(w, http.StatusNotFound, "not_found", "no emails")
	default:
		writeJSON(w, http.StatusOK, g.Emails)
	}
}

func (p *Provider) handleJWKS(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"keys": []any{JWK(&rsaKey().PublicKey, p.KeyID)}})
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
	return Sign(rsaKey(), p.KeyID, c)
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

// S256 is the PKCE S256 challenge of verifier: base64url(SHA-256),
// without padding (RFC 7636 §4.2).
func S256(v string) string {
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

// refuse records why a request was refused and answers the OAuth2 error
// JSON (RFC 6749 §5.2).
func (p *Provider) refuse(w http.ResponseWriter, status int, code, desc string) {
	p.refused(code + ": " + desc)
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func (p *Provider) refused(why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refusals = append(p.refusals, why)
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
