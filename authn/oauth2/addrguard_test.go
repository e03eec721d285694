package oauth2

import (
	"net/netip"
	"testing"
)

func TestPrivateClass(t *testing.T) {
	tests := []struct {
		addr, want string
	}{
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "unspecified"},
		{"::", "unspecified"},
		{"::ffff:0.0.0.0", "unspecified"},
		{"169.254.169.254", "link-local"}, // cloud metadata
		{"169.254.0.1", "link-local"},
		{"fe80::1", "link-local"},
		{"febf:ffff::1", "link-local"},
		{"::ffff:169.254.169.254", "link-local"},
		{"ff02::1", "link-local"}, // link-local multicast
		{"10.0.0.1", "private"},
		{"10.255.255.255", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"fc00::1", "private"},
		{"fd12:3456::1", "private"},
		{"fec0::1", "private"}, // the deprecated site-local block
		{"::ffff:10.1.2.3", "private"},
		{"::ffff:192.168.0.1", "private"},
		{"100.64.0.1", "shared (CGNAT)"},
		{"100.127.255.255", "shared (CGNAT)"},
		{"::ffff:100.64.0.1", "shared (CGNAT)"},
		// Public addresses, also next to the blocks above.
		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{"2001:4860::8888", ""},
		{"2606:4700:4700::1111", ""},
		{"::ffff:8.8.8.8", ""},
		{"172.15.255.255", ""},
		{"172.32.0.0", ""},
		{"100.63.255.255", ""},
		{"100.128.0.0", ""},
		{"169.253.255.255", ""},
		{"11.0.0.0", ""},
		{"1.0.0.0", ""},
		{"fe00::1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			if got := privateClass(netip.MustParseAddr(tt.addr)); got != tt.want {
				t.Errorf("privateClass(%s) = %q, want %q", tt.addr, got, tt.want)
			}
		})
	}
	if got := privateClass(netip.Addr{}); got != "invalid" {
		t.Errorf("privateClass(zero Addr) = %q, want invalid", got)
	}
}
