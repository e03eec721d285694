package oauth2

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/url"
	"strings"
)

// alphanumeric is the alphabet of state and PKCE verifiers
// (crypto-random over A-Za-z0-9, as in PocketBase).
const alphanumeric = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// Lengths of the values auth-methods hands out, as in PocketBase.
const (
	StateLength    = 30
	VerifierLength = 43
)

// randomString returns n characters of alphanumeric read from r (nil =
// crypto/rand), without modulo bias: bytes at or above 248 (4×62) are
// drawn again.
func randomString(r io.Reader, n int) (string, error) {
	if r == nil {
		r = rand.Reader
	}
	out := make([]byte, 0, n)
	buf := make([]byte, n)
	for len(out) < n {
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", fmt.Errorf("oauth2: random: %w", err)
		}
		for _, b := range buf {
			if b < 248 && len(out) < n {
				out = append(out, alphanumeric[b%62])
			}
		}
	}
	return string(out), nil
}

// NewState returns a fresh 30-character state for an authorization URL,
// read from r (nil = crypto/rand).
func NewState(r io.Reader) (string, error) {
	return randomString(r, StateLength)
}

// NewPKCE returns a PKCE code verifier and its S256 challenge, read from
// r (nil = crypto/rand). RFC 7636 §4.1: the verifier is 43 to 128
// characters of [A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~"; strongbox
// uses 43 alphanumerics (about 256 bits). §4.2: the challenge is
// BASE64URL-ENCODE(SHA256(ASCII(code_verifier))), without padding.
func NewPKCE(r io.Reader) (verifier, challenge string, err error) {
	verifier, err = randomString(r, VerifierLength)
	if err != nil {
		return "", "", err
	}
	return verifier, Challenge(verifier), nil
}

// Challenge is the S256 code challenge of verifier (RFC 7636 §4.2).
func Challenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// AuthURL is the provider's authorization URL for a resolved c,
// built as PocketBase builds it: c.AuthURL, then `?` (or `&` when it has a
// query already), then client_id, code_challenge and
// code_challenge_method=S256 (with PKCE and a challenge), response_mode=
// form_post (apple), response_type=code, scope and state, sorted by key
// and URL-encoded, and last `&redirect_uri=` with redirectURL encoded. An
// empty redirectURL leaves the literal suffix `&redirect_uri=` for the
// client to complete, as auth-methods answers it.
func AuthURL(c Config, state, codeChallenge, redirectURL string) string {
	q := url.Values{}
	q.Set("client_id", c.ClientID)
	if c.PKCE && codeChallenge != "" {
		q.Set("code_challenge", codeChallenge)
		q.Set("code_challenge_method", "S256")
	}
	if p := presets[c.Name]; p != nil && p.formPost {
		q.Set("response_mode", "form_post")
	}
	q.Set("response_type", "code")
	if len(c.Scopes) > 0 {
		q.Set("scope", strings.Join(c.Scopes, " "))
	}
	q.Set("state", state)
	sep := "?"
	if strings.Contains(c.AuthURL, "?") {
		sep = "&"
	}
	return c.AuthURL + sep + q.Encode() + "&redirect_uri=" + url.QueryEscape(redirectURL)
}
