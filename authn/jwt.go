package authn

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
)

// The only header strongbox writes and the only algorithm it accepts
// (RFC 8725 §2.1: the verifier, not the token, chooses the algorithm).
const jwtHeader = `{"alg":"HS256","typ":"JWT"}`

var (
	b64          = base64.RawURLEncoding.Strict()
	encodedHead  = b64.EncodeToString([]byte(jwtHeader))
	maxTokenSize = 8 << 10
)

// Token verification errors. Callers answer every one of them the same way
// (an invalid token is ignored, or the request is refused), so the split is
// for tests and logs only.
var (
	ErrTokenMalformed = errors.New("authn: malformed token")
	ErrTokenAlgorithm = errors.New("authn: token algorithm is not HS256")
	ErrTokenSignature = errors.New("authn: token signature is invalid")
	ErrTokenExpired   = errors.New("authn: token is expired")
	ErrTokenType      = errors.New("authn: token has the wrong type")
	ErrTokenRecord    = errors.New("authn: token record or collection not found")
)

// TokenType names what a token may be used for. Types are never
// interchangeable: each has its own claim value and its own signing secret.
type TokenType string

// The token types of an auth collection.
const (
	TokenAuth          TokenType = "auth"
	TokenFile          TokenType = "file"
	TokenVerification  TokenType = "verification"
	TokenPasswordReset TokenType = "passwordReset"
	TokenEmailChange   TokenType = "emailChange"
)

// TokenTypes lists every token type, in the order collections report their
// durations.
var TokenTypes = []TokenType{TokenAuth, TokenPasswordReset, TokenEmailChange, TokenVerification, TokenFile}

// Claims is the payload of a strongbox token. The JSON field order is
// alphabetical, as PocketBase writes it, so decoded tokens look the same.
type Claims struct {
	CollectionID string    `json:"collectionId"`
	Email        string    `json:"email,omitempty"`
	Exp          *int64    `json:"exp,omitempty"` // Unix seconds; nil for a token that never expires
	ID           string    `json:"id"`
	NewEmail     string    `json:"newEmail,omitempty"`
	Refreshable  *bool     `json:"refreshable,omitempty"` // auth tokens only
	Type         TokenType `json:"type"`
}

// Sign returns the compact HS256 JWT of c under key.
func Sign(c Claims, key []byte) (string, error) {
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(len(encodedHead) + 1 + b64.EncodedLen(len(payload)) + 1 + b64.EncodedLen(sha256.Size))
	b.WriteString(encodedHead)
	b.WriteByte('.')
	b.WriteString(b64.EncodeToString(payload))
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(b.String()))
	b.WriteByte('.')
	b.WriteString(b64.EncodeToString(mac.Sum(nil)))
	return b.String(), nil
}

// Parsed is a token split into its parts, its claims decoded but not yet
// trusted: they may only be used to find the key to verify it with.
type Parsed struct {
	Claims    Claims
	signed    string // header "." payload, the signing input
	signature []byte
}

// ParseUnverified splits a compact JWT and decodes it strictly: exactly three
// segments of unpadded base64url with no stray bits, a header naming HS256
// and no critical extensions, and a JSON object payload. It does not check
// the signature: call Verify with the key the claims point to.
func ParseUnverified(token string) (*Parsed, error) {
	if len(token) > maxTokenSize || strings.Count(token, ".") != 2 {
		return nil, ErrTokenMalformed
	}
	i := strings.IndexByte(token, '.')
	j := strings.LastIndexByte(token, '.')
	head, err := b64.DecodeString(token[:i])
	if err != nil {
		return nil, ErrTokenMalformed
	}
	var h struct {
		Alg  *string         `json:"alg"`
		Typ  *string         `json:"typ"`
		Crit json.RawMessage `json:"crit"`
	}
	if err := decodeObject(head, &h); err != nil {
		return nil, ErrTokenMalformed
	}
	if h.Alg == nil || *h.Alg != "HS256" || h.Crit != nil {
		return nil, ErrTokenAlgorithm
	}
	if h.Typ != nil && *h.Typ != "JWT" {
		return nil, ErrTokenMalformed
	}
	payload, err := b64.DecodeString(token[i+1 : j])
	if err != nil {
		return nil, ErrTokenMalformed
	}
	sig, err := b64.DecodeString(token[j+1:])
	if err != nil || len(sig) != sha256.Size {
		return nil, ErrTokenMalformed
	}
	p := &Parsed{signed: token[:j], signature: sig}
	if err := decodeObject(payload, &p.Claims); err != nil {
		return nil, ErrTokenMalformed
	}
	if p.Claims.ID == "" || p.Claims.CollectionID == "" || p.Claims.Type == "" {
		return nil, ErrTokenMalformed
	}
	return p, nil
}

// decodeObject decodes a JSON object into v, rejecting anything else and any
// trailing data.
func decodeObject(data []byte, v any) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return ErrTokenMalformed
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return ErrTokenMalformed
	}
	return nil
}

// Verify checks the signature with key in constant time.
func (p *Parsed) Verify(key []byte) error {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(p.signed))
	if !hmac.Equal(mac.Sum(nil), p.signature) {
		return ErrTokenSignature
	}
	return nil
}
