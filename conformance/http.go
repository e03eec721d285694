package conformance

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Behaviour every response shares that the interface document does not
// show: the security headers and the request body limit, as PocketBase
// v0.31.0 applies them in its global middlewares.

const (
	msgTooLarge = "Request entity too large."

	// bodyLimit is PocketBase's default request body limit (32 MiB).
	bodyLimit = 32 << 20
)

// securityHeaders are the headers PocketBase adds to every response.
var securityHeaders = [][2]string{
	{"X-Content-Type-Options", "nosniff"},
	{"X-Frame-Options", "SAMEORIGIN"},
	{"X-XSS-Protection", "1; mode=block"},
}

var httpRequirements = []*Requirement{
	{
		ID:      "HTTP-HEADERS-001",
		Source:  SourcePocketBase,
		Section: "§1 (not shown); PocketBase v0.31.0 (the security headers it sends on every answer)",
		Name:    "security headers on every response",
		Text: "Every response carries X-Content-Type-Options: nosniff, X-Frame-Options: SAMEORIGIN and " +
			"X-XSS-Protection: 1; mode=block (checked on a 200 GET /api/health, a 401 GET /api/logs without " +
			"a token and a 404 POST to an unknown path).",
		Run: func(ctx context.Context, c *Client) error {
			probes := []struct {
				method, path string
				status       int
			}{
				{http.MethodGet, "/api/health", 200},
				{http.MethodGet, "/api/logs", 401},
				{http.MethodPost, "/api/cf-" + newNonce(8) + "/nowhere", 404},
			}
			for _, p := range probes {
				r, err := c.do(ctx, p.method, p.path, "", nil)
				if err != nil {
					return err
				}
				if err := expectStatus(r, p.status); err != nil {
					return err
				}
				for _, h := range securityHeaders {
					if got := r.header.Values(h[0]); len(got) != 1 || got[0] != h[1] {
						return Mismatch(fmt.Sprintf("the header %s: %s on %s %s (%d)", h[0], h[1], p.method, p.path, r.status), fmt.Sprintf("%q", got))
					}
				}
			}
			return nil
		},
	},
	{
		ID:      "HTTP-LIMIT-001",
		Source:  SourcePocketBase,
		Section: "§8 (maximum body size not shown); PocketBase v0.31.0 (its default request body limit and 413 answer)",
		Name:    "request body over 32 MiB refused",
		Text: "A POST to /api/collections/users/auth-with-password whose JSON body (sent with its " +
			"Content-Length) is larger than 32 MiB, PocketBase's default limit, answers 413 \"" + msgTooLarge +
			"\" in the error envelope. Any other answer, or none, fails.",
		Run: func(ctx context.Context, c *Client) error {
			return expectLoginTooLarge(ctx, c, bodyLimit+64<<10)
		},
	},
}

// The JSON body of a login around its identity, for the bodies too large.
const loginBodyPrefix, loginBodySuffix = `{"identity":"`, `","password":"Whatever-123"}`

// expectLoginTooLarge posts a login whose identity is fill bytes (the body
// streamed, with its Content-Length) and requires 413 msgTooLarge.
func expectLoginTooLarge(ctx context.Context, c *Client, fill int64) error {
	body := streamBody{
		contentType: "application/json",
		r: io.MultiReader(strings.NewReader(loginBodyPrefix), &repeatReader{b: 'a', n: fill},
			strings.NewReader(loginBodySuffix)),
		n: int64(len(loginBodyPrefix)) + fill + int64(len(loginBodySuffix)),
		recipe: fmt.Sprintf("{ printf '%%s' '%s'; head -c %d /dev/zero | tr '\\0' a; printf '%%s' '%s'; }",
			loginBodyPrefix, fill, loginBodySuffix),
	}
	r, err := c.post(ctx, "/api/collections/users/auth-with-password", "", body)
	if err != nil {
		return Mismatch(fmt.Sprintf("413 %q for a body of %d bytes", msgTooLarge, body.n), fmt.Sprintf("no answer: %v", err))
	}
	_, err = expectError(r, http.StatusRequestEntityTooLarge, msgTooLarge)
	return err
}

// repeatReader yields n copies of b.
type repeatReader struct {
	b byte
	n int64
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.n {
		p = p[:r.n]
	}
	for i := range p {
		p[i] = r.b
	}
	r.n -= int64(len(p))
	return len(p), nil
}
