package webauthn

import (
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// MaxClientDataBytes bounds clientDataJSON; browsers send about 200 bytes.
const MaxClientDataBytes = 4096

// ErrClientData is wrapped by every clientDataJSON error.
var ErrClientData = errors.New("webauthn: invalid client data")

// The ceremony types of clientDataJSON (WebAuthn §5.8.1).
const (
	TypeCreate = "webauthn.create"
	TypeGet    = "webauthn.get"
)

// ClientData is the parsed CollectedClientData (WebAuthn §5.8.1).
type ClientData struct {
	Type        string `json:"type"`
	Challenge   string `json:"challenge"`
	Origin      string `json:"origin"`
	CrossOrigin bool   `json:"crossOrigin"`
	TopOrigin   string `json:"topOrigin"`
}

// ParseClientData parses clientDataJSON: a JSON object of at most
// MaxClientDataBytes whose type, challenge and origin are strings.
func ParseClientData(b []byte) (*ClientData, error) {
	if len(b) > MaxClientDataBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrClientData, len(b), MaxClientDataBytes)
	}
	var raw struct {
		Type        *string `json:"type"`
		Challenge   *string `json:"challenge"`
		Origin      *string `json:"origin"`
		CrossOrigin *bool   `json:"crossOrigin"`
		TopOrigin   *string `json:"topOrigin"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrClientData, err)
	}
	if raw.Type == nil || raw.Challenge == nil || raw.Origin == nil {
		return nil, fmt.Errorf("%w: type, challenge and origin are required", ErrClientData)
	}
	c := &ClientData{Type: *raw.Type, Challenge: *raw.Challenge, Origin: *raw.Origin}
	if raw.CrossOrigin != nil {
		c.CrossOrigin = *raw.CrossOrigin
	}
	if raw.TopOrigin != nil {
		c.TopOrigin = *raw.TopOrigin
	}
	return c, nil
}

// Check verifies the client data of a ceremony of type typ (WebAuthn
// §7.1 steps 7–10, §7.2 steps 11–14): the type, the challenge (unpadded
// base64url of exactly the challenge issued, compared in constant time),
// the origin (exactly the relying party's) and crossOrigin false.
func (c *ClientData) Check(typ string, challenge []byte, origin string) error {
	if c.Type != typ {
		return fmt.Errorf("%w: type %q, want %q", ErrClientData, c.Type, typ)
	}
	got, err := base64.RawURLEncoding.DecodeString(c.Challenge)
	if err != nil || subtle.ConstantTimeCompare(got, challenge) != 1 {
		return fmt.Errorf("%w: %w", ErrClientData, ErrChallenge)
	}
	if c.Origin != origin {
		return fmt.Errorf("%w: origin %q, want %q", ErrClientData, c.Origin, origin)
	}
	if c.CrossOrigin {
		return fmt.Errorf("%w: cross-origin ceremonies are refused", ErrClientData)
	}
	return nil
}

// ErrChallenge reports client data signed for another challenge.
var ErrChallenge = errors.New("webauthn: challenge mismatch")
