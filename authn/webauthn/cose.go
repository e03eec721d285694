package webauthn

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/big"
	"slices"
)

// The COSE algorithms (RFC 9053, IANA "COSE Algorithms") a relying party
// offers, in the order it prefers them.
const (
	AlgES256 = -7   // ECDSA with SHA-256 on P-256
	AlgEdDSA = -8   // Ed25519
	AlgRS256 = -257 // RSASSA-PKCS1-v1_5 with SHA-256
)

// Algorithms are the COSE algorithms accepted, preferred first.
var Algorithms = []int{AlgES256, AlgEdDSA, AlgRS256}

// RSA key bounds: at least 2048 bits (NIST SP 800-131A), at most 4096 so
// that one verification stays cheap.
const (
	MinRSABits = 2048
	MaxRSABits = 4096
)

// ErrKey is wrapped by every COSE key error.
var ErrKey = errors.New("webauthn: invalid COSE key")

// ErrSignature reports a signature that does not verify.
var ErrSignature = errors.New("webauthn: invalid signature")

// PublicKey is a credential public key parsed from its COSE_Key form.
type PublicKey struct {
	Alg int
	key crypto.PublicKey // *ecdsa.PublicKey, ed25519.PublicKey or *rsa.PublicKey
}

// COSE_Key labels (RFC 9052 §7.1, RFC 9053 §7).
const (
	coseKty = 1
	coseAlg = 3
	coseCrv = -1 // EC2 and OKP
	coseX   = -2
	coseY   = -3
	coseN   = -1 // RSA
	coseE   = -2
)

// ParseKey parses a COSE_Key (RFC 9052 §7) of one of Algorithms: EC2 on
// P-256 with alg ES256 (a point on the curve, coordinates of 32 bytes),
// OKP Ed25519 with alg EdDSA, or RSA with alg RS256 whose modulus has
// MinRSABits to MaxRSABits bits and whose exponent is odd and at least 3.
// The alg label is required (WebAuthn §6.5.1.1 requires it of a
// credential public key).
func ParseKey(v Value) (*PublicKey, error) {
	if v.Kind != KindMap {
		return nil, fmt.Errorf("%w: not a map", ErrKey)
	}
	kty, okKty := intOf(v, coseKty)
	alg, okAlg := intOf(v, coseAlg)
	if !okKty || !okAlg {
		return nil, fmt.Errorf("%w: kty and alg are required", ErrKey)
	}
	switch {
	case kty == 2 && alg == AlgES256:
		crv, _ := intOf(v, coseCrv)
		x, y := bytesOf(v, coseX), bytesOf(v, coseY)
		if crv != 1 || len(x) != 32 || len(y) != 32 {
			return nil, fmt.Errorf("%w: ES256 needs crv P-256 and 32-byte x and y", ErrKey)
		}
		k, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrKey, err)
		}
		return &PublicKey{Alg: AlgES256, key: k}, nil
	case kty == 1 && alg == AlgEdDSA:
		crv, _ := intOf(v, coseCrv)
		x := bytesOf(v, coseX)
		if crv != 6 || len(x) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("%w: EdDSA needs crv Ed25519 and a 32-byte x", ErrKey)
		}
		return &PublicKey{Alg: AlgEdDSA, key: ed25519.PublicKey(slices.Clone(x))}, nil
	case kty == 3 && alg == AlgRS256:
		return parseRSA(v)
	}
	return nil, fmt.Errorf("%w: unsupported kty %d with alg %d", ErrKey, kty, alg)
}

func parseRSA(v Value) (*PublicKey, error) {
	nb, eb := bytesOf(v, coseN), bytesOf(v, coseE)
	if len(nb) == 0 || nb[0] == 0 || len(eb) == 0 || len(eb) > 4 || eb[0] == 0 {
		return nil, fmt.Errorf("%w: RS256 needs n and e without leading zeros, e of at most 4 bytes", ErrKey)
	}
	n := new(big.Int).SetBytes(nb)
	if bits := n.BitLen(); bits < MinRSABits || bits > MaxRSABits {
		return nil, fmt.Errorf("%w: RSA modulus of %d bits, want %d to %d", ErrKey, bits, MinRSABits, MaxRSABits)
	}
	e := 0
	for _, c := range eb {
		e = e<<8 | int(c)
	}
	if e < 3 || e%2 == 0 || e > 1<<31-1 {
		return nil, fmt.Errorf("%w: RSA exponent %d", ErrKey, e)
	}
	return &PublicKey{Alg: AlgRS256, key: &rsa.PublicKey{N: n, E: e}}, nil
}

// ParseKeyBytes parses the CBOR encoding of a COSE_Key (see ParseKey).
func ParseKeyBytes(b []byte) (*PublicKey, error) {
	v, err := Decode(b)
	if err != nil {
		return nil, err
	}
	return ParseKey(v)
}

// Verify checks sig over msg: ASN.1 DER ECDSA for ES256, PKCS #1 v1.5 for
// RS256, both over SHA-256 of msg, and Ed25519 over msg itself.
func (k *PublicKey) Verify(msg, sig []byte) error {
	return verifyWith(k.key, k.Alg, msg, sig)
}

// verifyWith checks sig over msg with key (an ECDSA, Ed25519 or RSA public
// key) for COSE algorithm alg; a key of another type than alg's fails.
func verifyWith(key crypto.PublicKey, alg int, msg, sig []byte) error {
	ok := false
	switch k := key.(type) {
	case *ecdsa.PublicKey:
		if alg == AlgES256 && k.Curve == elliptic.P256() {
			h := sha256.Sum256(msg)
			ok = ecdsa.VerifyASN1(k, h[:], sig)
		}
	case ed25519.PublicKey:
		ok = alg == AlgEdDSA && ed25519.Verify(k, msg, sig)
	case *rsa.PublicKey:
		if alg == AlgRS256 {
			h := sha256.Sum256(msg)
			ok = rsa.VerifyPKCS1v15(k, crypto.SHA256, h[:], sig) == nil
		}
	}
	if !ok {
		return ErrSignature
	}
	return nil
}

func intOf(m Value, label int64) (int64, bool) {
	v, ok := m.Get(label)
	if !ok || v.Kind != KindInt {
		return 0, false
	}
	return v.Int, true
}

func bytesOf(m Value, label int64) []byte {
	v, ok := m.Get(label)
	if !ok || v.Kind != KindBytes {
		return nil
	}
	return v.Bytes
}
