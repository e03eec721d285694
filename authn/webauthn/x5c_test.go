package webauthn_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"testing"
	"time"

	"strongbox/authn/webauthn"
	"strongbox/authn/webauthntest"
)

// TestPackedX5C: a packed statement with x5c is verified with the key of
// its first certificate, which must be a version 3 leaf; a signature by
// another key, a CA certificate and a certificate that is no DER are
// refused. The authData is a real registration's.
func TestPackedX5C(t *testing.T) {
	a, err := webauthntest.New(webauthn.AlgES256, testRP)
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Response struct{ ClientDataJSON, AttestationObject string }
	}
	if err := json.Unmarshal(a.Register([]byte("challenge-challenge-challenge-32"), []byte("user")), &resp); err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(resp.Response.AttestationObject)
	cd, _ := base64.RawURLEncoding.DecodeString(resp.Response.ClientDataJSON)
	base, err := webauthn.ParseAttestation(raw)
	if err != nil {
		t.Fatal(err)
	}
	cdHash := sha256.Sum256(cd)
	msg := append(append([]byte{}, base.RawAuthData...), cdHash[:]...)

	certKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	cert := func(ca bool) []byte {
		tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "authenticator"},
			NotBefore: time.Unix(0, 0), NotAfter: time.Unix(4102444800, 0), IsCA: ca, BasicConstraintsValid: ca}
		der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &certKey.PublicKey, certKey)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	sign := func(k *ecdsa.PrivateKey) []byte {
		h := sha256.Sum256(msg)
		sig, err := ecdsa.SignASN1(rand.Reader, k, h[:])
		if err != nil {
			t.Fatal(err)
		}
		return sig
	}
	object := func(sig, der []byte) []byte {
		x5c := append([]byte{0x81}, webauthntest.Encode(der)...) // an array of one certificate
		return webauthntest.Map("fmt", "packed", "attStmt",
			webauthntest.Map("alg", webauthn.AlgES256, "sig", sig, "x5c", webauthntest.Raw(x5c)), "authData", base.RawAuthData)
	}
	for _, tt := range []struct {
		name string
		obj  []byte
		ok   bool
	}{
		{"signed by the certificate's key", object(sign(certKey), cert(false)), true},
		{"signed by another key", object(sign(other), cert(false)), false},
		{"a CA certificate", object(sign(certKey), cert(true)), false},
		{"no certificate but bytes", object(sign(certKey), []byte("not DER")), false},
	} {
		att, err := webauthn.ParseAttestation(tt.obj)
		if err == nil {
			err = att.Verify(cdHash[:])
		}
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, webauthn.ErrAttestation)) {
			t.Errorf("%s: %v, want ok %v (or ErrAttestation)", tt.name, err, tt.ok)
		}
	}
}
