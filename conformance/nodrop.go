package conformance

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
)

// No input silently dropped (issue 19). PocketBase v0.31.0 answers 200 to
// a record create or update carrying a file part for a field the
// collection does not have, dropping it, and Go's URL parser (which
// PocketBase uses too) drops a query pair it refuses (a raw ";", a bad
// "%" escape), so a filter=a;b lists everything unfiltered: refusing both
// with 400 is strongbox's promise. GET /api/health's realIP through the
// trustedProxy header is PocketBase's behaviour.

const sectionNoDrop = "issue 19 (no input silently dropped; PocketBase v0.31.0 drops it: a file part for a field the " +
	"collection lacks is ignored, and a query pair Go's URL parser refuses is skipped)"

var noDropRequirements = []*Requirement{
	{
		ID:      "NODROP-001",
		Source:  SourceStrongbox,
		Section: sectionNoDrop,
		Name:    "a record create with a file part is refused",
		Text: "On an auth collection without file fields, a superuser's multipart POST of its records with a valid email, " +
			"password and passwordConfirm and a file part named document answers 400 with the error envelope and " +
			"data.document {code, message}, and creates nothing (never 200 with the part dropped).",
		Run: withRuleCollection(nil, nil, func(ctx context.Context, c *Client, fx *ruleFixture) error {
			email, pw := newEmail(), "Cf-"+newNonce(16)
			body := multipartFile(map[string]string{"email": email, "password": pw, "passwordConfirm": pw},
				"document", "cf.txt", "text/plain", []byte("a file part\n"))
			r, err := c.post(ctx, fx.recordsPath(), c.su, body)
			if err != nil {
				return err
			}
			c.cleanupRecordCreated(fx, r)
			if err := expectFieldRefused(r, "document"); err != nil {
				return err
			}
			return c.expectIDs(ctx, fx.recordsPath(), authHeader(c.su), "the superuser, after the refused create")
		}),
	},
	{
		ID:      "NODROP-002",
		Source:  SourceStrongbox,
		Section: sectionNoDrop,
		Name:    "a record update with a file part is refused",
		Text: "On an auth collection without file fields, a superuser's multipart PATCH of a record with emailVisibility " +
			"true and a file part named document answers 400 with the error envelope and data.document {code, message}, " +
			"and changes nothing (the record still has emailVisibility false).",
		Run: withRuleCollection(nil, []bool{false}, func(ctx context.Context, c *Client, fx *ruleFixture) error {
			path := fx.recordsPath(fx.recs[0].id)
			body := multipartFile(map[string]string{"emailVisibility": "true"}, "document", "cf.txt", "text/plain", []byte("a file part\n"))
			r, err := c.do(ctx, http.MethodPatch, path, c.su, body)
			if err != nil {
				return err
			}
			if err := expectFieldRefused(r, "document"); err != nil {
				return err
			}
			r, m, err := c.getOK(ctx, path, c.su)
			if err != nil {
				return err
			}
			if v, _ := getBool(m, "emailVisibility"); v {
				return Mismatch("emailVisibility still false after the refused PATCH", r.String())
			}
			return nil
		}),
	},
	{
		ID:      "NODROP-003",
		Source:  SourceStrongbox,
		Section: sectionNoDrop,
		Name:    "a query pair Go's parser refuses is a 400",
		Text: "A superuser's GET /api/collections/users/records?filter=id='x';y (a raw semicolon) and ?filter=%zz (a bad " +
			"escape), and GET /api/health?cf=a;b, each answer 400 with the error envelope and a non-empty message, never " +
			"200 with the parameter dropped.",
		Run: func(ctx context.Context, c *Client) error {
			for _, path := range []string{
				"/api/collections/users/records?filter=id%3D%27x%27;y",
				"/api/collections/users/records?filter=%zz",
				"/api/health?cf=a;b",
			} {
				r, err := c.get(ctx, path, c.su)
				if err != nil {
					return err
				}
				env, err := expectError(r, http.StatusBadRequest, "")
				if err == nil && env.message == "" {
					err = Mismatch("a message naming the problem", r.String())
				}
				if err != nil {
					return fmt.Errorf("GET %s: %w", path, err)
				}
			}
			return nil
		},
	},
	{
		ID:      "NODROP-004",
		Source:  SourcePocketBase,
		Section: "§1 (health: contract not shown); issue 19; PocketBase v0.31.0 (a superuser's GET /api/health reports realIP, read through settings.trustedProxy)",
		Name:    "health reports realIP through the trusted proxy header",
		Text: "With settings.trustedProxy {headers [\"" + clientAddrHeader + "\"], useLeftmostIP false}, a superuser's GET " +
			"/api/health with " + clientAddrHeader + ": <a random address of 203.0.113.0/24> answers 200 with data.realIP " +
			"that address.",
		Run: func(ctx context.Context, c *Client) error {
			if err := c.trustClientHeader(ctx); err != nil {
				return err
			}
			var b [1]byte
			rand.Read(b[:])
			addr := fmt.Sprintf("203.0.113.%d", 1+int(b[0])%254)
			r, err := c.doWith(ctx, http.MethodGet, "/api/health", http.Header{"Authorization": {c.su}, clientAddrHeader: {addr}}, nil)
			if err != nil {
				return err
			}
			m, err := okObject(r)
			if err != nil {
				return err
			}
			data, _ := getObject(m, "data")
			if ip, _ := getString(data, "realIP"); ip != addr {
				return Mismatch("data.realIP "+addr, r.String())
			}
			return nil
		},
	},
}

// expectFieldRefused requires 400 with the error envelope and data.field
// holding a code and a message.
func expectFieldRefused(r *response, field string) error {
	env, err := expectError(r, http.StatusBadRequest, "")
	if err != nil {
		return err
	}
	fe, _ := getObject(env.data, field)
	code, _ := getString(fe, "code")
	msg, _ := getString(fe, "message")
	if code == "" || msg == "" {
		return Mismatch(fmt.Sprintf("data.%s {code, message} naming the part refused", field), r.String())
	}
	return nil
}
