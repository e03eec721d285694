package webauthn_test

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"strings"
	"sync"
	"testing"

	"strongbox/authn/webauthn"
	"strongbox/authn/webauthntest"
)

var testRP = webauthn.RelyingParty{ID: "localhost", Origin: "http://localhost:8090", Name: "test"}

var algs = []struct {
	name string
	alg  int
}{{"ES256", webauthn.AlgES256}, {"EdDSA", webauthn.AlgEdDSA}, {"RS256", webauthn.AlgRS256}}

// authenticators caches one per algorithm (an RSA key takes a while).
var authenticators sync.Map

func newAuthenticator(t testing.TB, alg int) *webauthntest.Authenticator {
	t.Helper()
	a, ok := authenticators.Load(alg)
	if !ok {
		n, err := webauthntest.New(alg, testRP)
		if err != nil {
			t.Fatal(err)
		}
		a, _ = authenticators.LoadOrStore(alg, n)
	}
	c := *a.(*webauthntest.Authenticator)
	return &c
}

func challenge() []byte {
	b := make([]byte, 32)
	rand.Read(b)
	return b
}

func register(t testing.TB, a *webauthntest.Authenticator, ch []byte) (*webauthn.RegistrationResponse, error) {
	t.Helper()
	r, err := webauthn.ParseRegistrationResponse(a.Register(ch, []byte("user1")))
	if err != nil {
		t.Fatalf("ParseRegistrationResponse: %v", err)
	}
	return r, nil
}

func TestRegistration(t *testing.T) {
	tests := []struct {
		name    string
		spoil   func(a *webauthntest.Authenticator, ch []byte) []byte
		rp      webauthn.RelyingParty
		uv      bool
		wantErr error
	}{
		{name: "ok", rp: testRP},
		{name: "packed self attestation", rp: testRP, spoil: func(a *webauthntest.Authenticator, ch []byte) []byte { a.Format = "packed"; return ch }},
		{name: "packed with a bad signature", rp: testRP, wantErr: webauthn.ErrAttestation,
			spoil: func(a *webauthntest.Authenticator, ch []byte) []byte {
				a.Format, a.TamperSignature = "packed", true
				return ch
			}},
		{name: "other challenge", rp: testRP, wantErr: webauthn.ErrChallenge, spoil: func(a *webauthntest.Authenticator, ch []byte) []byte { return challenge() }},
		{name: "wrong origin", rp: testRP, wantErr: webauthn.ErrClientData,
			spoil: func(a *webauthntest.Authenticator, ch []byte) []byte { a.Origin = "http://evil.example"; return ch }},
		{name: "wrong type", rp: testRP, wantErr: webauthn.ErrClientData,
			spoil: func(a *webauthntest.Authenticator, ch []byte) []byte { a.Type = webauthn.TypeGet; return ch }},
		{name: "cross origin", rp: testRP, wantErr: webauthn.ErrClientData,
			spoil: func(a *webauthntest.Authenticator, ch []byte) []byte { a.CrossOrigin = true; return ch }},
		{name: "wrong RP ID hash", rp: testRP, wantErr: webauthn.ErrRPIDHash,
			spoil: func(a *webauthntest.Authenticator, ch []byte) []byte { a.RPID = "example.com"; return ch }},
		{name: "no user presence", rp: testRP, wantErr: webauthn.ErrUserPresence,
			spoil: func(a *webauthntest.Authenticator, ch []byte) []byte { a.Flags = webauthn.FlagUV; return ch }},
		{name: "UV required, not verified", rp: testRP, uv: true, wantErr: webauthn.ErrUserVerification,
			spoil: func(a *webauthntest.Authenticator, ch []byte) []byte { a.Flags = webauthn.FlagUP; return ch }},
		{name: "UV not required", rp: testRP, spoil: func(a *webauthntest.Authenticator, ch []byte) []byte { a.Flags = webauthn.FlagUP; return ch }},
	}
	for _, alg := range algs {
		for _, tt := range tests {
			t.Run(alg.name+" "+tt.name, func(t *testing.T) {
				a := newAuthenticator(t, alg.alg)
				ch := challenge()
				signed := ch
				if tt.spoil != nil {
					signed = tt.spoil(a, ch)
				}
				r, _ := register(t, a, signed)
				cred, err := tt.rp.VerifyRegistration(r.Response.ClientDataJSON, r.Response.AttestationObject, ch, tt.uv)
				if tt.wantErr != nil {
					if !errors.Is(err, tt.wantErr) {
						t.Fatalf("VerifyRegistration = %v, want %v", err, tt.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatalf("VerifyRegistration: %v", err)
				}
				if cred.Alg != alg.alg || !bytes.Equal(cred.ID, a.CredentialID) || !bytes.Equal(cred.PublicKey, a.COSEKey()) {
					t.Fatalf("VerifyRegistration = alg %d id %x, want alg %d id %x and the authenticator's key", cred.Alg, cred.ID, alg.alg, a.CredentialID)
				}
			})
		}
	}
}

func TestAssertion(t *testing.T) {
	tests := []struct {
		name    string
		spoil   func(a *webauthntest.Authenticator, ch []byte) []byte
		uv      bool
		wantErr error
	}{
		{name: "ok"},
		{name: "tampered signature", wantErr: webauthn.ErrSignature,
			spoil: func(a *webauthntest.Authenticator, ch []byte) []byte { a.TamperSignature = true; return ch }},
		{name: "other challenge", wantErr: webauthn.ErrChallenge, spoil: func(a *webauthntest.Authenticator, ch []byte) []byte { return challenge() }},
		{name: "wrong origin", wantErr: webauthn.ErrClientData,
			spoil: func(a *webauthntest.Authenticator, ch []byte) []byte { a.Origin = "http://localhost:9999"; return ch }},
		{name: "create type", wantErr: webauthn.ErrClientData,
			spoil: func(a *webauthntest.Authenticator, ch []byte) []byte { a.Type = webauthn.TypeCreate; return ch }},
		{name: "wrong RP ID hash", wantErr: webauthn.ErrRPIDHash,
			spoil: func(a *webauthntest.Authenticator, ch []byte) []byte { a.RPID = "localhost.evil"; return ch }},
		{name: "UV required", uv: true, wantErr: webauthn.ErrUserVerification,
			spoil: func(a *webauthntest.Authenticator, ch []byte) []byte { a.Flags = webauthn.FlagUP; return ch }},
		{name: "BS without BE", wantErr: webauthn.ErrAuthData,
			spoil: func(a *webauthntest.Authenticator, ch []byte) []byte { a.Flags |= webauthn.FlagBS; return ch }},
	}
	for _, alg := range algs {
		for _, tt := range tests {
			t.Run(alg.name+" "+tt.name, func(t *testing.T) {
				a := newAuthenticator(t, alg.alg)
				ch := challenge()
				signed := ch
				if tt.spoil != nil {
					signed = tt.spoil(a, ch)
				}
				r, err := webauthn.ParseAuthenticationResponse(a.Assert(signed))
				if err != nil {
					t.Fatalf("ParseAuthenticationResponse: %v", err)
				}
				got, err := testRP.VerifyAssertion(r.Response.ClientDataJSON, r.Response.AuthenticatorData, r.Response.Signature, ch, a.COSEKey(), tt.uv)
				if tt.wantErr != nil {
					if !errors.Is(err, tt.wantErr) {
						t.Fatalf("VerifyAssertion = %v, want %v", err, tt.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatalf("VerifyAssertion: %v", err)
				}
				if got.SignCount != a.Counter || !got.Flags.Has(webauthn.FlagUP|webauthn.FlagUV) {
					t.Fatalf("VerifyAssertion = %+v, want counter %d and UP|UV", got, a.Counter)
				}
			})
		}
	}
}

func TestCounterOK(t *testing.T) {
	tests := []struct {
		stored, got uint32
		want        bool
	}{{0, 0, true}, {0, 1, true}, {5, 6, true}, {5, 5, false}, {5, 4, false}, {5, 0, false}}
	for _, tt := range tests {
		if got := webauthn.CounterOK(tt.stored, tt.got); got != tt.want {
			t.Errorf("CounterOK(%d, %d) = %v, want %v", tt.stored, tt.got, got, tt.want)
		}
	}
}

func TestNewRelyingParty(t *testing.T) {
	tests := []struct {
		url, id, origin, err string
	}{
		{"http://localhost:8090", "localhost", "http://localhost:8090", ""},
		{"https://Example.COM/app/", "example.com", "https://example.com", ""},
		{"https://example.com:443", "example.com", "https://example.com", ""},
		{"https://a.example.com:8443/x", "a.example.com", "https://a.example.com:8443", ""},
		{"http://127.0.0.1:8090", "", "", "IP address"},
		{"http://[::1]:8090", "", "", "IP address"},
		{"", "", "", "absolute http"},
		{"ftp://example.com", "", "", "absolute http"},
		{"example.com", "", "", "absolute http"},
		{"https://user@example.com", "", "", "absolute http"},
	}
	for _, tt := range tests {
		rp, err := webauthn.NewRelyingParty(tt.url, "")
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("NewRelyingParty(%q) = %+v, %v, want an error with %q", tt.url, rp, err, tt.err)
			}
			continue
		}
		if err != nil || rp.ID != tt.id || rp.Origin != tt.origin {
			t.Errorf("NewRelyingParty(%q) = %+v, %v, want id %q origin %q", tt.url, rp, err, tt.id, tt.origin)
		}
	}
}

func TestParseKey(t *testing.T) {
	es := newAuthenticator(t, webauthn.AlgES256).COSEKey()
	v, _ := webauthn.Decode(es)
	x, _ := v.Get(-2)
	y, _ := v.Get(-3)
	badY := append([]byte{}, y.Bytes...)
	badY[31] ^= 1
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	tests := []struct {
		name string
		key  []byte
		err  string
	}{
		{"ES256", es, ""},
		{"EdDSA", newAuthenticator(t, webauthn.AlgEdDSA).COSEKey(), ""},
		{"RS256", newAuthenticator(t, webauthn.AlgRS256).COSEKey(), ""},
		{"point off the curve", webauthntest.Map(1, 2, 3, -7, -1, 1, -2, x.Bytes, -3, badY), "invalid"},
		{"P-384", webauthntest.Map(1, 2, 3, -7, -1, 2, -2, x.Bytes, -3, y.Bytes), "crv P-256"},
		{"short x", webauthntest.Map(1, 2, 3, -7, -1, 1, -2, x.Bytes[1:], -3, y.Bytes), "32-byte"},
		{"no alg", webauthntest.Map(1, 2, -1, 1, -2, x.Bytes, -3, y.Bytes), "kty and alg"},
		{"ES384", webauthntest.Map(1, 2, 3, -35, -1, 1, -2, x.Bytes, -3, y.Bytes), "unsupported"},
		{"Ed448", webauthntest.Map(1, 1, 3, -8, -1, 7, -2, x.Bytes), "Ed25519"},
		{"RSA 1024", webauthntest.Map(1, 3, 3, -257, -1, small.N.Bytes(), -2, []byte{1, 0, 1}), "1024 bits"},
		{"RSA even e", webauthntest.Map(1, 3, 3, -257, -1, bytes.Repeat([]byte{0xff}, 256), -2, []byte{2}), "exponent"},
		{"RSA 8192", webauthntest.Map(1, 3, 3, -257, -1, bytes.Repeat([]byte{0xff}, 1024), -2, []byte{3}), "8192 bits"},
		{"not a map", []byte(webauthntest.Encode(1)), "not a map"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := webauthn.ParseKeyBytes(tt.key)
			if tt.err == "" {
				if err != nil {
					t.Fatalf("ParseKeyBytes: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("ParseKeyBytes = %v, %v, want an error with %q", k, err, tt.err)
			}
		})
	}
}

func TestParseAuthData(t *testing.T) {
	a := newAuthenticator(t, webauthn.AlgES256)
	r, _ := register(t, a, challenge())
	att, err := webauthn.ParseAttestation(r.Response.AttestationObject)
	if err != nil {
		t.Fatal(err)
	}
	good := att.RawAuthData
	long := append(append([]byte{}, good[:53]...), 0x04, 0x00)
	tests := []struct {
		name string
		in   []byte
		err  string
	}{
		{"ok", good, ""},
		{"short", good[:36], "at least 37"},
		{"truncated credential", good[:60], "credential id"},
		{"credential id 1024 bytes", append(long, make([]byte, 1024)...), "credential id of 1024"},
		{"trailing byte", append(append([]byte{}, good...), 0), "left over"},
		{"ED without extensions", append(append([]byte{}, good[:32]...), append([]byte{good[32] | byte(webauthn.FlagED)}, good[33:]...)...), "extensions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ad, err := webauthn.ParseAuthData(tt.in)
			if tt.err == "" {
				if err != nil || !bytes.Equal(ad.CredentialID, a.CredentialID) {
					t.Fatalf("ParseAuthData = %v, %v", ad, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("ParseAuthData = %v, want an error with %q", err, tt.err)
			}
		})
	}
}

func TestParseResponses(t *testing.T) {
	tests := []struct {
		name, in, err string
	}{
		{"not JSON", "{", "invalid credential response"},
		{"type", `{"id":"AQ","rawId":"AQ","type":"x","response":{}}`, "public-key"},
		{"id mismatch", `{"id":"Ag","rawId":"AQ","type":"public-key","response":{}}`, "id is not rawId"},
		{"no rawId", `{"id":"","rawId":"","type":"public-key","response":{}}`, "rawId of 0"},
		{"bad base64", `{"id":"A!","rawId":"A!","type":"public-key","response":{}}`, "base64url"},
		{"no parts", `{"id":"AQ","rawId":"AQ","type":"public-key","response":{}}`, "required"},
		{"too long", `{"id":"` + strings.Repeat("A", 40000) + `"}`, "at most"},
	}
	for _, tt := range tests {
		_, err1 := webauthn.ParseRegistrationResponse([]byte(tt.in))
		_, err2 := webauthn.ParseAuthenticationResponse([]byte(tt.in))
		for _, err := range []error{err1, err2} {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: parse = %v, want an error with %q", tt.name, err, tt.err)
			}
		}
	}
}

// BenchmarkVerifyAssertion is the cost of one sign-in's verification:
// client data, authenticator data, the COSE key and the signature.
func BenchmarkVerifyAssertion(b *testing.B) {
	for _, alg := range algs {
		b.Run(alg.name, func(b *testing.B) {
			a := newAuthenticator(b, alg.alg)
			ch := challenge()
			r, err := webauthn.ParseAuthenticationResponse(a.Assert(ch))
			if err != nil {
				b.Fatal(err)
			}
			key := a.COSEKey()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := testRP.VerifyAssertion(r.Response.ClientDataJSON, r.Response.AuthenticatorData, r.Response.Signature, ch, key, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
