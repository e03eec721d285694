package webauthn_test

import (
	"bytes"
	"testing"

	"strongbox/authn/webauthn"
	"strongbox/authn/webauthntest"
)

// seedKeys are the COSE keys of the software authenticator, and broken
// ones.
func seedKeys(f *testing.F) [][]byte {
	var out [][]byte
	for _, alg := range algs {
		out = append(out, newAuthenticator(f, alg.alg).COSEKey())
	}
	return append(out, webauthntest.Map(1, 2, 3, -7), webauthntest.Map(1, 3, 3, -257, -1, []byte{1}, -2, []byte{1, 0, 1}))
}

// FuzzParseKey checks that no input panics and that a key parsed has one
// of the offered algorithms and refuses an empty signature.
func FuzzParseKey(f *testing.F) {
	for _, k := range seedKeys(f) {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := webauthn.ParseKeyBytes(b)
		if err != nil {
			return
		}
		if k.Alg != webauthn.AlgES256 && k.Alg != webauthn.AlgEdDSA && k.Alg != webauthn.AlgRS256 {
			t.Fatalf("ParseKeyBytes accepted alg %d", k.Alg)
		}
		if k.Verify([]byte("m"), nil) == nil {
			t.Fatal("an empty signature verified")
		}
	})
}

// FuzzParseAttestation checks that no input panics, that the bounds hold,
// and that an accepted object's authenticator data parses alone.
func FuzzParseAttestation(f *testing.F) {
	for _, alg := range algs {
		a := newAuthenticator(f, alg.alg)
		for _, format := range []string{"none", "packed"} {
			a.Format = format
			r, err := webauthn.ParseRegistrationResponse(a.Register(challenge(), []byte("u")))
			if err != nil {
				f.Fatal(err)
			}
			f.Add([]byte(r.Response.AttestationObject))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		att, err := webauthn.ParseAttestation(b)
		if err != nil {
			return
		}
		if len(b) > webauthn.MaxAttestationBytes || len(att.AuthData.CredentialID) > webauthn.MaxCredentialIDBytes {
			t.Fatalf("bounds broken: %d bytes, credential id %d", len(b), len(att.AuthData.CredentialID))
		}
		ad, err := webauthn.ParseAuthData(att.RawAuthData)
		if err != nil || !bytes.Equal(ad.PublicKey, att.AuthData.PublicKey) {
			t.Fatalf("ParseAuthData of the accepted authData: %v", err)
		}
		_ = att.Verify(make([]byte, 32))
	})
}

// FuzzParseClientData checks that no input panics and that accepted
// client data checks only against its own challenge and origin.
func FuzzParseClientData(f *testing.F) {
	f.Add([]byte(`{"type":"webauthn.get","challenge":"AAEC","origin":"http://localhost:8090","crossOrigin":false}`))
	f.Add([]byte(`{"type":"webauthn.create","challenge":"AAEC=","origin":"x","crossOrigin":true,"topOrigin":"y"}`))
	f.Add([]byte(`{"type":1}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		cd, err := webauthn.ParseClientData(b)
		if err != nil {
			return
		}
		if len(b) > webauthn.MaxClientDataBytes {
			t.Fatalf("accepted %d bytes", len(b))
		}
		if cd.Check(cd.Type, []byte{0, 1, 2}, cd.Origin+"x") == nil {
			t.Fatal("Check accepted another origin")
		}
	})
}

// FuzzParseAssertion checks that no authentication response panics the
// parse and the verification against a real key.
func FuzzParseAssertion(f *testing.F) {
	a := newAuthenticator(f, webauthn.AlgES256)
	ch := []byte("0123456789abcdef0123456789abcdef")
	f.Add(a.Assert(ch))
	a.TamperSignature = true
	f.Add(a.Assert(ch))
	key := a.COSEKey()
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := webauthn.ParseAuthenticationResponse(b)
		if err != nil {
			return
		}
		_, _ = testRP.VerifyAssertion(r.Response.ClientDataJSON, r.Response.AuthenticatorData, r.Response.Signature, ch, key, false)
	})
}
