package conformance

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Hostile clients (issue 8, section 2): the answers a server gives to
// requests net/http would answer by itself in plain text or HTML (a path
// that is not canonical, oversized headers, a malformed request line), and
// the small body limit of the auth actions. The interface document says
// nothing of them and PocketBase answers net/http's there (or accepts the
// request), so these are strongbox promises: PocketBase fails them.
//
// The malformed requests cannot be sent through net/http's client, so
// rawExchange writes them on a TCP connection of its own and reads the
// answer with http.ReadResponse.

const (
	sectionRawEnvelope = "issue 8 (strongbox promise: every response is the JSON envelope, including the ones net/http would write by itself); §2.5"
	sectionAuthBody    = "issue 8 (strongbox promise: small body limits for auth routes); §2.5"

	// rawTimeout bounds one raw exchange: connecting, writing the request
	// and reading the whole answer.
	rawTimeout = 10 * time.Second

	// hugeHeaderLine is the length of the one header line HTTP-RAW-001
	// sends: above strongbox's 32 KiB header limit, far below a megabyte.
	hugeHeaderLine = 40000

	// authBodyProbe is the size of the body HTTP-LIMIT-002 sends to an auth
	// action: more than a login could need, twice strongbox's limit for the
	// other JSON routes, far below PocketBase's 32 MiB.
	authBodyProbe = 2 << 20
)

var hostileRequirements = []*Requirement{
	{
		ID:      "HTTP-PATH-001",
		Source:  SourceStrongbox,
		Section: sectionRawEnvelope,
		Name:    "a path that is not canonical is redirected with the envelope",
		Text: "A GET of a path with an empty segment, \".\" or \"..\" (//api/health?cf=…, /./api/health, " +
			"/api/cf/../health) answers 301, 307 or 308 in the error envelope (its status field the " +
			"HTTP status, Content-Type application/json) with a Location that leads to the cleaned path " +
			"on the same server, query kept (/api/health?cf=…). PocketBase's router (net/http's ServeMux) " +
			"answers 301 with an HTML body and fails this; the issue decides.",
		Run: checkPathRedirect,
	},
	{
		ID:      "HTTP-RAW-001",
		Source:  SourceStrongbox,
		Section: sectionRawEnvelope,
		Name:    "oversized request headers are refused with the envelope",
		Text: "A GET /api/health whose one header line is 40,000 bytes long, sent on a raw connection, " +
			"answers 431 (or 400) in the error envelope, served as application/json. PocketBase keeps " +
			"net/http's 1 MiB header limit, so it serves the request (and answers plain text beyond that " +
			"limit) and fails this; the issue decides.",
		Run: checkHugeHeader,
	},
	{
		ID:      "HTTP-RAW-002",
		Source:  SourceStrongbox,
		Section: sectionRawEnvelope,
		Name:    "a malformed request line is refused with the envelope",
		Text: "The bytes \"GARBAGE\\r\\n\\r\\n\" sent on a raw connection are answered 400 \"" + msgGenericBad +
			"\" (a message that begins so) in the error envelope, served as application/json. " +
			"PocketBase answers net/http's plain-text \"400 Bad Request\" and fails this; the issue decides.",
		Run: checkMalformedRequestLine,
	},
	{
		ID:      "HTTP-LIMIT-002",
		Source:  SourceStrongbox,
		Section: sectionAuthBody,
		Name:    "a 2 MiB body to an auth action is refused",
		Text: "A POST to /api/collections/users/auth-with-password whose JSON body (sent with its " +
			"Content-Length) is 2 MiB answers 413 \"" + msgTooLarge + "\" in the error envelope: a login " +
			"needs a few short strings, and the issue asks for small limits on auth routes. PocketBase " +
			"accepts bodies up to 32 MiB there, answers 400 and fails this; the issue decides.",
		Run: checkAuthBodyLimit,
	},
}

// checkPathRedirect sends three paths that are not canonical through a
// client that does not follow redirects.
func checkPathRedirect(ctx context.Context, c *Client) error {
	base, err := url.Parse(c.base)
	if err != nil {
		return err
	}
	nc := c.forCheck()
	hc := *c.hc
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	nc.hc = &hc

	nonce := newNonce(10)
	want := base.Path + "/api/health"
	probes := []struct{ path, location string }{
		{"//api/health?cf=" + nonce, want + "?cf=" + nonce},
		{"/./api/health", want},
		{"/api/cf/../health", want},
	}
	for _, p := range probes {
		r, err := nc.get(ctx, p.path, "")
		if err != nil {
			return err
		}
		if !slices.Contains([]int{301, 307, 308}, r.status) {
			return Mismatch(fmt.Sprintf("301, 307 or 308 with the error envelope and Location %s", p.location), r.String())
		}
		if err := expectJSONEnvelope(r, r.status, ""); err != nil {
			return err
		}
		loc := r.header.Get("Location")
		u, err := url.Parse(loc)
		if err != nil {
			return Mismatch(fmt.Sprintf("a Location leading to %s", p.location), fmt.Sprintf("Location %q in %s", loc, r))
		}
		reqURL, _ := url.Parse(c.base + p.path)
		got := reqURL.ResolveReference(u)
		if got.Host != base.Host || got.RequestURI() != p.location {
			return Mismatch(fmt.Sprintf("a Location leading to %s", p.location), fmt.Sprintf("Location %q in %s", loc, r))
		}
	}
	return nil
}

// checkHugeHeader sends one header line of hugeHeaderLine bytes.
func checkHugeHeader(ctx context.Context, c *Client) error {
	const name = "X-Cf-Padding: "
	req := "GET /api/health HTTP/1.1\r\nHost: %s\r\nUser-Agent: " + userAgent + "\r\n" +
		name + strings.Repeat("a", hugeHeaderLine-len(name)) + "\r\nConnection: close\r\n\r\n"
	r, err := rawExchange(ctx, c, "GET /api/health with one header line of 40000 bytes", req)
	if err != nil {
		return err
	}
	if r.status != http.StatusRequestHeaderFieldsTooLarge && r.status != http.StatusBadRequest {
		return Mismatch("431 (or 400) with the error envelope", r.String())
	}
	return expectJSONEnvelope(r, r.status, "")
}

// checkMalformedRequestLine sends a request line that is not HTTP.
func checkMalformedRequestLine(ctx context.Context, c *Client) error {
	r, err := rawExchange(ctx, c, "GARBAGE", "GARBAGE\r\n\r\n")
	if err != nil {
		return err
	}
	if r.status != http.StatusBadRequest {
		return Mismatch(fmt.Sprintf("400 %q with the error envelope", msgGenericBad), r.String())
	}
	return expectJSONEnvelope(r, http.StatusBadRequest, msgGenericBad)
}

// checkAuthBodyLimit sends a login whose identity fills a 2 MiB body.
func checkAuthBodyLimit(ctx context.Context, c *Client) error {
	return expectLoginTooLarge(ctx, c, int64(authBodyProbe-len(loginBodyPrefix)-len(loginBodySuffix)))
}

// expectJSONEnvelope requires r to be the error envelope with the given
// status in its status field, served as application/json. A message that
// is not "" must begin the envelope's message.
func expectJSONEnvelope(r *response, status int, message string) error {
	if !isJSONContentType(r) {
		return Mismatch(fmt.Sprintf("the error envelope (%d) served as application/json", status),
			fmt.Sprintf("Content-Type %q in %s", r.header.Get("Content-Type"), r))
	}
	env, err := parseEnvelope(r)
	if err != nil {
		return err
	}
	if env.status != float64(status) {
		return Mismatch(fmt.Sprintf("envelope status %d (the HTTP status)", status), fmt.Sprintf("%v in %s", env.status, r))
	}
	if message != "" && !strings.HasPrefix(env.message, message) {
		return Mismatch(fmt.Sprintf("a message beginning %q", message), fmt.Sprintf("%q in %s", env.message, r))
	}
	return nil
}

// rawExchange writes req on a connection of its own to the server's host
// (a %s in req is replaced by the Host value) and reads one response. It
// never takes longer than rawTimeout. An error connecting is the harness's
// (an Error); a connection that closes or stalls without an answer is the
// server's (a Fail, reported with Mismatch). what names the request in
// failure details.
func rawExchange(ctx context.Context, c *Client, what, req string) (*response, error) {
	u, err := url.Parse(c.base)
	if err != nil {
		return nil, err
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	}
	if strings.Contains(req, "%s") {
		req = fmt.Sprintf(req, u.Host)
	}
	ctx, cancel := context.WithTimeout(ctx, rawTimeout)
	defer cancel()
	var conn net.Conn
	if u.Scheme == "https" {
		cfg := &tls.Config{ServerName: u.Hostname()}
		if t, ok := c.hc.Transport.(*http.Transport); ok && t.TLSClientConfig != nil {
			cfg = t.TLSClientConfig.Clone()
			if cfg.ServerName == "" {
				cfg.ServerName = u.Hostname()
			}
		}
		cfg.NextProtos = []string{"http/1.1"}
		conn, err = (&tls.Dialer{Config: cfg}).DialContext(ctx, "tcp", host)
	} else {
		conn, err = (&net.Dialer{}).DialContext(ctx, "tcp", host)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: connecting to %s: %w", what, host, err)
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	conn.SetDeadline(deadline)
	// Closing the connection when ctx ends unblocks a read or a write.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	// The server may answer and close before it has read the whole
	// request, so the write runs beside the read and its error only
	// matters when no answer comes.
	wrote := make(chan error, 1)
	go func() {
		_, err := io.WriteString(conn, req)
		wrote <- err
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		if werr := <-wrote; werr != nil {
			err = errors.Join(err, fmt.Errorf("writing the request: %w", werr))
		}
		return nil, Mismatch("an answer", fmt.Sprintf("none to %s: %v", what, err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, Mismatch("a whole answer", fmt.Sprintf("%d and a body cut short (%v) for %s", resp.StatusCode, err, what))
	}
	return &response{method: "raw", path: what, status: resp.StatusCode, header: resp.Header, body: body}, nil
}
