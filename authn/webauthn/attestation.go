package webauthn

import (
	"crypto/x509"
	"errors"
	"fmt"
)

// MaxAttestationBytes bounds an attestation object: a packed one with a
// certificate chain is a few kilobytes.
const MaxAttestationBytes = 16 << 10

// ErrAttestation is wrapped by every attestation error.
var ErrAttestation = errors.New("webauthn: invalid attestation")

// Attestation is a parsed attestation object (WebAuthn §6.5.4).
type Attestation struct {
	Format      string
	Statement   Value // attStmt, a map
	RawAuthData []byte
	AuthData    *AuthData
}

// ParseAttestation parses an attestation object: a CBOR map of at most
// MaxAttestationBytes with a text fmt, a map attStmt and byte string
// authData whose attested credential data is present.
func ParseAttestation(b []byte) (*Attestation, error) {
	if len(b) > MaxAttestationBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrAttestation, len(b), MaxAttestationBytes)
	}
	v, err := Decode(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrAttestation, err)
	}
	if v.Kind != KindMap {
		return nil, fmt.Errorf("%w: not a map", ErrAttestation)
	}
	f, ok1 := v.GetText("fmt")
	st, ok2 := v.GetText("attStmt")
	ad, ok3 := v.GetText("authData")
	if !ok1 || !ok2 || !ok3 || f.Kind != KindText || st.Kind != KindMap || ad.Kind != KindBytes {
		return nil, fmt.Errorf("%w: fmt, attStmt and authData are required", ErrAttestation)
	}
	a := &Attestation{Format: string(f.Bytes), Statement: st, RawAuthData: ad.Bytes}
	if a.AuthData, err = ParseAuthData(ad.Bytes); err != nil {
		return nil, err
	}
	if !a.AuthData.Flags.Has(FlagAT) {
		return nil, fmt.Errorf("%w: no attested credential data", ErrAttestation)
	}
	return a, nil
}

// Verify checks the attestation statement over clientDataHash (WebAuthn
// §8): "none" has an empty statement; "packed" (§8.2) signs authData ‖
// clientDataHash, with the credential's own key (self attestation, alg
// the credential's) or, with x5c, with the key of its first certificate.
// The certificate chain is not checked against any trust anchor: this
// relying party asks for attestation "none" and trusts no authenticator
// model more than another, so a packed statement only proves the
// authenticator was consistent. Other formats are refused.
func (a *Attestation) Verify(clientDataHash []byte) error {
	switch a.Format {
	case "none":
		if len(a.Statement.Pairs) != 0 {
			return fmt.Errorf("%w: none with a statement", ErrAttestation)
		}
		return nil
	case "packed":
		return a.verifyPacked(clientDataHash)
	}
	return fmt.Errorf("%w: unsupported format %q", ErrAttestation, a.Format)
}

func (a *Attestation) verifyPacked(clientDataHash []byte) error {
	alg, okAlg := intOf2(a.Statement, "alg")
	sig, okSig := a.Statement.GetText("sig")
	if !okAlg || !okSig || sig.Kind != KindBytes {
		return fmt.Errorf("%w: packed needs alg and sig", ErrAttestation)
	}
	msg := append(append([]byte{}, a.RawAuthData...), clientDataHash...)
	x5c, hasX5C := a.Statement.GetText("x5c")
	if !hasX5C {
		if alg != int64(a.AuthData.Key.Alg) {
			return fmt.Errorf("%w: self attestation alg %d, the credential's is %d", ErrAttestation, alg, a.AuthData.Key.Alg)
		}
		if err := a.AuthData.Key.Verify(msg, sig.Bytes); err != nil {
			return fmt.Errorf("%w: %w", ErrAttestation, err)
		}
		return nil
	}
	if x5c.Kind != KindArray || len(x5c.Items) == 0 || x5c.Items[0].Kind != KindBytes {
		return fmt.Errorf("%w: x5c is not an array of certificates", ErrAttestation)
	}
	cert, err := x509.ParseCertificate(x5c.Items[0].Bytes)
	if err != nil {
		return fmt.Errorf("%w: x5c: %v", ErrAttestation, err)
	}
	if cert.Version != 3 || cert.IsCA {
		return fmt.Errorf("%w: the attestation certificate must be a version 3 leaf", ErrAttestation)
	}
	if alg > 1<<20 || alg < -1<<20 {
		return fmt.Errorf("%w: alg %d", ErrAttestation, alg)
	}
	if err := verifyWith(cert.PublicKey, int(alg), msg, sig.Bytes); err != nil {
		return fmt.Errorf("%w: %w", ErrAttestation, err)
	}
	return nil
}

func intOf2(m Value, label string) (int64, bool) {
	v, ok := m.GetText(label)
	if !ok || v.Kind != KindInt {
		return 0, false
	}
	return v.Int, true
}
