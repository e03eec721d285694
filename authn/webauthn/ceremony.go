package webauthn

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// RelyingParty is who the ceremonies are for: ID is the RP ID (a domain,
// WebAuthn §5.1.1), Origin the one web origin allowed to run them.
type RelyingParty struct {
	ID     string
	Origin string
	Name   string // shown by the authenticator
}

// ErrRelyingParty reports an app URL no relying party can be made of.
var ErrRelyingParty = errors.New("webauthn: the app URL cannot name a relying party")

// NewRelyingParty makes the relying party of an application served at
// appURL: the RP ID is its host (without port), the origin its scheme,
// host and port. The URL must be absolute http or https, and its host a
// domain name: browsers refuse an IP address as an RP ID (WebAuthn
// §5.1.1 requires a valid domain string).
func NewRelyingParty(appURL, name string) (RelyingParty, error) {
	u, err := url.Parse(appURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return RelyingParty{}, fmt.Errorf("%w: want an absolute http or https URL", ErrRelyingParty)
	}
	host := strings.ToLower(u.Hostname())
	if host == "" || net.ParseIP(host) != nil {
		return RelyingParty{}, fmt.Errorf("%w: its host is an IP address, and browsers accept only a domain name", ErrRelyingParty)
	}
	origin := strings.ToLower(u.Scheme) + "://" + host
	if p := u.Port(); p != "" && !(u.Scheme == "https" && p == "443") && !(u.Scheme == "http" && p == "80") {
		origin += ":" + p
	}
	if name == "" {
		name = host
	}
	return RelyingParty{ID: host, Origin: origin, Name: name}, nil
}

// ErrRPIDHash reports authenticator data made for another RP ID.
var ErrRPIDHash = errors.New("webauthn: authenticator data is for another relying party")

// ErrUserPresence reports authenticator data without the UP flag.
var ErrUserPresence = errors.New("webauthn: the user was not present")

// ErrUserVerification reports authenticator data without the UV flag
// where user verification is required.
var ErrUserVerification = errors.New("webauthn: the user was not verified")

// Credential is a verified new credential.
type Credential struct {
	ID        []byte
	PublicKey []byte // the COSE_Key
	Alg       int
	SignCount uint32
	Flags     Flags
	AAGUID    [16]byte
	Format    string
}

// VerifyRegistration runs WebAuthn §7.1 on a registration response for
// challenge: client data (steps 7–11), the attestation object and its
// authenticator data (RP ID hash, UP, UV when requireUV, an offered
// algorithm: steps 12–17), and the attestation statement (steps 18–21).
func (rp RelyingParty) VerifyRegistration(clientDataJSON, attestationObject, challenge []byte, requireUV bool) (*Credential, error) {
	cd, err := ParseClientData(clientDataJSON)
	if err != nil {
		return nil, err
	}
	if err := cd.Check(TypeCreate, challenge, rp.Origin); err != nil {
		return nil, err
	}
	att, err := ParseAttestation(attestationObject)
	if err != nil {
		return nil, err
	}
	ad := att.AuthData
	if err := rp.checkFlags(ad, requireUV); err != nil {
		return nil, err
	}
	h := sha256.Sum256(clientDataJSON)
	if err := att.Verify(h[:]); err != nil {
		return nil, err
	}
	return &Credential{
		ID: ad.CredentialID, PublicKey: ad.PublicKey, Alg: ad.Key.Alg, SignCount: ad.SignCount,
		Flags: ad.Flags, AAGUID: ad.AAGUID, Format: att.Format,
	}, nil
}

// checkFlags checks the RP ID hash and the UP and UV flags.
func (rp RelyingParty) checkFlags(ad *AuthData, requireUV bool) error {
	want := sha256.Sum256([]byte(rp.ID))
	if subtle.ConstantTimeCompare(ad.RPIDHash[:], want[:]) != 1 {
		return ErrRPIDHash
	}
	if !ad.Flags.Has(FlagUP) {
		return ErrUserPresence
	}
	if requireUV && !ad.Flags.Has(FlagUV) {
		return ErrUserVerification
	}
	return nil
}

// Assertion is a verified sign-in by a credential.
type Assertion struct {
	Flags     Flags
	SignCount uint32
}

// VerifyAssertion runs WebAuthn §7.2 steps 11–21 on an authentication
// response for challenge, by the credential whose key is publicKey (its
// stored COSE_Key): client data, authenticator data (RP ID hash, UP, UV
// when requireUV), and the signature over authenticatorData ‖
// SHA-256(clientDataJSON). Checking the signature counter against the
// stored one (step 22, CounterOK) and the user handle are the caller's.
func (rp RelyingParty) VerifyAssertion(clientDataJSON, authenticatorData, signature, challenge, publicKey []byte, requireUV bool) (*Assertion, error) {
	key, err := ParseKeyBytes(publicKey)
	if err != nil {
		return nil, err
	}
	cd, err := ParseClientData(clientDataJSON)
	if err != nil {
		return nil, err
	}
	if err := cd.Check(TypeGet, challenge, rp.Origin); err != nil {
		return nil, err
	}
	ad, err := ParseAuthData(authenticatorData)
	if err != nil {
		return nil, err
	}
	if ad.Flags.Has(FlagAT) {
		return nil, fmt.Errorf("%w: attested credential data in an assertion", ErrAuthData)
	}
	if err := rp.checkFlags(ad, requireUV); err != nil {
		return nil, err
	}
	h := sha256.Sum256(clientDataJSON)
	msg := make([]byte, 0, len(authenticatorData)+len(h))
	msg = append(append(msg, authenticatorData...), h[:]...)
	if err := key.Verify(msg, signature); err != nil {
		return nil, err
	}
	return &Assertion{Flags: ad.Flags, SignCount: ad.SignCount}, nil
}

// CounterOK reports whether an assertion's signature counter got is
// acceptable after stored (WebAuthn §7.2 step 22): both zero (the
// authenticator keeps no counter), or got greater than stored. Anything
// else may be a cloned authenticator.
func CounterOK(stored, got uint32) bool {
	return (stored == 0 && got == 0) || got > stored
}
