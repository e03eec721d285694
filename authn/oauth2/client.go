package oauth2

import (
	"bytes"
	"context"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"strongbox/authn/validation"
)

// Defaults of Options.
const (
	// DefaultTimeout bounds a whole Exchange (token, user, keys):
	// PocketBase's 30 s, as PocketBase v0.31.0 bounds its OAuth2 exchange.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxBody bounds every response body read from a provider.
	DefaultMaxBody = 1 << 20
	// DefaultLeeway is the clock skew allowed on an id_token's exp and iat
	// (PocketBase's 5 minutes).
	DefaultLeeway = 5 * time.Minute
	// jwksTTL is how long a provider's signing keys are reused; a token
	// naming an unknown kid refetches them sooner.
	jwksTTL = 10 * time.Minute
	// maxRedirects a provider may send, each to the same origin.
	maxRedirects = 3
)

// More sentinel errors of Exchange.
var (
	// ErrProvider: the Config cannot be used (unknown name, missing or
	// non-http(s) URL, bad extra); PocketBase answers it 500 "Failed to
	// init provider <name>.". It is neither ErrToken nor ErrUser.
	ErrProvider = errors.New("oauth2: unknown or misconfigured provider")
	// ErrRedirect: a provider redirected to another origin.
	ErrRedirect = errors.New("oauth2: redirect to another origin refused")
	// ErrTooLarge: a provider's response exceeded Options.MaxBody.
	ErrTooLarge = errors.New("oauth2: provider response too large")
)

// Options configures a Client; the zero value is usable.
type Options struct {
	// Transport sends the requests; nil = a clone of
	// http.DefaultTransport (which takes its proxy from the environment,
	// HTTPS_PROXY and the like). The Client sets its own redirect policy.
	// Unless AllowPrivate, the Client uses a clone of an *http.Transport
	// whose connections refuse private addresses (see ErrPrivateAddress;
	// the transport's own dial functions, if any, still connect, and the
	// check runs on the address connected to, before a request is sent).
	// Any other RoundTripper is
	// trusted to choose its connections itself: the Client cannot see
	// them, and no address is refused.
	Transport http.RoundTripper
	// AllowPrivate lets provider requests connect to loopback,
	// unspecified, link-local, private and shared (CGNAT) addresses: a
	// provider on the server's own network, or a test's on 127.0.0.1.
	// false (the default) refuses them, with ErrPrivateAddress.
	AllowPrivate bool
	// Timeout bounds one Exchange; 0 = DefaultTimeout.
	Timeout time.Duration
	// MaxBody bounds each response body; 0 = DefaultMaxBody.
	MaxBody int64
	// Leeway is the clock skew allowed on id_token times; 0 =
	// DefaultLeeway, negative = none.
	Leeway time.Duration
	// Now is the clock for id_token times and token expiry; nil =
	// time.Now.
	Now func() time.Time
}

// Client is the Exchanger strongbox uses: it talks to the providers over
// HTTP. It is safe for concurrent use.
type Client struct {
	hc      *http.Client
	timeout time.Duration
	maxBody int64
	leeway  time.Duration
	now     func() time.Time

	mu         sync.Mutex
	jwks       map[string]cachedKeys // by JWKS URL
	discovered map[string]discovered // by issuer
	styles     map[string]authStyle  // by token URL + client id: what worked
}

type discovered struct {
	jwksURL string
	fetched time.Time
}

type cachedKeys struct {
	keys    map[string]*rsa.PublicKey
	fetched time.Time
}

// authStyle is how the client authenticates at the token endpoint.
type authStyle int

const (
	styleUnknown authStyle = iota // try Basic, then the body
	styleBasic                    // client_secret_basic (RFC 6749 §2.3.1)
	styleBody                     // client_secret_post
)

var _ Exchanger = (*Client)(nil)

// NewClient returns a Client with the options' defaults filled in.
func NewClient(o Options) *Client {
	if o.Transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// Sign-ins go to a few provider hosts, many at once: keep enough
		// idle connections per host that a burst does not pay a new TLS
		// handshake for each (the default keeps 2).
		t.MaxIdleConnsPerHost = 32
		if !o.AllowPrivate {
			// The guard's own dialer connects instead (the same
			// timeouts), checking each address before it connects.
			t.DialContext = nil
		}
		o.Transport = t
	}
	if t, ok := o.Transport.(*http.Transport); ok && !o.AllowPrivate {
		o.Transport = guardTransport(t)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	switch {
	case o.Leeway == 0:
		o.Leeway = DefaultLeeway
	case o.Leeway < 0:
		o.Leeway = 0
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Client{
		hc:         &http.Client{Transport: o.Transport, CheckRedirect: sameOrigin},
		timeout:    o.Timeout,
		maxBody:    o.MaxBody,
		leeway:     o.Leeway,
		now:        o.Now,
		jwks:       map[string]cachedKeys{},
		discovered: map[string]discovered{},
		styles:     map[string]authStyle{},
	}
}

// sameOrigin is the redirect policy: at most maxRedirects, each to the
// scheme and host:port of the first request. A provider endpoint that
// sends the client elsewhere (where the Bearer token or the code would
// follow) is refused.
func sameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("%w: more than %d redirects", ErrRedirect, maxRedirects)
	}
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return fmt.Errorf("%w: %s://%s to %s://%s", ErrRedirect, first.Scheme, first.Host, req.URL.Scheme, req.URL.Host)
	}
	return nil
}

// token is what the token endpoint answered: the fields the client uses,
// and all of them (fields) for a preset's tokenFields.
type token struct {
	access, refresh, idToken string
	expiry                   time.Time
	fields                   map[string]any
}

// Exchange implements Exchanger: the code exchange at cfg's token URL
// (with code_verifier when cfg uses PKCE), then the user from the
// user-info URL or, for apple and for OIDC without a userInfoURL, from
// the verified id_token. cfg is resolved first (Resolve). Errors wrap
// ErrProvider, ErrToken or ErrUser, with the provider's error code and
// description where it gave one, and never a secret, code or token.
func (c *Client) Exchange(ctx context.Context, cfg Config, code, codeVerifier, redirectURL string) (*User, error) {
	cfg = Resolve(cfg)
	p := presets[cfg.Name]
	if p == nil {
		return nil, fmt.Errorf("%w: %q", ErrProvider, cfg.Name)
	}
	if _, err := validation.HTTPURL(cfg.TokenURL); err != nil {
		return nil, fmt.Errorf("%w: %s tokenURL: %w", ErrProvider, cfg.Name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	tok, err := c.token(ctx, cfg, code, codeVerifier, redirectURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrToken, cfg.Name, err)
	}
	var u User
	if p.idToken || cfg.UserInfoURL == "" {
		u, err = c.idTokenUser(ctx, cfg, p, tok)
	} else {
		u, err = c.userInfo(ctx, cfg, p, tok)
	}
	if err == nil && u.ID == "" {
		err = errors.New("the user has no id")
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrUser, cfg.Name, err)
	}
	u.AccessToken, u.RefreshToken, u.Expiry = tok.access, tok.refresh, tok.expiry
	return &u, nil
}

// token performs the authorization-code grant (RFC 6749 §4.1.3). The
// client authenticates with HTTP Basic first and, when the endpoint
// refuses the client (401, or the error invalid_client of RFC 6749 §5.2),
// in the body: what worked is remembered per token URL and client, as
// golang.org/x/oauth2's auto-detection does. Unlike that one it does not
// retry on other errors: a refused code (invalid_grant) is spent, and a
// second try would only hide the provider's reason.
func (c *Client) token(ctx context.Context, cfg Config, code, verifier, redirectURL string) (token, error) {
	form := url.Values{}
	form.Set("grant_type", "authorization_code")
	form.Set("code", code)
	form.Set("redirect_uri", redirectURL)
	if cfg.PKCE && verifier != "" {
		form.Set("code_verifier", verifier)
	}
	key := cfg.TokenURL + "\x00" + cfg.ClientID
	c.mu.Lock()
	style := c.styles[key]
	c.mu.Unlock()
	if p := presets[cfg.Name]; style == styleUnknown && p != nil && p.bodyAuth {
		style = styleBody
	}
	try := []authStyle{style}
	if style == styleUnknown {
		try = []authStyle{styleBasic, styleBody}
	}
	var err error
	for i, s := range try {
		var tok token
		var badClient bool
		tok, badClient, err = c.tokenOnce(ctx, cfg, form, s)
		if err == nil {
			c.mu.Lock()
			c.styles[key] = s
			c.mu.Unlock()
			return tok, nil
		}
		if i == 0 && len(try) > 1 && badClient {
			continue
		}
		break
	}
	return token{}, err
}

// tokenOnce sends one token request; badClient reports that the endpoint
// refused the client's authentication.
func (c *Client) tokenOnce(ctx context.Context, cfg Config, form url.Values, s authStyle) (tok token, badClient bool, err error) {
	f := url.Values{}
	for k, v := range form {
		f[k] = v
	}
	if s == styleBody {
		f.Set("client_id", cfg.ClientID)
		f.Set("client_secret", cfg.ClientSecret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.TokenURL, strings.NewReader(f.Encode()))
	if err != nil {
		return token{}, false, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if s == styleBasic {
		req.SetBasicAuth(url.QueryEscape(cfg.ClientID), url.QueryEscape(cfg.ClientSecret))
	}
	status, header, body, err := c.do(req)
	if err != nil {
		return token{}, false, err
	}
	vals, err := decodeTokenBody(header.Get("Content-Type"), body)
	if err != nil {
		if status >= 400 {
			return token{}, status == http.StatusUnauthorized, fmt.Errorf("token endpoint answered %d", status)
		}
		return token{}, false, err
	}
	if e := str(vals, "error"); e != "" || status >= 400 {
		return token{}, status == http.StatusUnauthorized || e == "invalid_client", providerError("token endpoint", status, e, str(vals, "error_description"))
	}
	tok = token{access: str(vals, "access_token"), refresh: str(vals, "refresh_token"), idToken: str(vals, "id_token"), fields: vals}
	if tok.access == "" {
		return token{}, false, errors.New("token endpoint answered no access_token")
	}
	if n, err := strconv.ParseInt(str(vals, "expires_in"), 10, 64); err == nil && n > 0 {
		tok.expiry = c.now().Add(time.Duration(n) * time.Second).UTC()
	}
	return tok, false, nil
}

// decodeTokenBody reads a token response: JSON (RFC 6749 §5.1, numbers
// as json.Number) or, for providers that ignore Accept, form-encoded
// (values as strings).
func decodeTokenBody(contentType string, body []byte) (map[string]any, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt == "application/x-www-form-urlencoded" || mt == "text/plain" {
		q, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, errors.New("token endpoint answered a malformed form")
		}
		out := map[string]any{}
		for k := range q {
			out[k] = q.Get(k)
		}
		return out, nil
	}
	raw, err := decodeObject(body)
	if err != nil {
		return nil, fmt.Errorf("token endpoint answered %w", err)
	}
	return raw, nil
}

// decodeObject decodes one JSON object, numbers as json.Number.
func decodeObject(body []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil || m == nil {
		return nil, errors.New("no JSON object")
	}
	if d.More() {
		return nil, errors.New("trailing data after the JSON object")
	}
	return m, nil
}

// providerError describes a provider's refusal with its error code and
// description (RFC 6749 §5.2), cleaned and cut short: the provider's own
// words, never the request's secrets.
func providerError(what string, status int, code, desc string) error {
	msg := fmt.Sprintf("%s answered %d", what, status)
	if code != "" {
		msg += ": " + clean(code)
	}
	if desc != "" {
		msg += " (" + clean(desc) + ")"
	}
	return errors.New(msg)
}

// clean keeps at most 200 printable characters of s.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, s)
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

// userInfo fetches the user JSON with the access token as Bearer (a GET,
// or the preset's GraphQL query as a POST, with the preset's headers),
// adds the preset's token fields, refuses an inactive account and maps
// it; when the mapping found no trusted email, the preset's emails API
// may give one.
func (c *Client) userInfo(ctx context.Context, cfg Config, p *preset, tok token) (User, error) {
	method, body, h := http.MethodGet, []byte(nil), http.Header{}
	if p.query != "" {
		method, body = http.MethodPost, graphQL(p.query)
		h.Set("Content-Type", "application/json")
	}
	if p.headers != nil {
		for k, v := range p.headers(cfg) {
			h[http.CanonicalHeaderKey(k)] = v
		}
	}
	raw, err := c.fetchJSON(ctx, method, cfg.UserInfoURL, body, h, tok.access, "user-info endpoint")
	if err != nil {
		return User{}, err
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return User{}, errors.New("user-info endpoint answered no JSON object")
	}
	for _, k := range p.tokenFields {
		if v, ok := tok.fields[k]; ok && obj[k] == nil {
			obj[k] = v
		}
	}
	if p.active != nil && !p.active(obj) {
		return User{}, errors.New("the user's account is not active")
	}
	u := p.user(obj)
	if p.emails != nil && u.Email == "" {
		u.Email = c.primaryEmail(ctx, p.emails, cfg.UserInfoURL, tok.access)
		u.EmailVerified = u.Email != ""
	}
	return u, nil
}

// graphQL is the JSON body of a GraphQL query.
func graphQL(query string) []byte {
	b, _ := json.Marshal(map[string]string{"query": query})
	return b
}

// primaryEmail reads the emails API of api and returns its primary
// verified address. Any failure (401/403/404 when the scope is missing)
// means no email, as in PocketBase: the sign-in goes on without one.
func (c *Client) primaryEmail(ctx context.Context, api *emailsAPI, userInfoURL, access string) string {
	raw, err := c.getJSON(ctx, api.url(userInfoURL), access, "emails endpoint")
	if err != nil {
		return ""
	}
	return api.primary(raw)
}

// getJSON GETs u with a Bearer token and decodes the JSON answer
// (numbers as json.Number); a status of 400 or more is an error.
func (c *Client) getJSON(ctx context.Context, u, access, what string) (any, error) {
	return c.fetchJSON(ctx, http.MethodGet, u, nil, nil, access, what)
}

// fetchJSON sends a request (body, when not nil, with the headers h)
// with a Bearer token and decodes the JSON answer as getJSON does.
func (c *Client) fetchJSON(ctx context.Context, method, u string, body []byte, h http.Header, access, what string) (any, error) {
	if _, err := validation.HTTPURL(u); err != nil {
		return nil, fmt.Errorf("oauth2: %w", err)
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	if access != "" {
		req.Header.Set("Authorization", "Bearer "+access)
	}
	status, _, body, err := c.do(req)
	if err != nil {
		return nil, err
	}
	if status >= 400 {
		var e struct {
			Error any    `json:"error"`
			Desc  string `json:"error_description"`
		}
		_ = json.Unmarshal(body, &e)
		code, _ := e.Error.(string)
		return nil, providerError(what, status, code, e.Desc)
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil || d.More() {
		return nil, fmt.Errorf("%s answered malformed JSON", what)
	}
	return v, nil
}

// idTokenUser maps the claims of the token response's id_token once its
// signature (the provider's JWKS) and claims (issuer, audience = client
// id, times) check out.
func (c *Client) idTokenUser(ctx context.Context, cfg Config, p *preset, tok token) (User, error) {
	if tok.idToken == "" {
		return User{}, errors.New("token endpoint answered no id_token")
	}
	ex, err := parseExtra(cfg.Extra)
	if err != nil {
		return User{}, err
	}
	jwksURL, issuers := ex.JWKSURL, ex.Issuers
	if jwksURL == "" {
		jwksURL = p.jwksURL
	}
	if len(issuers) == 0 && p.issuer != "" {
		issuers = []string{p.issuer}
	}
	if jwksURL == "" && len(issuers) > 0 {
		if jwksURL, err = c.discover(ctx, issuers[0]); err != nil {
			return User{}, err
		}
	}
	if jwksURL == "" {
		return User{}, errors.New("no userInfoURL, extra.jwksURL or extra.issuers: the id_token cannot be verified")
	}
	t, err := parseJWS(tok.idToken)
	if err != nil {
		return User{}, err
	}
	check := idTokenCheck{clientID: cfg.ClientID, issuers: issuers, now: c.now(), leeway: c.leeway}
	keys, err := c.keys(ctx, jwksURL, false)
	if err != nil {
		return User{}, err
	}
	if _, ok := keys[t.header.Kid]; !ok && t.header.Kid != "" {
		// The provider may have rotated its keys since they were cached.
		if keys, err = c.keys(ctx, jwksURL, true); err != nil {
			return User{}, err
		}
	}
	if err := verifyIDToken(t, keys, check); err != nil {
		return User{}, err
	}
	return p.user(t.claims), nil
}

// discover reads the jwks_uri of issuer from its OpenID Provider
// Configuration (OpenID Connect Discovery 1.0 §4: issuer +
// "/.well-known/openid-configuration"), cached like the keys. §4.3: the
// document's issuer must be exactly the one asked for.
func (c *Client) discover(ctx context.Context, issuer string) (string, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.discovered[issuer]
	c.mu.Unlock()
	if ok && now.Sub(e.fetched) < jwksTTL {
		return e.jwksURL, nil
	}
	u := strings.TrimSuffix(issuer, "/") + "/.well-known/openid-configuration"
	raw, err := c.getJSON(ctx, u, "", "discovery endpoint")
	if err != nil {
		return "", err
	}
	doc, _ := raw.(map[string]any)
	if got := str(doc, "issuer"); got != issuer {
		return "", fmt.Errorf("discovery document names issuer %q, want %q", clean(got), issuer)
	}
	jwksURL := str(doc, "jwks_uri")
	if _, err := validation.HTTPURL(jwksURL); err != nil {
		return "", fmt.Errorf("discovery document: jwks_uri: %w", err)
	}
	c.mu.Lock()
	c.discovered[issuer] = discovered{jwksURL: jwksURL, fetched: now}
	c.mu.Unlock()
	return jwksURL, nil
}

// keys returns the RSA keys of the JWKS at u, cached for jwksTTL unless
// refresh.
func (c *Client) keys(ctx context.Context, u string, refresh bool) (map[string]*rsa.PublicKey, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.jwks[u]
	c.mu.Unlock()
	if ok && !refresh && now.Sub(e.fetched) < jwksTTL {
		return e.keys, nil
	}
	if _, err := validation.HTTPURL(u); err != nil {
		return nil, fmt.Errorf("oauth2: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	status, _, body, err := c.do(req)
	if err != nil {
		return nil, err
	}
	if status >= 400 {
		return nil, fmt.Errorf("JWKS endpoint answered %d", status)
	}
	keys, err := rsaKeys(body)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.jwks[u] = cachedKeys{keys: keys, fetched: now}
	c.mu.Unlock()
	return keys, nil
}

// do sends req and reads at most maxBody bytes of the answer.
func (c *Client) do(req *http.Request) (int, http.Header, []byte, error) {
	resp, err := c.hc.Do(req)
	var ue *url.Error
	if errors.Is(err, ErrPrivateAddress) && errors.As(err, &ue) {
		// The refusal without the *url.Error around it, which would name
		// the whole URL, its query too.
		err = ue.Err
	}
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBody+1))
	if err != nil {
		return resp.StatusCode, nil, nil, err
	}
	if int64(len(body)) > c.maxBody {
		return resp.StatusCode, nil, nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, c.maxBody)
	}
	return resp.StatusCode, resp.Header, body, nil
}
