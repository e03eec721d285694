package age

import (
	"crypto/ecdh"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The X25519 recipient type of the C2SP age spec: a recipient is a
// Curve25519 public key, "age1…" in bech32; an identity its private
// scalar, "AGE-SECRET-KEY-1…".
const (
	x25519Label    = "age-encryption.org/v1/X25519"
	recipientHRP   = "age"
	identityHRP    = "age-secret-key-"
	fileKeySize    = 16
	x25519KeySize  = 32
	wrappedKeySize = fileKeySize + aeadOverhead
)

// X25519Recipient is the public key an archive is encrypted to.
type X25519Recipient struct{ pub *ecdh.PublicKey }

// X25519Identity is the private key that opens what was encrypted to its
// [X25519Identity.Recipient].
type X25519Identity struct{ priv *ecdh.PrivateKey }

// GenerateX25519Identity returns a new identity whose scalar is read from
// random (crypto/rand.Reader, or a fixed stream in tests).
func GenerateX25519Identity(random io.Reader) (*X25519Identity, error) {
	var b [x25519KeySize]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return nil, fmt.Errorf("age: generate identity: %w", err)
	}
	priv, err := ecdh.X25519().NewPrivateKey(b[:])
	if err != nil {
		return nil, fmt.Errorf("age: generate identity: %w", err)
	}
	return &X25519Identity{priv}, nil
}

// ParseX25519Identity parses an "AGE-SECRET-KEY-1…" string. Its error
// never repeats the string.
func ParseX25519Identity(s string) (*X25519Identity, error) {
	hrp, data, err := bech32Decode(s)
	if err != nil || hrp != identityHRP || len(data) != x25519KeySize || strings.ToUpper(s) != s {
		return nil, errors.New("age: not an X25519 identity (AGE-SECRET-KEY-1…)")
	}
	priv, err := ecdh.X25519().NewPrivateKey(data)
	if err != nil {
		return nil, errors.New("age: not an X25519 identity (AGE-SECRET-KEY-1…)")
	}
	return &X25519Identity{priv}, nil
}

// ParseX25519Recipient parses an "age1…" string.
func ParseX25519Recipient(s string) (*X25519Recipient, error) {
	hrp, data, err := bech32Decode(s)
	if err != nil || hrp != recipientHRP || len(data) != x25519KeySize || strings.ToLower(s) != s {
		return nil, fmt.Errorf("age: %q is not an X25519 recipient (age1…)", truncate(s))
	}
	pub, err := ecdh.X25519().NewPublicKey(data)
	if err != nil {
		return nil, fmt.Errorf("age: %q is not an X25519 recipient (age1…)", truncate(s))
	}
	return &X25519Recipient{pub}, nil
}

// truncate shortens a refused input for an error message.
func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// String returns the identity as "AGE-SECRET-KEY-1…".
func (i *X25519Identity) String() string {
	return strings.ToUpper(bech32Encode(identityHRP, i.priv.Bytes()))
}

// Recipient returns the public key of the identity.
func (i *X25519Identity) Recipient() *X25519Recipient {
	return &X25519Recipient{i.priv.PublicKey()}
}

// String returns the recipient as "age1…".
func (r *X25519Recipient) String() string { return bech32Encode(recipientHRP, r.pub.Bytes()) }

// Wrap encrypts the file key to the recipient: an ephemeral key pair,
// whose public half is the stanza's argument, and the file key sealed
// under HKDF(shared secret, ephemeral || recipient).
func (r *X25519Recipient) Wrap(fileKey []byte) ([]*Stanza, error) {
	eph, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("age: wrap: %w", err)
	}
	shared, err := eph.ECDH(r.pub)
	if err != nil {
		return nil, fmt.Errorf("age: wrap: %w", err)
	}
	share := eph.PublicKey().Bytes()
	key := hkdfKey(shared, append(share[:len(share):len(share)], r.pub.Bytes()...), x25519Label)
	body, err := aeadSeal(key, fileKey)
	if err != nil {
		return nil, err
	}
	return []*Stanza{{Type: "X25519", Args: []string{b64.EncodeToString(share)}, Body: body}}, nil
}

// Unwrap returns the file key of the first X25519 stanza the identity
// opens, [ErrIncorrectIdentity] if none, or an error for a malformed
// X25519 stanza (a wrong argument count, share or body length, or a
// low-order share), which fails the whole header as the spec requires.
func (i *X25519Identity) Unwrap(stanzas []*Stanza) ([]byte, error) {
	for _, s := range stanzas {
		if s.Type != "X25519" {
			continue
		}
		if len(s.Args) != 1 {
			return nil, headerErr("an X25519 stanza with %d arguments", len(s.Args))
		}
		share, err := b64.DecodeString(s.Args[0])
		if err != nil || len(share) != x25519KeySize {
			return nil, headerErr("an X25519 stanza with a malformed share")
		}
		if len(s.Body) != wrappedKeySize {
			return nil, headerErr("an X25519 stanza with a body of %d bytes", len(s.Body))
		}
		pub, err := ecdh.X25519().NewPublicKey(share)
		if err != nil {
			return nil, headerErr("an X25519 stanza with a malformed share")
		}
		shared, err := i.priv.ECDH(pub)
		if err != nil {
			return nil, headerErr("an X25519 stanza with a low-order share")
		}
		key := hkdfKey(shared, append(share, i.priv.PublicKey().Bytes()...), x25519Label)
		if fileKey, err := aeadOpen(key, s.Body); err == nil {
			return fileKey, nil
		}
	}
	return nil, ErrIncorrectIdentity
}

// aeadSeal seals a file key under key with ChaCha20-Poly1305 and a zero
// nonce: each key wraps exactly one file key.
func aeadSeal(key, fileKey []byte) ([]byte, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, fmt.Errorf("age: %w", err)
	}
	return aead.Seal(nil, make([]byte, aeadNonceSize), fileKey, nil), nil
}

// aeadOpen opens a wrapped file key, which must be fileKeySize bytes.
func aeadOpen(key, body []byte) ([]byte, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, fmt.Errorf("age: %w", err)
	}
	if len(body) != wrappedKeySize {
		return nil, errors.New("age: wrapped key of the wrong size")
	}
	return aead.Open(nil, make([]byte, aeadNonceSize), body, nil)
}
