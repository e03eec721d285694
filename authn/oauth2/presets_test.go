package oauth2

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestKnown(t *testing.T) {
	for _, name := range []string{"google", "github", "gitlab", "microsoft", "discord", "apple", "oidc", "oidc2", "oidc3", "facebook", "instagram2", "mailcow", "yandex"} {
		if !Known(name) {
			t.Errorf("Known(%q) = false, want true", name)
		}
	}
	// instagram is the name of PocketBase's old provider, no longer
	// registered (instagram2 is).
	for _, name := range []string{"", "Google", "oidc4", "instagram"} {
		if Known(name) {
			t.Errorf("Known(%q) = true, want false", name)
		}
	}
}

func TestResolve(t *testing.T) {
	off, on := false, true
	tests := []struct {
		name string
		in   Config
		want Config
	}{
		{"google defaults", Config{Name: "google", ClientID: "id"}, Config{
			Name: "google", ClientID: "id", DisplayName: "Google", PKCE: true,
			AuthURL: "https://accounts.google.com/o/oauth2/v2/auth", TokenURL: "https://oauth2.googleapis.com/token",
			UserInfoURL: "https://www.googleapis.com/oauth2/v3/userinfo",
			Scopes:      []string{"https://www.googleapis.com/auth/userinfo.profile", "https://www.googleapis.com/auth/userinfo.email"},
		}},
		{"overrides win", Config{Name: "github", TokenURL: "http://127.0.0.1/t", DisplayName: "GH", PKCEOverride: &off}, Config{
			Name: "github", DisplayName: "GH", PKCE: false, PKCEOverride: &off,
			AuthURL: "https://github.com/login/oauth/authorize", TokenURL: "http://127.0.0.1/t", UserInfoURL: "https://api.github.com/user",
			Scopes: []string{"read:user", "user:email"},
		}},
		{"oidc has no endpoints", Config{Name: "oidc2", PKCEOverride: &on}, Config{
			Name: "oidc2", DisplayName: "OIDC", PKCE: true, PKCEOverride: &on, Scopes: []string{"openid", "email", "profile"},
		}},
		{"unknown keeps its own", Config{Name: "acme", PKCE: true}, Config{Name: "acme", DisplayName: "acme", PKCE: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := json.Marshal(Resolve(tt.in))
			want, _ := json.Marshal(tt.want)
			if !bytes.Equal(got, want) {
				t.Errorf("Resolve(%+v) =\n %s\nwant\n %s", tt.in, got, want)
			}
		})
	}
}

func TestAuthURL(t *testing.T) {
	google := Resolve(Config{Name: "google", ClientID: "cid"})
	apple := Resolve(Config{Name: "apple", ClientID: "com.example"})
	noPKCE := false
	tests := []struct {
		name           string
		c              Config
		challenge, rdr string
		want           string
	}{
		{"google pkce, suffix for the client", google, "CH", "",
			"https://accounts.google.com/o/oauth2/v2/auth?client_id=cid&code_challenge=CH&code_challenge_method=S256&response_type=code&scope=https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fuserinfo.profile+https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fuserinfo.email&state=ST&redirect_uri="},
		{"apple form_post, redirect last", apple, "CH", "https://x.test/api/oauth2-redirect",
			"https://appleid.apple.com/auth/authorize?client_id=com.example&code_challenge=CH&code_challenge_method=S256&response_mode=form_post&response_type=code&scope=name+email&state=ST&redirect_uri=https%3A%2F%2Fx.test%2Fapi%2Foauth2-redirect"},
		{"no pkce, query already", Resolve(Config{Name: "oidc", ClientID: "c", AuthURL: "https://i/a?tenant=1", PKCEOverride: &noPKCE}), "CH", "",
			"https://i/a?tenant=1&client_id=c&response_type=code&scope=openid+email+profile&state=ST&redirect_uri="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := AuthURL(tt.c, "ST", tt.challenge, tt.rdr); got != tt.want {
				t.Errorf("AuthURL() =\n %s\nwant\n %s", got, tt.want)
			}
		})
	}
}

func TestPKCE(t *testing.T) {
	// RFC 7636 Appendix B: the verifier and challenge of the example.
	if got, want := Challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"; got != want {
		t.Errorf("Challenge() = %q, want %q", got, want)
	}
	// A reader of bytes 0..255 repeated: 248..255 are skipped (no bias).
	seq := make([]byte, 1024)
	for i := range seq {
		seq[i] = byte(i)
	}
	v, c, err := NewPKCE(bytes.NewReader(seq))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v, alphanumeric[:43]; got != want {
		t.Errorf("verifier = %q, want %q", got, want)
	}
	if c != Challenge(v) {
		t.Errorf("challenge = %q, want Challenge(verifier) %q", c, Challenge(v))
	}
	st, err := NewState(nil)
	if err != nil || len(st) != 30 || strings.Trim(st, alphanumeric) != "" {
		t.Errorf("NewState(nil) = %q, %v; want 30 alphanumerics", st, err)
	}
	if _, err := NewState(bytes.NewReader(nil)); err == nil {
		t.Error("NewState(empty reader): no error")
	}
}
