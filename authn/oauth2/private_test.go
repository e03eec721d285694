package oauth2_test

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"strongbox/authn/oauth2"
	"strongbox/conformance/oauth2provider"
)

// TestExchangePrivateAddress: by default a provider on a private address
// (here the loopback provider on 127.0.0.1) gets no request, whether the
// URL names the address, or a name that resolves to it, or the caller's
// transport dials it; AllowPrivate lets the same exchange through.
func TestExchangePrivateAddress(t *testing.T) {
	p := newProvider(t)
	port := strings.TrimPrefix(p.URL, "http://127.0.0.1:")
	ownDial := func() http.RoundTripper {
		d := &net.Dialer{}
		return &http.Transport{DialContext: d.DialContext}
	}
	tests := []struct {
		name      string
		host      string // the host:port of the provider's URLs
		transport func() http.RoundTripper
		allow     bool
		refused   string // what the error names; "" = the exchange succeeds
	}{
		{"loopback address refused", "127.0.0.1:" + port, nil, false, "127.0.0.1:" + port + " is 127.0.0.1, a loopback address"},
		{"name of a loopback address refused", "localhost:" + port, nil, false, "localhost:" + port + " is 127.0.0.1, a loopback address"},
		{"IPv4-mapped loopback refused", "[::ffff:127.0.0.1]:" + port, nil, false, "is 127.0.0.1, a loopback address"},
		{"own transport's dial refused", "127.0.0.1:" + port, ownDial, false, "is 127.0.0.1, a loopback address"},
		{"loopback address allowed", "127.0.0.1:" + port, nil, true, ""},
		{"name of a loopback address allowed", "localhost:" + port, nil, true, ""},
		{"own transport's dial allowed", "127.0.0.1:" + port, ownDial, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := oauth2.Options{AllowPrivate: tt.allow, Now: clock}
			if tt.transport != nil {
				opts.Transport = tt.transport()
			}
			c := oauth2.NewClient(opts)
			cfg := config(p, "google")
			base := "http://" + tt.host
			cfg.TokenURL, cfg.UserInfoURL = base+oauth2provider.PathToken+"?tenant=q-secret", base+oauth2provider.PathUserInfo
			code := p.Grant(oauth2provider.Grant{User: obj(`{"sub":"1"}`)})
			p.ResetStats()
			u, err := c.Exchange(t.Context(), cfg, code, "", "r")
			if tt.refused == "" {
				if err != nil || u.ID != "1" {
					t.Fatalf("Exchange() = %+v, %v; want the user 1", u, err)
				}
				return
			}
			if !errors.Is(err, oauth2.ErrPrivateAddress) || !errors.Is(err, oauth2.ErrToken) {
				t.Fatalf("Exchange() = %+v, %v; want ErrPrivateAddress and ErrToken", u, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.refused) {
				t.Errorf("error %q does not name %q", msg, tt.refused)
			}
			for _, secret := range []string{"q-secret", oauth2provider.PathToken, p.ClientSecret, code} {
				if strings.Contains(msg, secret) {
					t.Errorf("error %q reveals %q", msg, secret)
				}
			}
			if tt.transport == nil {
				if n, _ := p.Stats(); n != 0 {
					t.Errorf("the provider served %d requests, want none", n)
				}
			}
		})
	}
}

// TestExchangePrivateAddressProxy: a proxy (on loopback here) is the
// operator's, and is used; a provider URL naming a private address is
// refused before the proxy gets it.
func TestExchangePrivateAddressProxy(t *testing.T) {
	p := newProvider(t)
	target, err := url.Parse(p.URL)
	if err != nil {
		t.Fatal(err)
	}
	var proxied atomic.Int64
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		proxied.Add(1)
		r.SetURL(target)
		r.Out.URL.Path = r.In.URL.Path
	}}
	proxy := httptest.NewServer(rp)
	t.Cleanup(proxy.Close)
	proxyURL, _ := url.Parse(proxy.URL)
	tests := []struct {
		name    string
		base    string // of the provider's URLs, as the client sees them
		refused bool
	}{
		// 192.0.2.1 (TEST-NET-1) is not a private block: the proxy
		// answers for it.
		{"public address through the proxy", "http://192.0.2.1", false},
		{"loopback address refused", p.URL, true},
		{"IPv4-mapped private address refused", "http://[::ffff:10.0.0.1]", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proxied.Store(0)
			c := oauth2.NewClient(oauth2.Options{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}, Now: clock})
			cfg := config(p, "google")
			cfg.TokenURL, cfg.UserInfoURL = tt.base+oauth2provider.PathToken, tt.base+oauth2provider.PathUserInfo
			u, err := c.Exchange(t.Context(), cfg, p.Grant(oauth2provider.Grant{User: obj(`{"sub":"1"}`)}), "", "r")
			if !tt.refused {
				if err != nil || u.ID != "1" || proxied.Load() != 2 {
					t.Fatalf("Exchange() = %+v, %v after %d proxied requests; want the user 1 after 2", u, err, proxied.Load())
				}
				return
			}
			if !errors.Is(err, oauth2.ErrPrivateAddress) || !errors.Is(err, oauth2.ErrToken) || proxied.Load() != 0 {
				t.Fatalf("Exchange() = %+v, %v after %d proxied requests; want ErrPrivateAddress and ErrToken, none proxied", u, err, proxied.Load())
			}
		})
	}
}

func clock() time.Time { return now }
