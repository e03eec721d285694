package oauth2

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"syscall"
	"time"
)

// ErrPrivateAddress: a provider request was to connect to a loopback,
// unspecified, link-local, private or shared (CGNAT) address, and the
// Client does not allow it (Options.AllowPrivate). The error names the
// host and the address, never the URL's path, query or any token.
//
// Provider URLs are what a superuser typed: untrusted input. Without this
// check a provider's tokenURL of http://169.254.169.254/… or
// http://127.0.0.1:8500/… would make the server send requests, with a
// client secret, into its own network, and report back whether they
// answered (server-side request forgery). PocketBase v0.31.0 has no such
// check; strongbox refuses by default.
var ErrPrivateAddress = errors.New("oauth2: provider address is loopback, link-local or private")

// The blocks privateClass names beyond those of net/netip.
var (
	sharedBlock  = netip.MustParsePrefix("100.64.0.0/10") // RFC 6598 carrier-grade NAT
	thisNetwork  = netip.MustParsePrefix("0.0.0.0/8")     // RFC 791: "this network"; Linux connects 0.0.0.0 to itself
	siteLocalOld = netip.MustParsePrefix("fec0::/10")     // RFC 3879 deprecated it; some networks still route it
)

// privateClass returns why a provider request may not connect to a, or
// "" for an address on the public internet. IPv4-mapped IPv6 addresses
// (::ffff:127.0.0.1) are classed as the IPv4 address they carry.
func privateClass(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case !a.IsValid():
		return "invalid"
	case a.IsUnspecified(), thisNetwork.Contains(a):
		return "unspecified"
	case a.IsLoopback():
		return "loopback"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast():
		// 169.254.0.0/16 holds the cloud metadata services
		// (169.254.169.254).
		return "link-local"
	case a.IsPrivate(), siteLocalOld.Contains(a):
		return "private"
	case sharedBlock.Contains(a):
		return "shared (CGNAT)"
	}
	return ""
}

// checkAddr refuses a connection to ip (the address host resolved to).
func checkAddr(host string, ip netip.Addr) error {
	if class := privateClass(ip); class != "" {
		return fmt.Errorf("%w: %s is %s, a %s address", ErrPrivateAddress, host, ip.Unmap(), class)
	}
	return nil
}

// guard applies the address check to a transport's connections. The
// check runs on the address the connection is made to, after the host
// name was resolved: a name that resolves to a private address is
// refused, and so is one that changes its answer between requests (DNS
// rebinding), since each connection checks what it connects to. The
// redirects a Client follows are new requests, checked the same way.
//
// A proxy from the environment (HTTPS_PROXY, HTTP_PROXY, as
// http.ProxyFromEnvironment reads them) is kept: the operator set it, so
// the connection to the proxy is not checked, wherever it is. The proxy
// connects to the provider; before handing it a request the guard checks
// the provider's host as far as it can: a literal address, or the
// addresses its name resolves to here (when it resolves here at all).
// That is a weaker promise than for a direct connection, since the proxy
// resolves the name again: an operator who needs it firm applies the same
// rule in the proxy.
type guard struct {
	checked *net.Dialer // checks each address before connecting to it
	plain   *net.Dialer // for the proxies
	proxies sync.Map    // host:port of the proxies seen → true
}

// dialFunc is the type of http.Transport.DialContext.
type dialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// guardTransport returns a clone of t whose connections the guard checks.
// A dial function of t's own (DialContext, DialTLSContext or their
// deprecated forms) still makes the connections: the check then runs on
// the address it connected to, and a refused connection is closed at once,
// before a request is sent on it. A connection without an IP address (a
// pipe or Unix socket such a function made) is that function's choice,
// and passes.
func guardTransport(t *http.Transport) *http.Transport {
	t = t.Clone()
	g := &guard{checked: newDialer(), plain: newDialer()}
	g.checked.ControlContext = control
	dial, dialTLS := t.DialContext, t.DialTLSContext
	if d := t.Dial; dial == nil && d != nil {
		dial = func(_ context.Context, network, addr string) (net.Conn, error) { return d(network, addr) }
	}
	if d := t.DialTLS; dialTLS == nil && d != nil {
		dialTLS = func(_ context.Context, network, addr string) (net.Conn, error) { return d(network, addr) }
	}
	t.Dial, t.DialTLS = nil, nil
	t.DialContext = g.wrap(dial)
	if dialTLS != nil {
		t.DialTLSContext = g.wrap(dialTLS)
	}
	if next := t.Proxy; next != nil {
		t.Proxy = func(req *http.Request) (*url.URL, error) { return g.proxyFor(req, next) }
	}
	return t
}

// newDialer is the dialer of http.DefaultTransport.
func newDialer() *net.Dialer {
	return &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
}

// hostKey is the context key of the host:port a connection is for, which
// control names in its error.
type hostKey struct{}

// wrap returns a dial function that checks the connections of dial, or
// of the guard's own dialer when dial is nil.
func (g *guard) wrap(dial dialFunc) dialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		_, proxy := g.proxies.Load(addr)
		switch {
		case dial == nil && proxy:
			return g.plain.DialContext(ctx, network, addr)
		case dial == nil:
			return g.checked.DialContext(context.WithValue(ctx, hostKey{}, addr), network, addr)
		}
		c, err := dial(ctx, network, addr)
		if err != nil || proxy {
			return c, err
		}
		if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
			if err := checkAddr(addr, ta.AddrPort().Addr()); err != nil {
				c.Close()
				return nil, err
			}
		}
		return c, nil
	}
}

// control checks each address the dialer is about to connect to (one per
// address the name resolved to: the dialer tries the next on a refusal).
func control(ctx context.Context, network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot check %q: %v", ErrPrivateAddress, address, err)
	}
	host, _ := ctx.Value(hostKey{}).(string)
	if host == "" {
		host = address
	}
	return checkAddr(host, ap.Addr())
}

// proxyFor is the transport's Proxy over next: it remembers the proxy's
// address, whose connections are not checked, and checks the provider's
// host.
func (g *guard) proxyFor(req *http.Request, next func(*http.Request) (*url.URL, error)) (*url.URL, error) {
	u, err := next(req)
	if err != nil || u == nil {
		return u, err
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443", "socks5": "1080", "socks5h": "1080"}[u.Scheme]
	}
	g.proxies.Store(net.JoinHostPort(u.Hostname(), port), true)
	host := req.URL.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if err := checkAddr(host, ip); err != nil {
			return nil, err
		}
		return u, nil
	}
	ips, err := net.DefaultResolver.LookupNetIP(req.Context(), "ip", host)
	if err != nil {
		return u, nil // not resolvable here: the proxy resolves it
	}
	for _, ip := range ips {
		if err := checkAddr(host, ip); err != nil {
			return nil, err
		}
	}
	return u, nil
}
