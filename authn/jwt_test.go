package authn

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

var testKey = []byte("token-key" + "collection-secret")

func mustSign(t testing.TB, c Claims) string {
	t.Helper()
	tok, err := Sign(c, testKey)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// forge builds a token from raw header and payload JSON, signed with HMAC h.
func forge(header, payload string, sign func([]byte) []byte) string {
	enc := base64.RawURLEncoding
	in := enc.EncodeToString([]byte(header)) + "." + enc.EncodeToString([]byte(payload))
	return in + "." + enc.EncodeToString(sign([]byte(in)))
}

func hs256(b []byte) []byte {
	m := hmac.New(sha256.New, testKey)
	m.Write(b)
	return m.Sum(nil)
}

func TestSignParse(t *testing.T) {
	exp := int64(1795340628)
	refresh := true
	c := Claims{CollectionID: "pbc_1", ID: "abc", Type: TokenAuth, Exp: &exp, Refreshable: &refresh}
	tok := mustSign(t, c)
	if !strings.HasPrefix(tok, "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.") {
		t.Errorf("header segment of %q is not PocketBase's", tok)
	}
	payload, _ := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[1])
	if got, want := string(payload), `{"collectionId":"pbc_1","exp":1795340628,"id":"abc","refreshable":true,"type":"auth"}`; got != want {
		t.Errorf("payload = %s, want %s", got, want)
	}
	p, err := ParseUnverified(tok)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Verify(testKey); err != nil {
		t.Errorf("Verify: %v", err)
	}
	if err := p.Verify([]byte("another key")); !errors.Is(err, ErrTokenSignature) {
		t.Errorf("Verify(wrong key) = %v, want ErrTokenSignature", err)
	}
}

// TestParseRejects lists tokens that must never be accepted, whatever the key.
func TestParseRejects(t *testing.T) {
	good := mustSign(t, Claims{CollectionID: "c", ID: "r", Type: TokenAuth})
	parts := strings.Split(good, ".")
	payload := `{"collectionId":"c","id":"r","type":"auth"}`
	tests := []struct {
		name  string
		token string
		want  error
	}{
		{"empty", "", ErrTokenMalformed},
		{"two segments", parts[0] + "." + parts[1], ErrTokenMalformed},
		{"four segments", good + ".x", ErrTokenMalformed},
		{"padded base64", parts[0] + "=." + parts[1] + "." + parts[2], ErrTokenMalformed},
		{"standard base64 alphabet", parts[0] + "." + parts[1] + "." + strings.NewReplacer("-", "+", "_", "/").Replace(parts[2]) + "+", ErrTokenMalformed},
		{"truncated signature", good[:len(good)-2], ErrTokenMalformed},
		{"alg none", forge(`{"alg":"none","typ":"JWT"}`, payload, func([]byte) []byte { return nil }), ErrTokenAlgorithm},
		{"alg HS512", forge(`{"alg":"HS512","typ":"JWT"}`, payload, func(b []byte) []byte { m := hmac.New(sha512.New, testKey); m.Write(b); return m.Sum(nil) }), ErrTokenAlgorithm},
		{"alg lowercase", forge(`{"alg":"hs256","typ":"JWT"}`, payload, hs256), ErrTokenAlgorithm},
		{"alg missing", forge(`{"typ":"JWT"}`, payload, hs256), ErrTokenAlgorithm},
		{"crit header", forge(`{"alg":"HS256","crit":["x"],"x":1}`, payload, hs256), ErrTokenAlgorithm},
		{"typ not JWT", forge(`{"alg":"HS256","typ":"JOSE+JSON"}`, payload, hs256), ErrTokenMalformed},
		{"header not an object", forge(`"HS256"`, payload, hs256), ErrTokenMalformed},
		{"payload not an object", forge(`{"alg":"HS256"}`, `[1]`, hs256), ErrTokenMalformed},
		{"payload trailing data", forge(`{"alg":"HS256"}`, payload+`{}`, hs256), ErrTokenMalformed},
		{"exp not a number", forge(`{"alg":"HS256"}`, `{"collectionId":"c","id":"r","type":"auth","exp":"soon"}`, hs256), ErrTokenMalformed},
		{"no id", forge(`{"alg":"HS256"}`, `{"collectionId":"c","type":"auth"}`, hs256), ErrTokenMalformed},
		{"huge", strings.Repeat("a", 9000) + ".b.c", ErrTokenMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParseUnverified(tt.token); !errors.Is(err, tt.want) {
				t.Errorf("ParseUnverified(%.40q…) = %v, want %v", tt.token, err, tt.want)
			}
		})
	}
}

func TestTamperedPayload(t *testing.T) {
	good := mustSign(t, Claims{CollectionID: "c", ID: "r", Type: TokenAuth})
	parts := strings.Split(good, ".")
	other := base64.RawURLEncoding.EncodeToString([]byte(`{"collectionId":"c","id":"someone-else","type":"auth"}`))
	p, err := ParseUnverified(parts[0] + "." + other + "." + parts[2])
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Verify(testKey); !errors.Is(err, ErrTokenSignature) {
		t.Errorf("tampered payload verified: %v", err)
	}
}

// FuzzParseToken checks that no input makes the parser panic or accept a
// token with another algorithm, and that every token it accepts keeps its
// claims through a sign/parse round trip.
func FuzzParseToken(f *testing.F) {
	exp := int64(42)
	f.Add(mustSign(f, Claims{CollectionID: "c", ID: "r", Type: TokenAuth, Exp: &exp}))
	f.Add(mustSign(f, Claims{CollectionID: "c", ID: "r", Type: TokenFile}))
	f.Add(forge(`{"alg":"none"}`, `{}`, func([]byte) []byte { return nil }))
	f.Add("a.b.c")
	f.Add("..")
	f.Fuzz(func(t *testing.T, token string) {
		p, err := ParseUnverified(token)
		if err != nil {
			return
		}
		head, err := base64.RawURLEncoding.DecodeString(token[:strings.IndexByte(token, '.')])
		if err != nil || !strings.Contains(string(head), "HS256") {
			t.Fatalf("accepted header %q", head)
		}
		again, err := ParseUnverified(mustSign(t, p.Claims))
		if err != nil {
			t.Fatalf("re-signed token does not parse: %v", err)
		}
		if again.Claims.ID != p.Claims.ID || again.Claims.Type != p.Claims.Type || again.Claims.CollectionID != p.Claims.CollectionID {
			t.Fatalf("claims changed in round trip: %+v vs %+v", p.Claims, again.Claims)
		}
	})
}
