package conformance

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
)

// Encrypted archives: strongbox's settings backups.encryption (no
// section of the interface document; PocketBase has no such setting).

// The key pair of the C2SP age test kit, a published test vector (so
// that the suite needs no age implementation of its own): the identity,
// and its recipient as age-keygen -y prints it.
const (
	encTestIdentity  = "AGE-SECRET-KEY-1EGTZVFFV20835NWYV6270LXYVK2VKNX2MMDKWYKLMGR48UAWX40Q2P2LM0"
	encTestRecipient = "age1xmwwc06ly3ee5rytxm9mflaz2u56jjj36s0mypdrwsvlul66mv4q47ryef"
	ageIntro         = "age-encryption.org/v1\n"
)

var backupsEncryptionRequirements = []*Requirement{
	{
		ID:      "BKP-ENC-001",
		Source:  SourceStrongbox,
		Section: "issue 33 (encrypted archives): GET and PATCH /api/settings, which the document does not cover; backups.encryption.identity is write-only",
		Name:    "the settings never answer the encryption identity",
		Text: "PATCH /api/settings with backups.encryption {enabled: true, identity: AGE-SECRET-KEY-1…} answers 200, and " +
			"neither that answer nor GET /api/settings holds the identity; both show backups.encryption.recipient, its " +
			"public key (age1…).",
		Run: backupsCheck(func(ctx context.Context, c *Client) error {
			r, err := c.enableEncryption(ctx)
			if err != nil {
				return err
			}
			g, err := c.get(ctx, "/api/settings", c.su)
			if err != nil {
				return err
			}
			for _, a := range []struct {
				what string
				r    *response
			}{{"PATCH", r}, {"GET", g}} {
				body := string(a.r.body)
				if a.r.status != http.StatusOK || strings.Contains(body, encTestIdentity) ||
					!strings.Contains(body, `"recipient":"`+encTestRecipient+`"`) {
					return Mismatch("200 showing the recipient "+encTestRecipient+" and not the identity", fmt.Sprintf("%s: %s", a.what, a.r))
				}
			}
			return nil
		}),
	},
	{
		ID:      "BKP-ENC-002",
		Source:  SourceStrongbox,
		Section: "issue 33 (encrypted archives): §4.2 POST /api/backups, GET /api/backups/{key}; archives are age files while encryption is on",
		Name:    "an archive created with encryption on downloads as an age file",
		Text: "With backups.encryption enabled, an archive created by POST /api/backups (204) downloads with 200 " +
			"(GET /api/backups/{key}?token=…) as an age v1 file: its bytes start with \"age-encryption.org/v1\\n\", not with the zip magic PK\\x03\\x04.",
		Run: backupsCheck(func(ctx context.Context, c *Client) error {
			if _, err := c.enableEncryption(ctx); err != nil {
				return err
			}
			key := newBackupName()
			if err := c.createBackup(ctx, key); err != nil {
				return err
			}
			data, err := c.downloadBackup(ctx, key)
			if err != nil {
				return err
			}
			if !bytes.HasPrefix(data, []byte(ageIntro)) || bytes.HasPrefix(data, []byte("PK\x03\x04")) {
				return Mismatch(fmt.Sprintf("an archive starting %q", ageIntro), fmt.Sprintf("%d bytes starting %q", len(data), data[:min(len(data), 22)]))
			}
			return nil
		}),
	},
}

// enableEncryption turns backups.encryption on with the test kit's
// identity, and registers a cleanup that turns it off again (the
// identity stays stored, write-only: it opens only this suite's
// archives). A server whose settings have no backups.encryption skips.
func (c *Client) enableEncryption(ctx context.Context) (*response, error) {
	s, err := c.readSettings(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the settings first: %w", err)
	}
	b, _ := getObject(s.all, "backups")
	before, ok := getObject(b, "encryption")
	if !ok {
		return nil, Skipf("the server's settings have no backups.encryption object: %s", jsonText(b))
	}
	c.Cleanup("turn backups.encryption off again", func(ctx context.Context) error {
		return c.patchSettings(ctx, map[string]any{"backups": map[string]any{"encryption": map[string]any{
			"enabled": before["enabled"], "recipients": before["recipients"]}}})
	})
	return c.do(ctx, http.MethodPatch, "/api/settings", c.su, map[string]any{"backups": map[string]any{
		"encryption": map[string]any{"enabled": true, "identity": encTestIdentity}}})
}
