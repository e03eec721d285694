package mail

import (
	"errors"
	"net/smtp"
	"testing"
)

// TestAuthNeedsTLS checks that credentials go out only over TLS or to a
// loopback server, for both mechanisms, and what each one sends.
func TestAuthNeedsTLS(t *testing.T) {
	tests := []struct {
		name    string
		server  smtp.ServerInfo
		wantErr error
	}{
		{"tls", smtp.ServerInfo{Name: "smtp.example.com", TLS: true}, nil},
		{"localhost", smtp.ServerInfo{Name: "localhost"}, nil},
		{"loopback v4", smtp.ServerInfo{Name: "127.0.0.1"}, nil},
		{"loopback v6", smtp.ServerInfo{Name: "::1"}, nil},
		{"remote plain", smtp.ServerInfo{Name: "smtp.example.com"}, ErrUnencryptedAuth},
		{"remote ip plain", smtp.ServerInfo{Name: "192.0.2.1"}, ErrUnencryptedAuth},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, a := range []smtp.Auth{&plainAuth{"u", "p"}, &loginAuth{"u", "p"}} {
				if _, _, err := a.Start(&tt.server); !errors.Is(err, tt.wantErr) {
					t.Errorf("%T.Start(%+v) = %v, want %v", a, tt.server, err, tt.wantErr)
				}
			}
		})
	}
}

func TestAuthExchange(t *testing.T) {
	local := &smtp.ServerInfo{Name: "localhost"}
	mech, resp, _ := (&plainAuth{"user", "pw"}).Start(local)
	if mech != "PLAIN" || string(resp) != "\x00user\x00pw" {
		t.Errorf("PLAIN Start = %q %q", mech, resp)
	}
	l := &loginAuth{"user", "pw"}
	if mech, resp, _ := l.Start(local); mech != "LOGIN" || resp != nil {
		t.Errorf("LOGIN Start = %q %q", mech, resp)
	}
	steps := []struct {
		challenge string
		want      string
		wantErr   bool
	}{
		{"Username:", "user", false},
		{"Password:", "pw", false},
		{"Something else:", "", true},
	}
	for _, s := range steps {
		got, err := l.Next([]byte(s.challenge), true)
		if string(got) != s.want || (err != nil) != s.wantErr {
			t.Errorf("LOGIN Next(%q) = %q, %v; want %q, error %v", s.challenge, got, err, s.want, s.wantErr)
		}
	}
}
