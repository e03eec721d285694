// Package webauthntest is a software authenticator for tests: it makes
// the registration and authentication responses (WebAuthn Level 3 JSON
// forms) that a browser would send for a platform authenticator, with an
// ES256, EdDSA or RS256 key, and can spoil them one part at a time
// (signature, origin, RP ID hash, challenge, counter) so that tests see
// each check refuse.
package webauthntest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"strongbox/authn/webauthn"
)

// Authenticator holds one credential. Its fields may be changed between
// ceremonies to spoil the next response.
type Authenticator struct {
	Alg          int
	CredentialID []byte
	UserHandle   []byte
	Counter      uint32 // the last counter signed; each assertion adds CounterStep
	CounterStep  uint32 // 1 by default; 0 keeps no counter
	Flags        webauthn.Flags
	RPID         string // hashed into authenticator data
	Origin       string // written into client data
	Type         string // client data type; "" is the ceremony's own
	CrossOrigin  bool
	Format       string // "none" (default) or "packed" (self attestation)
	// TamperSignature flips a bit of the next signatures.
	TamperSignature bool

	priv crypto.Signer
}

// New returns an authenticator with a new key for alg (webauthn.AlgES256,
// AlgEdDSA or AlgRS256, 2048 bits) and a random 32-byte credential id,
// for relying party rp.
func New(alg int, rp webauthn.RelyingParty) (*Authenticator, error) {
	a := &Authenticator{Alg: alg, CounterStep: 1, Flags: webauthn.FlagUP | webauthn.FlagUV, RPID: rp.ID, Origin: rp.Origin, Format: "none"}
	var err error
	switch alg {
	case webauthn.AlgES256:
		a.priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case webauthn.AlgEdDSA:
		_, a.priv, err = ed25519.GenerateKey(rand.Reader)
	case webauthn.AlgRS256:
		a.priv, err = rsa.GenerateKey(rand.Reader, 2048)
	default:
		err = fmt.Errorf("webauthntest: unsupported alg %d", alg)
	}
	if err != nil {
		return nil, err
	}
	a.CredentialID = make([]byte, 32)
	rand.Read(a.CredentialID)
	return a, nil
}

// COSEKey returns the credential public key as a COSE_Key.
func (a *Authenticator) COSEKey() []byte {
	switch k := a.priv.Public().(type) {
	case *ecdsa.PublicKey:
		p, _ := k.Bytes()
		return Map(1, 2, 3, -7, -1, 1, -2, p[1:33], -3, p[33:65])
	case ed25519.PublicKey:
		return Map(1, 1, 3, -8, -1, 6, -2, []byte(k))
	case *rsa.PublicKey:
		return Map(1, 3, 3, -257, -1, k.N.Bytes(), -2, big(k.E))
	}
	return nil
}

func big(e int) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(e))
	for len(b) > 1 && b[0] == 0 {
		b = b[1:]
	}
	return b
}

// Sign signs msg as the authenticator does for its algorithm.
func (a *Authenticator) Sign(msg []byte) []byte {
	var sig []byte
	switch a.Alg {
	case webauthn.AlgEdDSA:
		sig, _ = a.priv.Sign(nil, msg, crypto.Hash(0))
	default:
		h := sha256.Sum256(msg)
		sig, _ = a.priv.Sign(rand.Reader, h[:], crypto.SHA256)
	}
	if a.TamperSignature {
		sig[len(sig)-1] ^= 1
	}
	return sig
}

func (a *Authenticator) clientData(typ string, challenge []byte) []byte {
	if a.Type != "" {
		typ = a.Type
	}
	b, _ := json.Marshal(map[string]any{
		"type": typ, "challenge": base64.RawURLEncoding.EncodeToString(challenge),
		"origin": a.Origin, "crossOrigin": a.CrossOrigin,
	})
	return b
}

func (a *Authenticator) authData(flags webauthn.Flags, attested bool) []byte {
	h := sha256.Sum256([]byte(a.RPID))
	b := append(h[:], byte(flags))
	b = binary.BigEndian.AppendUint32(b, a.Counter)
	if attested {
		b = append(b, make([]byte, 16)...) // AAGUID
		b = binary.BigEndian.AppendUint16(b, uint16(len(a.CredentialID)))
		b = append(b, a.CredentialID...)
		b = append(b, a.COSEKey()...)
	}
	return b
}

// Register answers creation options with a RegistrationResponseJSON.
func (a *Authenticator) Register(challenge, userHandle []byte) []byte {
	a.UserHandle = userHandle
	cd := a.clientData(webauthn.TypeCreate, challenge)
	ad := a.authData(a.Flags|webauthn.FlagAT, true)
	var att Raw
	if a.Format == "packed" {
		h := sha256.Sum256(cd)
		sig := a.Sign(append(append([]byte{}, ad...), h[:]...))
		att = Map("fmt", "packed", "attStmt", Map("alg", a.Alg, "sig", sig), "authData", ad)
	} else {
		att = Map("fmt", "none", "attStmt", Map(), "authData", ad)
	}
	return a.response(map[string]any{
		"clientDataJSON": b64(cd), "attestationObject": b64(att), "transports": []string{"internal"},
	}, "platform")
}

// Assert answers request options with an AuthenticationResponseJSON,
// after moving the counter on by CounterStep.
func (a *Authenticator) Assert(challenge []byte) []byte {
	a.Counter += a.CounterStep
	cd := a.clientData(webauthn.TypeGet, challenge)
	ad := a.authData(a.Flags, false)
	h := sha256.Sum256(cd)
	sig := a.Sign(append(append([]byte{}, ad...), h[:]...))
	return a.response(map[string]any{
		"clientDataJSON": b64(cd), "authenticatorData": b64(ad), "signature": b64(sig), "userHandle": b64(a.UserHandle),
	}, "platform")
}

func (a *Authenticator) response(resp map[string]any, attachment string) []byte {
	b, _ := json.Marshal(map[string]any{
		"id": b64(a.CredentialID), "rawId": b64(a.CredentialID), "type": "public-key",
		"response": resp, "authenticatorAttachment": attachment, "clientExtensionResults": map[string]any{},
	})
	return b
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// Map encodes a CBOR map of its alternating keys and values (see
// Encode); nest maps by passing a Map as a value.
func Map(kv ...any) Raw {
	b := head(5, uint64(len(kv)/2))
	for _, x := range kv {
		b = append(b, Encode(x)...)
	}
	return b
}

// Encode encodes x as CBOR: an int, a []byte, a string, a []byte that is
// already CBOR (Raw), a bool or nil.
func Encode(x any) []byte {
	switch v := x.(type) {
	case int:
		if v < 0 {
			return head(1, uint64(-1-v))
		}
		return head(0, uint64(v))
	case []byte:
		return append(head(2, uint64(len(v))), v...)
	case string:
		return append(head(3, uint64(len(v))), v...)
	case Raw:
		return v
	case bool:
		if v {
			return []byte{0xf5}
		}
		return []byte{0xf4}
	case nil:
		return []byte{0xf6}
	}
	panic(fmt.Sprintf("webauthntest: cannot encode %T", x))
}

// Raw is CBOR already encoded.
type Raw []byte

func head(major byte, n uint64) []byte {
	m := major << 5
	switch {
	case n < 24:
		return []byte{m | byte(n)}
	case n <= 0xff:
		return []byte{m | 24, byte(n)}
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16([]byte{m | 25}, uint16(n))
	case n <= 0xffffffff:
		return binary.BigEndian.AppendUint32([]byte{m | 26}, uint32(n))
	}
	return binary.BigEndian.AppendUint64([]byte{m | 27}, n)
}
