package oauth2

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"maps"
	"mime"
	"strings"
	"sync"
	"testing"
	"time"

	"strongbox/conformance/oauth2provider"
)

var (
	testKeyOnce sync.Once
	testKey     *rsa.PrivateKey
)

func key(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	testKeyOnce.Do(func() {
		var err error
		if testKey, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
	})
	return testKey
}

func TestCheckClaims(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	base := idTokenCheck{clientID: "cid", issuers: []string{"https://iss"}, now: now, leeway: 5 * time.Minute}
	exp := now.Add(time.Hour).Unix()
	tests := []struct {
		name   string
		claims string
		check  func(c idTokenCheck) idTokenCheck
		want   string // "" = accepted, else a part of the error
	}{
		{"ok", `{"iss":"https://iss","aud":"cid","exp":%d}`, nil, ""},
		{"aud list", `{"iss":"https://iss","aud":["other","cid"],"azp":"cid","exp":%d}`, nil, ""},
		{"aud list, azp another client", `{"iss":"https://iss","aud":["other","cid"],"azp":"other","exp":%d}`, nil, "azp is another client"},
		{"aud missing", `{"iss":"https://iss","exp":%d}`, nil, "aud does not name the client"},
		{"aud of number", `{"iss":"https://iss","aud":1,"exp":%d}`, nil, "aud does not name the client"},
		{"iss missing", `{"aud":"cid","exp":%d}`, nil, "no iss"},
		{"any iss when none configured", `{"iss":"https://else","aud":"cid","exp":%d}`, func(c idTokenCheck) idTokenCheck { c.issuers = nil; return c }, ""},
		{"exp as string", `{"iss":"https://iss","aud":"cid","exp":"%d"}`, nil, "no exp"},
		{"fractional exp", `{"iss":"https://iss","aud":"cid","exp":%d.5}`, nil, ""},
		{"nonce ok", `{"iss":"https://iss","aud":"cid","exp":%d,"nonce":"n1"}`, func(c idTokenCheck) idTokenCheck { c.nonce = "n1"; return c }, ""},
		{"nonce mismatch", `{"iss":"https://iss","aud":"cid","exp":%d,"nonce":"n2"}`, func(c idTokenCheck) idTokenCheck { c.nonce = "n1"; return c }, "nonce mismatch"},
		{"nonce missing", `{"iss":"https://iss","aud":"cid","exp":%d}`, func(c idTokenCheck) idTokenCheck { c.nonce = "n1"; return c }, "nonce mismatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base
			if tt.check != nil {
				c = tt.check(c)
			}
			var claims map[string]any
			d := json.NewDecoder(strings.NewReader(strings.Replace(tt.claims, "%d", itoa(exp), 1)))
			d.UseNumber()
			if err := d.Decode(&claims); err != nil {
				t.Fatal(err)
			}
			err := checkClaims(claims, c)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("checkClaims(%s) = %v, want nil", tt.claims, err)
			case tt.want != "" && (!errors.Is(err, ErrClaims) || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("checkClaims(%s) = %v, want ErrClaims with %q", tt.claims, err, tt.want)
			}
		})
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestParseJWS(t *testing.T) {
	good := oauth2provider.Sign(key(t), "k", map[string]any{"sub": "1"})
	enc := base64.RawURLEncoding.EncodeToString
	tests := []struct {
		name, token, want string // want: "" = parsed, else a part of the error
	}{
		{"good", good, ""},
		{"two segments", "a.b", "2 segments"},
		{"four segments", good + ".x", "4 segments"},
		{"padded base64", enc([]byte(`{"alg":"RS256"}`)) + "=." + enc([]byte(`{}`)) + ".", "segment 0"},
		{"header not JSON", enc([]byte(`nope`)) + "." + enc([]byte(`{}`)) + ".", "header"},
		{"payload array", enc([]byte(`{"alg":"RS256"}`)) + "." + enc([]byte(`[1]`)) + ".", "not a JSON object"},
		{"payload null", enc([]byte(`{"alg":"RS256"}`)) + "." + enc([]byte(`null`)) + ".", "not a JSON object"},
		{"trailing data", enc([]byte(`{"alg":"RS256"}`)) + "." + enc([]byte(`{}{}`)) + ".", "trailing data"},
		{"too long", strings.Repeat("a", maxJWS+1), "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseJWS(tt.token)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("parseJWS() = %v, want nil", err)
			case tt.want != "" && (!errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("parseJWS() = %v, want ErrMalformed with %q", err, tt.want)
			}
		})
	}
}

func TestRSAKeys(t *testing.T) {
	pub := &key(t).PublicKey
	good := oauth2provider.JWK(pub, "a")
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for kk, vv := range good {
			m[kk] = vv
		}
		m[k] = v
		return m
	}
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		keys []map[string]string
		want int // keys kept; 0 = error
	}{
		{"one", []map[string]string{good}, 1},
		{"enc key skipped", []map[string]string{good, with("use", "enc")}, 1},
		{"EC skipped", []map[string]string{with("kty", "EC")}, 0},
		{"HS256 skipped", []map[string]string{with("alg", "HS256")}, 0},
		{"1024-bit skipped", []map[string]string{oauth2provider.JWK(&small.PublicKey, "s")}, 0},
		{"even exponent skipped", []map[string]string{with("e", "Ag")}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := json.Marshal(map[string]any{"keys": tt.keys})
			keys, err := rsaKeys(b)
			if got := len(keys); got != tt.want || (tt.want == 0) != (err != nil) {
				t.Errorf("rsaKeys() = %d keys, %v; want %d", got, err, tt.want)
			}
		})
	}
}

// FuzzParseJWS: no input panics; whatever parses has three segments,
// a JSON object payload, and verifies only with the key that signed it
// (never with alg other than RS256).
func FuzzParseJWS(f *testing.F) {
	k := key(f)
	good := oauth2provider.Sign(k, "k", map[string]any{"sub": "1", "iss": "i", "aud": "c", "exp": 4102444800})
	for _, seed := range []string{
		good,                                   // a valid token
		good[:len(good)/2],                     // truncated
		"eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.", // alg none
		"..",                                   // empty segments
		"a.b.c.d",                              // four segments
		"eyJhbGciOiJSUzI1NiJ9.bnVsbA.",         // payload null
		"eyJhbGciOiJSUzI1NiJ9.eyJleHAiOjFlMzA5fQ.", // exp out of range
	} {
		f.Add(seed)
	}
	keys := map[string]*rsa.PublicKey{"k": &k.PublicKey}
	check := idTokenCheck{clientID: "c", now: time.Unix(1700000000, 0), leeway: time.Minute}
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := parseJWS(s)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("parseJWS(%q) = %v, not ErrMalformed", s, err)
			}
			return
		}
		if tok.claims == nil || strings.Count(s, ".") != 2 {
			t.Fatalf("parseJWS(%q) accepted a token without claims or three segments", s)
		}
		if err := verifyIDToken(tok, keys, check); err == nil && (s != good || tok.header.Alg != "RS256") {
			t.Fatalf("verifyIDToken(%q) accepted a token it did not sign", s)
		}
		_, _ = numericDate(tok.claims["exp"])
		_ = oidcUser(tok.claims)
	})
}

func TestDecodeTokenBody(t *testing.T) {
	tests := []struct {
		name, ct, body string
		want           map[string]string // nil = error
	}{
		{"json", "application/json; charset=utf-8", `{"access_token":"a","expires_in":3600,"scope":["x"]}`, map[string]string{"access_token": "a", "expires_in": "3600"}},
		{"form (GitHub without Accept)", "application/x-www-form-urlencoded; charset=utf-8", "access_token=a&scope=read%3Auser&token_type=bearer", map[string]string{"access_token": "a", "scope": "read:user", "token_type": "bearer"}},
		{"text/plain form", "text/plain", "access_token=b", map[string]string{"access_token": "b"}},
		{"no content type = json", "", `{"access_token":"c"}`, map[string]string{"access_token": "c"}},
		{"json array", "application/json", `[]`, nil},
		{"json trailing", "application/json", `{"a":"b"} {}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vals, err := decodeTokenBody(tt.ct, []byte(tt.body))
			got := map[string]string{} // the string and number fields
			for k := range vals {
				if v := str(vals, k); v != "" {
					got[k] = v
				}
			}
			if (err != nil) != (tt.want == nil) || (tt.want != nil && !maps.Equal(got, tt.want)) {
				t.Errorf("decodeTokenBody(%q, %q) = %v, %v; want %v", tt.ct, tt.body, got, err, tt.want)
			}
		})
	}
}

// FuzzDecodeTokenBody: no token-endpoint body panics the decoder, in
// either encoding, and a JSON answer's strings come back as they were.
func FuzzDecodeTokenBody(f *testing.F) {
	for _, seed := range []string{
		`{"access_token":"a","expires_in":3600,"token_type":"Bearer"}`,
		`{"access_token":"a","expires_in":"3600"}`,
		`{"error":"invalid_grant","error_description":"bad"}`,
		`access_token=a&scope=x&token_type=bearer`,
		`{"access_token": "x", "sub": `,
		`[]`,
		`null`,
	} {
		f.Add(seed, "application/json")
		f.Add(seed, "application/x-www-form-urlencoded")
	}
	f.Fuzz(func(t *testing.T, body, ct string) {
		vals, err := decodeTokenBody(ct, []byte(body))
		if err != nil {
			return
		}
		if mt, _, _ := mime.ParseMediaType(ct); mt == "application/x-www-form-urlencoded" || mt == "text/plain" {
			return
		}
		var m map[string]any
		if json.Unmarshal([]byte(body), &m) == nil {
			if s, ok := m["access_token"].(string); ok && str(vals, "access_token") != s {
				t.Fatalf("access_token = %q, want %q", str(vals, "access_token"), s)
			}
		}
	})
}
