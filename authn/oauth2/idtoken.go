package oauth2

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"
)

// Sentinel errors of id_token validation, wrapped in ErrUser by Exchange.
var (
	ErrMalformed = errors.New("oauth2: malformed id_token")
	ErrSignature = errors.New("oauth2: id_token signature invalid")
	ErrClaims    = errors.New("oauth2: id_token claims invalid")
)

// maxJWS bounds the size of an id_token before it is decoded.
const maxJWS = 64 << 10

// jws is a compact JWS split into its parts (RFC 7515 §7.1).
type jws struct {
	header    struct{ Alg, Kid, Typ string }
	claims    map[string]any
	signed    []byte // ASCII(BASE64URL(header) || '.' || BASE64URL(payload))
	signature []byte
}

// parseJWS decodes a compact JWS without verifying it: exactly three
// segments of unpadded base64url, a JSON header with `alg`, a JSON object
// payload. Numbers in the claims stay json.Number.
func parseJWS(token string) (*jws, error) {
	if len(token) > maxJWS {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrMalformed, maxJWS)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("%w: %d segments, want 3", ErrMalformed, len(parts))
	}
	seg := func(i int) ([]byte, error) {
		b, err := base64.RawURLEncoding.Strict().DecodeString(parts[i])
		if err != nil {
			return nil, fmt.Errorf("%w: segment %d: %v", ErrMalformed, i, err)
		}
		return b, nil
	}
	var t jws
	h, err := seg(0)
	if err != nil {
		return nil, err
	}
	var hdr struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
		Typ string `json:"typ"`
	}
	if err := json.Unmarshal(h, &hdr); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrMalformed, err)
	}
	t.header.Alg, t.header.Kid, t.header.Typ = hdr.Alg, hdr.Kid, hdr.Typ
	p, err := seg(1)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(p))
	d.UseNumber()
	if err := d.Decode(&t.claims); err != nil || t.claims == nil {
		return nil, fmt.Errorf("%w: payload is not a JSON object", ErrMalformed)
	}
	if d.More() {
		return nil, fmt.Errorf("%w: payload has trailing data", ErrMalformed)
	}
	if t.signature, err = seg(2); err != nil {
		return nil, err
	}
	t.signed = []byte(parts[0] + "." + parts[1])
	return &t, nil
}

// jwk is one key of a JWK Set (RFC 7517 §4); only RSA signing keys are
// used.
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
}

// rsaKeys decodes a JWK Set's RSA signing keys (kty RSA, use sig or
// unset, alg RS256 or unset), keyed by kid. Keys of 2048 bits or more
// only.
func rsaKeys(body []byte) (map[string]*rsa.PublicKey, error) {
	var set struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("oauth2: JWKS: %w", err)
	}
	keys := map[string]*rsa.PublicKey{}
	for _, k := range set.Keys {
		if k.Kty != "RSA" || (k.Use != "" && k.Use != "sig") || (k.Alg != "" && k.Alg != "RS256") {
			continue
		}
		n, err1 := base64.RawURLEncoding.DecodeString(k.N)
		e, err2 := base64.RawURLEncoding.DecodeString(k.E)
		if err1 != nil || err2 != nil || len(e) == 0 || len(e) > 4 {
			continue
		}
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if pub.N.BitLen() < 2048 || pub.E < 3 || pub.E%2 == 0 {
			continue
		}
		keys[k.Kid] = pub
	}
	if len(keys) == 0 {
		return nil, errors.New("oauth2: JWKS has no RSA signing key")
	}
	return keys, nil
}

// idTokenCheck is what an id_token must satisfy (OpenID Connect Core
// §3.1.3.7).
type idTokenCheck struct {
	clientID string        // aud must contain it
	issuers  []string      // iss must be one of them; empty = any non-empty iss
	nonce    string        // when set, the nonce claim must equal it
	now      time.Time     // the injected clock
	leeway   time.Duration // clock skew allowed on exp and iat
}

// verifyIDToken checks t's RS256 signature with the key of its kid (or
// the only key when the token names none), then its claims: iss, aud (and
// azp when aud has several values), exp and iat within the leeway, nonce.
// The algorithm is fixed: a header naming anything but RS256 is refused
// (no "none", no HS256 keyed with the public key).
func verifyIDToken(t *jws, keys map[string]*rsa.PublicKey, c idTokenCheck) error {
	if t.header.Alg != "RS256" {
		return fmt.Errorf("%w: alg %q, want RS256", ErrSignature, t.header.Alg)
	}
	key := keys[t.header.Kid]
	if key == nil && t.header.Kid == "" && len(keys) == 1 {
		for _, k := range keys {
			key = k
		}
	}
	if key == nil {
		return fmt.Errorf("%w: no key with kid %q", ErrSignature, t.header.Kid)
	}
	sum := sha256.Sum256(t.signed)
	if err := rsa.VerifyPKCS1v15(key, crypto.SHA256, sum[:], t.signature); err != nil {
		return fmt.Errorf("%w: %v", ErrSignature, err)
	}
	return checkClaims(t.claims, c)
}

// checkClaims checks an id_token's registered claims.
func checkClaims(claims map[string]any, c idTokenCheck) error {
	iss := str(claims, "iss")
	switch {
	case iss == "":
		return fmt.Errorf("%w: no iss", ErrClaims)
	case len(c.issuers) > 0 && !slices.Contains(c.issuers, iss):
		return fmt.Errorf("%w: iss %q is not an accepted issuer", ErrClaims, iss)
	}
	var aud []string
	switch v := claims["aud"].(type) {
	case string:
		aud = []string{v}
	case []any:
		for _, a := range v {
			if s, ok := a.(string); ok {
				aud = append(aud, s)
			}
		}
	}
	if c.clientID == "" || !slices.Contains(aud, c.clientID) {
		return fmt.Errorf("%w: aud does not name the client", ErrClaims)
	}
	if azp, ok := claims["azp"].(string); ok && len(aud) > 1 && azp != c.clientID {
		return fmt.Errorf("%w: azp is another client", ErrClaims)
	}
	exp, ok := numericDate(claims["exp"])
	if !ok {
		return fmt.Errorf("%w: no exp", ErrClaims)
	}
	if !c.now.Before(exp.Add(c.leeway)) {
		return fmt.Errorf("%w: expired at %s", ErrClaims, exp.UTC().Format(time.RFC3339))
	}
	if iat, ok := numericDate(claims["iat"]); ok && iat.After(c.now.Add(c.leeway)) {
		return fmt.Errorf("%w: issued in the future (%s)", ErrClaims, iat.UTC().Format(time.RFC3339))
	}
	if c.nonce != "" && str(claims, "nonce") != c.nonce {
		return fmt.Errorf("%w: nonce mismatch", ErrClaims)
	}
	return nil
}

// numericDate reads a JWT NumericDate (RFC 7519 §2: seconds since the
// epoch, possibly fractional).
func numericDate(v any) (time.Time, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return time.Time{}, false
	}
	f, err := n.Float64()
	if err != nil || f < 0 || f > 1e11 {
		return time.Time{}, false
	}
	sec := int64(f)
	return time.Unix(sec, int64((f-float64(sec))*1e9)), true
}
