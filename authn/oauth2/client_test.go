package oauth2_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"strongbox/authn/oauth2"
	"strongbox/conformance/oauth2provider"
)

// now is the injected clock of the provider and the client.
var now = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func newProvider(t *testing.T) *oauth2provider.Provider {
	t.Helper()
	p := oauth2provider.Start(t)
	p.Now = func() time.Time { return now }
	return p
}

// newClient is a client for the loopback provider: it allows private
// addresses, the provider being on 127.0.0.1.
func newClient(opts oauth2.Options) *oauth2.Client {
	opts.AllowPrivate = true
	if opts.Now == nil {
		opts.Now = func() time.Time { return now }
	}
	return oauth2.NewClient(opts)
}

// config points preset name at the loopback provider p.
func config(p *oauth2provider.Provider, name string) oauth2.Config {
	c := oauth2.Config{
		Name: name, ClientID: p.ClientID, ClientSecret: p.ClientSecret,
		AuthURL: p.URL + oauth2provider.PathAuthorize, TokenURL: p.URL + oauth2provider.PathToken,
		UserInfoURL: p.URL + oauth2provider.PathUserInfo,
	}
	if name == "apple" {
		c.UserInfoURL = ""
		c.Extra = json.RawMessage(`{"jwksURL":"` + p.URL + oauth2provider.PathJWKS + `","issuers":["` + p.Issuer + `"]}`)
	}
	return c
}

// oidcIDToken is an oidc provider without user-info endpoint: the user
// comes from the id_token, verified with the JWKS.
func oidcIDToken(p *oauth2provider.Provider) oauth2.Config {
	c := config(p, "oidc")
	c.UserInfoURL = ""
	c.Extra = json.RawMessage(`{"jwksURL":"` + p.URL + oauth2provider.PathJWKS + `","issuers":["` + p.Issuer + `"]}`)
	return c
}

// oidcDiscovery is an oidc provider configured with its issuer only: the
// JWKS URL comes from the issuer's discovery document.
func oidcDiscovery(p *oauth2provider.Provider, issuer string) oauth2.Config {
	if issuer == "" {
		issuer = p.Issuer
	}
	c := config(p, "oidc3")
	c.UserInfoURL = ""
	c.Extra = json.RawMessage(`{"issuers":["` + issuer + `"]}`)
	return c
}

func obj(s string) map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		panic(err)
	}
	return m
}

func TestExchangeMapping(t *testing.T) {
	p := newProvider(t)
	c := newClient(oauth2.Options{})
	const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	tests := []struct {
		name   string
		cfg    oauth2.Config
		grant  oauth2provider.Grant
		want   oauth2.User // without tokens, expiry and Raw
		rawKey string      // a key Raw must hold
	}{
		{"google", config(p, "google"), oauth2provider.Grant{User: obj(`{"sub":"1093","name":"Ada L","given_name":"Ada","picture":"https://lh3.test/a.png","email":"ada@example.com","email_verified":true}`)},
			oauth2.User{ID: "1093", Name: "Ada L", AvatarURL: "https://lh3.test/a.png", Email: "ada@example.com", EmailVerified: true}, "given_name"},
		{"google unverified email is dropped", config(p, "google"), oauth2provider.Grant{User: obj(`{"sub":"7","name":"Eve","email":"victim@example.com","email_verified":false}`)},
			oauth2.User{ID: "7", Name: "Eve"}, "email"},
		{"github profile email", config(p, "github"), oauth2provider.Grant{User: obj(`{"id":12345678901,"login":"octo","name":"Octo Cat","email":"octo@example.com","avatar_url":"https://avatars.test/u/1"}`)},
			oauth2.User{ID: "12345678901", Name: "Octo Cat", Username: "octo", Email: "octo@example.com", EmailVerified: true, AvatarURL: "https://avatars.test/u/1"}, "login"},
		{"github emails API", config(p, "github"), oauth2provider.Grant{
			User:   obj(`{"id":2,"login":"priv","name":null,"email":null,"avatar_url":""}`),
			Emails: []any{obj(`{"email":"old@example.com","primary":false,"verified":true}`), obj(`{"email":"unv@example.com","primary":true,"verified":false}`), obj(`{"email":"main@example.com","primary":true,"verified":true}`)},
		}, oauth2.User{ID: "2", Username: "priv", Email: "main@example.com", EmailVerified: true}, "login"},
		{"github emails API refused", config(p, "github"), oauth2provider.Grant{User: obj(`{"id":3,"login":"noscope"}`)},
			oauth2.User{ID: "3", Username: "noscope"}, "id"},
		{"gitlab", config(p, "gitlab"), oauth2provider.Grant{User: obj(`{"id":42,"username":"gl","name":"Git Lab","email":"gl@example.com","avatar_url":"https://gitlab.test/a.png","state":"active"}`)},
			oauth2.User{ID: "42", Name: "Git Lab", Username: "gl", Email: "gl@example.com", EmailVerified: true, AvatarURL: "https://gitlab.test/a.png"}, "state"},
		{"microsoft mail is not trusted", config(p, "microsoft"), oauth2provider.Grant{User: obj(`{"id":"8f2c-11","displayName":"Mic Soft","mail":"ms@example.com","userPrincipalName":"ms@tenant.test"}`)},
			oauth2.User{ID: "8f2c-11", Name: "Mic Soft", Email: "ms@example.com"}, "userPrincipalName"},
		{"discord verified", config(p, "discord"), oauth2provider.Grant{User: obj(`{"id":"80351110224678912","username":"nelly","global_name":"Nelly","avatar":"8342729096ea3675442027381ff50dfe","email":"nelly@example.com","verified":true}`)},
			oauth2.User{ID: "80351110224678912", Name: "Nelly", Username: "nelly", Email: "nelly@example.com", EmailVerified: true, AvatarURL: "https://cdn.discordapp.com/avatars/80351110224678912/8342729096ea3675442027381ff50dfe.png"}, "avatar"},
		{"discord unverified", config(p, "discord"), oauth2provider.Grant{User: obj(`{"id":"9","username":"x","email":"x@example.com","verified":false}`)},
			oauth2.User{ID: "9", Name: "x", Username: "x"}, "verified"},
		{"apple id_token", config(p, "apple"), oauth2provider.Grant{Challenge: oauth2.Challenge(verifier), IDToken: map[string]any{"sub": "001.abc", "email": "a@privaterelay.appleid.com", "email_verified": "true", "is_private_email": "true"}},
			oauth2.User{ID: "001.abc", Email: "a@privaterelay.appleid.com", EmailVerified: true}, "is_private_email"},
		{"oidc userinfo", config(p, "oidc2"), oauth2provider.Grant{Challenge: oauth2.Challenge(verifier), User: obj(`{"sub":"u1","name":"O I","preferred_username":"oi","picture":"https://i.test/p","email":"oi@example.com","email_verified":true}`)},
			oauth2.User{ID: "u1", Name: "O I", Username: "oi", AvatarURL: "https://i.test/p", Email: "oi@example.com", EmailVerified: true}, "preferred_username"},
		{"oidc id_token", oidcIDToken(p), oauth2provider.Grant{IDToken: map[string]any{"sub": "u2", "preferred_username": "two", "email": "two@example.com", "email_verified": true}},
			oauth2.User{ID: "u2", Username: "two", Email: "two@example.com", EmailVerified: true}, "iss"},
		{"oidc id_token, JWKS from discovery", oidcDiscovery(p, ""), oauth2provider.Grant{IDToken: map[string]any{"sub": "u4", "name": "Four"}},
			oauth2.User{ID: "u4", Name: "Four"}, "sub"},
		{"oidc id_token unverified email", oidcIDToken(p), oauth2provider.Grant{IDToken: map[string]any{"sub": "u3", "email": "three@example.com"}},
			oauth2.User{ID: "u3"}, "email"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := tt.grant
			v := ""
			if g.Challenge != "" {
				v = verifier
			}
			g.RedirectURI = "https://app.test/api/oauth2-redirect"
			u, err := c.Exchange(t.Context(), tt.cfg, p.Grant(g), v, g.RedirectURI)
			if err != nil {
				t.Fatalf("Exchange: %v", err)
			}
			if !strings.HasPrefix(u.AccessToken, "at-") || !strings.HasPrefix(u.RefreshToken, "rt-") {
				t.Errorf("tokens = %q, %q; want at-…, rt-…", u.AccessToken, u.RefreshToken)
			}
			if got, want := u.Expiry, now.Add(time.Hour); !got.Equal(want) {
				t.Errorf("Expiry = %v, want %v", got, want)
			}
			if _, ok := u.Raw[tt.rawKey]; !ok {
				t.Errorf("Raw = %v, want key %q", u.Raw, tt.rawKey)
			}
			got := *u
			got.AccessToken, got.RefreshToken, got.Expiry, got.Raw = "", "", time.Time{}, nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Exchange() user =\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}

// TestExchangeBodyAuth: a token endpoint that refuses HTTP Basic gets the
// credentials in the body, and the client remembers it; apple's gets them
// in the body at once.
func TestExchangeBodyAuth(t *testing.T) {
	tests := []struct {
		name     string
		provider string
		grant    oauth2provider.Grant
		requests [2]int64 // provider requests of the first and second exchange
	}{
		// token refused with Basic, token in the body, user info; then
		// token and user info.
		{"gitlab", "gitlab", oauth2provider.Grant{User: obj(`{"id":1,"username":"a"}`)}, [2]int64{3, 2}},
		// token and JWKS; then token only (the keys are cached).
		{"apple", "apple", oauth2provider.Grant{IDToken: map[string]any{"sub": "1"}}, [2]int64{2, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t)
			p.RefuseBasicAuth(true)
			c := newClient(oauth2.Options{})
			for i, want := range tt.requests {
				p.ResetStats()
				if _, err := c.Exchange(t.Context(), config(p, tt.provider), p.Grant(tt.grant), "", "r"); err != nil {
					t.Fatalf("exchange %d: %v", i, err)
				}
				if n, _ := p.Stats(); n != want {
					t.Errorf("exchange %d: %d provider requests, want %d", i, n, want)
				}
			}
		})
	}
}

func TestExchangeErrors(t *testing.T) {
	const verifier = "the-right-verifier-the-right-verifier-12345"
	otherKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	user := obj(`{"sub":"1","email":"a@example.com","email_verified":true}`)
	tests := []struct {
		name     string
		setup    func(p *oauth2provider.Provider) (oauth2.Config, oauth2provider.Grant, string) // config, grant, verifier
		badCode  bool
		want     error // errors.Is
		wantToo  error // also errors.Is, when not nil
		contains string
	}{
		{"pkce verifier mismatch", func(p *oauth2provider.Provider) (oauth2.Config, oauth2provider.Grant, string) {
			return config(p, "google"), oauth2provider.Grant{Challenge: oauth2.Challenge(verifier), User: user}, "another-verifier"
		}, false, oauth2.ErrToken, nil, "invalid_grant (PKCE verification failed)"},
		{"pkce verifier missing", func(p *oauth2provider.Provider) (oauth2.Config, oauth2provider.Grant, string) {
			return config(p, "google"), oauth2provider.Grant{Challenge: oauth2.Challenge(verifier), User: user}, ""
		}, false, oauth2.ErrToken, nil, "PKCE verification failed"},
		{"bad code", func(p *oauth2provider.Provider) (oauth2.Config, oauth2provider.Grant, string) {
			return config(p, "google"), oauth2provider.Grant{User: user}, ""
		}, true, oauth2.ErrToken, nil, "invalid_grant (unknown or used code)"},
		{"bad client secret", func(p *oauth2provider.Provider) (oauth2.Config, oauth2provider.Grant, string) {
			c := config(p, "google")
			c.ClientSecret = "wrong-secret"
			return c, oauth2provider.Grant{User: user}, ""
		}, false, oauth2.ErrToken, nil, "invalid_client"},
		{"token 500", mode(oauth2provider.PathToken, oauth2provider.Mode500), false, oauth2.ErrToken, nil, "token endpoint answered 500: server_error (the provider failed)"},
		{"user-info 500", mode(oauth2provider.PathUserInfo, oauth2provider.Mode500), false, oauth2.ErrUser, nil, "user-info endpoint answered 500"},
		{"token bad JSON", mode(oauth2provider.PathToken, oauth2provider.ModeBadJSON), false, oauth2.ErrToken, nil, "token endpoint answered no JSON object"},
		{"user-info bad JSON", mode(oauth2provider.PathUserInfo, oauth2provider.ModeBadJSON), false, oauth2.ErrUser, nil, "malformed JSON"},
		{"token huge body", mode(oauth2provider.PathToken, oauth2provider.ModeHugeBody), false, oauth2.ErrToken, oauth2.ErrTooLarge, "more than 1048576 bytes"},
		{"user-info huge body", mode(oauth2provider.PathUserInfo, oauth2provider.ModeHugeBody), false, oauth2.ErrUser, oauth2.ErrTooLarge, ""},
		{"token redirect to another host", mode(oauth2provider.PathToken, oauth2provider.ModeRedirect), false, oauth2.ErrToken, oauth2.ErrRedirect, ""},
		{"user-info redirect to another host", mode(oauth2provider.PathUserInfo, oauth2provider.ModeRedirect), false, oauth2.ErrUser, oauth2.ErrRedirect, ""},
		{"JWKS 500", func(p *oauth2provider.Provider) (oauth2.Config, oauth2provider.Grant, string) {
			p.SetMode(oauth2provider.PathJWKS, oauth2provider.Mode500)
			return oidcIDToken(p), oauth2provider.Grant{IDToken: map[string]any{"sub": "1"}}, ""
		}, false, oauth2.ErrUser, nil, "JWKS endpoint answered 500"},
		{"id_token bad signature", idToken(func(p *oauth2provider.Provider) string {
			return oauth2provider.Sign(otherKey, p.KeyID, map[string]any{"sub": "1", "iss": p.Issuer, "aud": p.ClientID, "exp": now.Add(time.Hour).Unix()})
		}), false, oauth2.ErrUser, oauth2.ErrSignature, "verification error"},
		{"id_token unknown kid", idToken(func(p *oauth2provider.Provider) string {
			return oauth2provider.Sign(otherKey, "k2", map[string]any{"sub": "1", "iss": p.Issuer, "aud": p.ClientID, "exp": now.Add(time.Hour).Unix()})
		}), false, oauth2.ErrUser, oauth2.ErrSignature, `no key with kid "k2"`},
		{"id_token alg none", idToken(func(p *oauth2provider.Provider) string {
			return "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0."
		}), false, oauth2.ErrUser, oauth2.ErrSignature, `alg "none"`},
		{"id_token wrong audience", idToken(func(p *oauth2provider.Provider) string {
			return p.IDToken(map[string]any{"sub": "1", "aud": "another-client"})
		}), false, oauth2.ErrUser, oauth2.ErrClaims, "aud does not name the client"},
		{"id_token expired", idToken(func(p *oauth2provider.Provider) string {
			return p.IDToken(map[string]any{"sub": "1", "exp": now.Add(-6 * time.Minute).Unix()})
		}), false, oauth2.ErrUser, oauth2.ErrClaims, "expired at 2026-11-23T11:54:00Z"},
		{"id_token without exp", idToken(func(p *oauth2provider.Provider) string {
			return p.IDToken(map[string]any{"sub": "1", "exp": nil})
		}), false, oauth2.ErrUser, oauth2.ErrClaims, "no exp"},
		{"id_token issued in the future", idToken(func(p *oauth2provider.Provider) string {
			return p.IDToken(map[string]any{"sub": "1", "iat": now.Add(6 * time.Minute).Unix()})
		}), false, oauth2.ErrUser, oauth2.ErrClaims, "issued in the future"},
		{"id_token wrong issuer", idToken(func(p *oauth2provider.Provider) string {
			return p.IDToken(map[string]any{"sub": "1", "iss": "https://evil.test"})
		}), false, oauth2.ErrUser, oauth2.ErrClaims, `iss "https://evil.test" is not an accepted issuer`},
		{"discovery names another issuer", func(p *oauth2provider.Provider) (oauth2.Config, oauth2provider.Grant, string) {
			return oidcDiscovery(p, p.Issuer+"/"), oauth2provider.Grant{IDToken: map[string]any{"sub": "1"}}, ""
		}, false, oauth2.ErrUser, nil, "discovery document names issuer"},
		{"token 200 with an error (GitHub)", func(p *oauth2provider.Provider) (oauth2.Config, oauth2provider.Grant, string) {
			return config(p, "github"), oauth2provider.Grant{User: user, Token: map[string]any{"error": "bad_verification_code", "error_description": "The code passed is incorrect or expired."}}, ""
		}, false, oauth2.ErrToken, nil, "token endpoint answered 200: bad_verification_code (The code passed is incorrect or expired.)"},
		{"token without access_token", func(p *oauth2provider.Provider) (oauth2.Config, oauth2provider.Grant, string) {
			return config(p, "google"), oauth2provider.Grant{User: user, Token: map[string]any{"access_token": ""}}, ""
		}, false, oauth2.ErrToken, nil, "no access_token"},
		{"id_token missing", func(p *oauth2provider.Provider) (oauth2.Config, oauth2provider.Grant, string) {
			return oidcIDToken(p), oauth2provider.Grant{}, ""
		}, false, oauth2.ErrUser, nil, "no id_token"},
		{"id_token without a JWKS", func(p *oauth2provider.Provider) (oauth2.Config, oauth2provider.Grant, string) {
			c := oidcIDToken(p)
			c.Extra = nil
			return c, oauth2provider.Grant{IDToken: map[string]any{"sub": "1"}}, ""
		}, false, oauth2.ErrUser, nil, "cannot be verified"},
		{"user without id", func(p *oauth2provider.Provider) (oauth2.Config, oauth2provider.Grant, string) {
			return config(p, "google"), oauth2provider.Grant{User: obj(`{"name":"x"}`)}, ""
		}, false, oauth2.ErrUser, nil, "the user has no id"},
		{"unknown provider", func(p *oauth2provider.Provider) (oauth2.Config, oauth2provider.Grant, string) {
			return config(p, "instagram"), oauth2provider.Grant{User: user}, ""
		}, false, oauth2.ErrProvider, nil, `"instagram"`},
		{"token URL not http", func(p *oauth2provider.Provider) (oauth2.Config, oauth2provider.Grant, string) {
			c := config(p, "google")
			c.TokenURL = "file:///etc/passwd"
			return c, oauth2provider.Grant{User: user}, ""
		}, false, oauth2.ErrProvider, nil, "not http(s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t)
			c := newClient(oauth2.Options{})
			cfg, g, v := tt.setup(p)
			code := p.Grant(g)
			if tt.badCode {
				code = "not-a-code"
			}
			u, err := c.Exchange(t.Context(), cfg, code, v, "https://app.test/r")
			if !errors.Is(err, tt.want) || (tt.wantToo != nil && !errors.Is(err, tt.wantToo)) {
				t.Fatalf("Exchange() = %+v, %v; want errors.Is %v and %v", u, err, tt.want, tt.wantToo)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.contains) {
				t.Errorf("error %q does not contain %q", msg, tt.contains)
			}
			for _, secret := range []string{p.ClientSecret, code, v, "at-", "rt-", "wrong-secret"} {
				if secret != "" && strings.Contains(msg, secret) {
					t.Errorf("error %q reveals %q", msg, secret)
				}
			}
		})
	}
}

func mode(path string, m oauth2provider.Mode) func(p *oauth2provider.Provider) (oauth2.Config, oauth2provider.Grant, string) {
	return func(p *oauth2provider.Provider) (oauth2.Config, oauth2provider.Grant, string) {
		p.SetMode(path, m)
		return config(p, "google"), oauth2provider.Grant{User: obj(`{"sub":"1"}`)}, ""
	}
}

// idToken makes the token endpoint answer the id_token tok(p).
func idToken(tok func(p *oauth2provider.Provider) string) func(p *oauth2provider.Provider) (oauth2.Config, oauth2provider.Grant, string) {
	return func(p *oauth2provider.Provider) (oauth2.Config, oauth2provider.Grant, string) {
		return oidcIDToken(p), oauth2provider.Grant{Token: map[string]any{"id_token": tok(p)}}, ""
	}
}

// TestExchangeLeeway: an id_token expired less than the leeway ago is
// still accepted; with no leeway it is not.
func TestExchangeLeeway(t *testing.T) {
	p := newProvider(t)
	tests := []struct {
		name   string
		leeway time.Duration
		ok     bool
	}{
		{"default 5 min", 0, true},
		{"none", -1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(oauth2.Options{Leeway: tt.leeway})
			code := p.Grant(oauth2provider.Grant{IDToken: map[string]any{"sub": "1", "exp": now.Add(-4 * time.Minute).Unix()}})
			_, err := c.Exchange(t.Context(), oidcIDToken(p), code, "", "r")
			if (err == nil) != tt.ok {
				t.Errorf("Exchange() err = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

// TestExchangeHang: a provider that never answers costs the caller the
// client's timeout, not more.
func TestExchangeHang(t *testing.T) {
	tests := []struct {
		name string
		path string
		want error
	}{
		{"token", oauth2provider.PathToken, oauth2.ErrToken},
		{"user info", oauth2provider.PathUserInfo, oauth2.ErrUser},
		{"jwks", oauth2provider.PathJWKS, oauth2.ErrUser},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t)
			p.SetMode(tt.path, oauth2provider.ModeHang)
			c := newClient(oauth2.Options{Timeout: 200 * time.Millisecond})
			cfg := config(p, "google")
			if tt.path == oauth2provider.PathJWKS {
				cfg = oidcIDToken(p)
			}
			code := p.Grant(oauth2provider.Grant{User: obj(`{"sub":"1"}`), IDToken: map[string]any{"sub": "1"}})
			start := time.Now()
			_, err := c.Exchange(t.Context(), cfg, code, "", "r")
			if !errors.Is(err, tt.want) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Exchange() err = %v, want %v and context.DeadlineExceeded", err, tt.want)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Exchange() took %v, want about the 200ms timeout", d)
			}
		})
	}
}
