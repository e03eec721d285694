package conformance

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Downloading a backup: §4.2 GET /api/backups/{key}, §5.10 (file tokens).

// backupsDownloadRequirements: the download with a superuser file token,
// and every other token refused.
var backupsDownloadRequirements = []*Requirement{
	{
		ID:      "BKP-DL-001",
		Source:  SourceDocument,
		Section: "§4.2 GET /api/backups/{key}; §5.10",
		Name:    "download with a superuser file token",
		Text: "GET /api/backups/{key}?token=<superuser file token> answers 200 with the archive's bytes " +
			"(a zip of the listed size).",
		Run: backupsCheckOn(func(ctx context.Context, c *Client, key string) error {
			list, err := c.listBackups(ctx)
			if err != nil {
				return err
			}
			e, _ := findBackup(list, key)
			ft, err := c.fileToken(ctx, c.su)
			if err != nil {
				return err
			}
			r, err := c.get(ctx, "/api/backups/"+seg(key)+"?token="+ft, "")
			if err != nil {
				return err
			}
			// §4.2 promises the file content; its Content-Type and
			// Content-Disposition are PocketBase's reading (BKP-DL-501).
			headersOK := r.header.Get("Content-Type") == "application/zip" &&
				strings.HasPrefix(r.header.Get("Content-Disposition"), "attachment")
			if r.status != http.StatusOK || c.strict() && !headersOK ||
				!bytes.HasPrefix(r.body, []byte("PK")) || float64(len(r.body)) != e.Size {
				return Mismatch(fmt.Sprintf("200, application/zip, an attachment, a zip of %v bytes", e.Size),
					fmt.Sprintf("%d, %q, %q, %d bytes starting %q", r.status, r.header.Get("Content-Type"),
						r.header.Get("Content-Disposition"), len(r.body), r.body[:min(len(r.body), 4)]))
			}
			return nil
		}),
	},
	downloadRefused("BKP-DL-002", "without a token", "without any token", func(context.Context, *Client) (string, string, error) {
		return "", "", nil
	}),
	downloadRefused("BKP-DL-003", "with the Authorization header only", "with only a superuser token in Authorization",
		func(_ context.Context, c *Client) (string, string, error) { return "", c.su, nil }),
	downloadRefused("BKP-DL-004", "with a user's file token", "with a regular user's file token in the query",
		func(ctx context.Context, c *Client) (string, string, error) {
			_, tok, err := c.newUserToken(ctx)
			if err != nil {
				return "", "", err
			}
			ft, err := c.fileToken(ctx, tok)
			return ft, "", err
		}),
	downloadRefused("BKP-DL-005", "with a tampered file token", "with a superuser file token whose signature was altered",
		func(ctx context.Context, c *Client) (string, string, error) {
			ft, err := c.fileToken(ctx, c.su)
			if err != nil {
				return "", "", err
			}
			return alterSignature(ft), "", nil
		}),
	downloadRefused("BKP-DL-006", "with an auth token in the query", "with the superuser's auth token (not a file token) in the query",
		func(_ context.Context, c *Client) (string, string, error) { return c.su, "", nil }),
	{
		ID:      "BKP-DL-008",
		Source:  SourceDocument,
		Section: "§4.2 GET /api/backups/{key} (token: a superuser file token); §5.10; §2.5",
		Name:    "download refused without a superuser file token",
		Text: "GET /api/backups/{key} of an existing archive without a token, with a superuser token in Authorization " +
			"only, with a regular user's file token, with a tampered superuser file token, or with the superuser's " +
			"auth token in the query answers a 4xx error in the envelope, never the archive (the document names no " +
			"status; BKP-DL-002..006 demand PocketBase's 403).",
		Run: backupsCheckOn(func(ctx context.Context, c *Client, key string) error {
			_, userTok, err := c.newUserToken(ctx)
			if err != nil {
				return err
			}
			userFile, err := c.fileToken(ctx, userTok)
			if err != nil {
				return err
			}
			suFile, err := c.fileToken(ctx, c.su)
			if err != nil {
				return err
			}
			for _, tc := range []struct{ what, query, header string }{
				{"without a token", "", ""},
				{"with a superuser token in Authorization only", "", c.su},
				{"with a regular user's file token", userFile, ""},
				{"with a tampered superuser file token", alterSignature(suFile), ""},
				{"with the superuser's auth token in the query", c.su, ""},
			} {
				p := "/api/backups/" + seg(key)
				if tc.query != "" {
					p += "?token=" + url.QueryEscape(tc.query)
				}
				r, err := c.do(ctx, http.MethodGet, p, tc.header, nil)
				if err != nil {
					return err
				}
				if r.status < 400 || r.status > 499 {
					return fmt.Errorf("%s: %w", tc.what, Mismatch("a 4xx error, not the archive", r.String()))
				}
				if _, err := expectError(r, r.status, ""); err != nil {
					return fmt.Errorf("%s: %w", tc.what, err)
				}
			}
			return nil
		}),
	},
	{
		ID:      "BKP-DL-007",
		Source:  SourceDocument,
		Section: "§4.2 GET /api/backups/{key}; §7 row 9",
		Name:    "download of an unknown key",
		Text:    "GET /api/backups/{key} of a key no archive has, with a superuser file token, answers 404 \"" + msgNotFound + "\".",
		Run: backupsCheck(func(ctx context.Context, c *Client) error {
			ft, err := c.fileToken(ctx, c.su)
			if err != nil {
				return err
			}
			r, err := c.get(ctx, "/api/backups/"+seg(newBackupName())+"?token="+ft, "")
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusNotFound, msgNotFound)
			return err
		}),
	},
}

// downloadRefused builds a requirement that a download with the token (and
// Authorization header) that tok returns is refused with 403.
func downloadRefused(id, name, what string, tok func(ctx context.Context, c *Client) (query, header string, err error)) *Requirement {
	return &Requirement{
		ID:      id,
		Source:  SourcePocketBase,
		Section: "§4.2 GET /api/backups/{key}; §5.10; PocketBase v0.31.0 (the document names no status for a refused download)",
		Name:    "download " + name,
		Text: fmt.Sprintf("GET /api/backups/{key} of an existing archive %s answers 403 %q: only a superuser file token "+
			"in the query parameter token grants the download.", what, msgFileForbidden),
		Run: backupsCheckOn(func(ctx context.Context, c *Client, key string) error {
			q, h, err := tok(ctx, c)
			if err != nil {
				return err
			}
			p := "/api/backups/" + seg(key)
			if q != "" {
				p += "?token=" + q
			}
			r, err := c.do(ctx, http.MethodGet, p, h, nil)
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusForbidden, msgFileForbidden)
			return err
		}),
	}
}

// alterSignature changes the first character of a JWT's signature (the
// last one may only carry padding bits a lenient decoder ignores).
func alterSignature(tok string) string {
	i := strings.LastIndexByte(tok, '.') + 1
	if i <= 0 || i >= len(tok) {
		return tok + "A"
	}
	c := "A"
	if tok[i] == 'A' {
		c = "B"
	}
	return tok[:i] + c + tok[i+1:]
}
