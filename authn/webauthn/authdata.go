package webauthn

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Flags are the flags byte of authenticator data (WebAuthn §6.1).
type Flags byte

// The flags.
const (
	FlagUP Flags = 1 << 0 // user present
	FlagUV Flags = 1 << 2 // user verified
	FlagBE Flags = 1 << 3 // backup eligible
	FlagBS Flags = 1 << 4 // backed up
	FlagAT Flags = 1 << 6 // attested credential data included
	FlagED Flags = 1 << 7 // extension data included
)

// Has reports whether every flag of f2 is set in f.
func (f Flags) Has(f2 Flags) bool { return f&f2 == f2 }

// MaxCredentialIDBytes is the longest credential id accepted (WebAuthn
// §6.5.1: credentialIdLength ≤ 1023).
const MaxCredentialIDBytes = 1023

// ErrAuthData is wrapped by every authenticator data error.
var ErrAuthData = errors.New("webauthn: invalid authenticator data")

// AuthData is parsed authenticator data (WebAuthn §6.1).
type AuthData struct {
	RPIDHash  [32]byte
	Flags     Flags
	SignCount uint32
	// Attested credential data (§6.5.1), present when FlagAT is set.
	AAGUID       [16]byte
	CredentialID []byte
	PublicKey    []byte // the COSE_Key, as CBOR
	Key          *PublicKey
	// Extensions is the CBOR of the extensions map, when FlagED is set.
	Extensions []byte
}

// ParseAuthData parses authenticator data: the RP ID hash, flags and
// counter, then the attested credential data when AT is set (a credential
// id of at most MaxCredentialIDBytes and a public key ParseKey accepts),
// then the extensions map when ED is set, and nothing after them. BS
// without BE is refused (§6.1.3).
func ParseAuthData(b []byte) (*AuthData, error) {
	if len(b) < 37 {
		return nil, fmt.Errorf("%w: %d bytes, want at least 37", ErrAuthData, len(b))
	}
	a := &AuthData{Flags: Flags(b[32]), SignCount: binary.BigEndian.Uint32(b[33:37])}
	copy(a.RPIDHash[:], b[:32])
	if a.Flags.Has(FlagBS) && !a.Flags.Has(FlagBE) {
		return nil, fmt.Errorf("%w: backed up but not backup eligible", ErrAuthData)
	}
	rest := b[37:]
	if a.Flags.Has(FlagAT) {
		if len(rest) < 18 {
			return nil, fmt.Errorf("%w: attested credential data truncated", ErrAuthData)
		}
		copy(a.AAGUID[:], rest[:16])
		n := int(binary.BigEndian.Uint16(rest[16:18]))
		rest = rest[18:]
		if n == 0 || n > MaxCredentialIDBytes || n > len(rest) {
			return nil, fmt.Errorf("%w: credential id of %d bytes", ErrAuthData, n)
		}
		a.CredentialID, rest = rest[:n:n], rest[n:]
		v, used, err := DecodeFirst(rest)
		if err != nil {
			return nil, fmt.Errorf("%w: credential public key: %w", ErrAuthData, err)
		}
		if a.Key, err = ParseKey(v); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrAuthData, err)
		}
		a.PublicKey, rest = rest[:used:used], rest[used:]
	}
	if a.Flags.Has(FlagED) {
		v, used, err := DecodeFirst(rest)
		if err != nil {
			return nil, fmt.Errorf("%w: extensions: %w", ErrAuthData, err)
		}
		if v.Kind != KindMap {
			return nil, fmt.Errorf("%w: extensions are not a map", ErrAuthData)
		}
		a.Extensions, rest = rest[:used:used], rest[used:]
	}
	if len(rest) > 0 {
		return nil, fmt.Errorf("%w: %d bytes left over", ErrAuthData, len(rest))
	}
	return a, nil
}
