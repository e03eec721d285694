package validation

import "testing"

func TestHTTPURL(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string // "" = accepted
	}{
		{"https://example.com/x?y=1", ""},
		{"HTTP://example.com", ""},
		{"http://user:pass@example.com", ""}, // credentials: the caller's to refuse
		{"http://localhost:8090", ""},
		{"", `URL scheme "" is not http(s)`},
		{"example.com", `URL scheme "" is not http(s)`},
		{"file:///etc/passwd", `URL scheme "file" is not http(s)`},
		{"ftp://example.com", `URL scheme "ftp" is not http(s)`},
		{"http://", "URL has no host"},
		{"http:///path", "URL has no host"},
		{"http://a b.com/", `bad URL: parse "http://a b.com/": invalid character " " in host name`},
	}
	for _, tt := range tests {
		u, err := HTTPURL(tt.in)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.wantErr || (err == nil) != (u != nil) {
			t.Errorf("HTTPURL(%q) = %v, %q; want error %q", tt.in, u, got, tt.wantErr)
		}
	}
}

func TestEmail(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"user@example.com", true},
		{"a.b+c@sub.example.org", true},
		{"admin@localhost", true},
		{"a@[1.2.3.4]", true},
		{"", false},
		{"user", false},
		{"user@", false},
		{"@example.com", false},
		{"User <user@example.com>", false},
		{"<user@example.com>", false},
		{"user@example.com (comment)", false},
		{`"a b"@example.com`, false},
		{" user@example.com", false},
		{"user@example.com ", false},
		{"a.@example.com", false},
		{"a@exa mple.com", false},
	}
	for _, tt := range tests {
		if got := Email(tt.in); got != tt.want {
			t.Errorf("Email(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
