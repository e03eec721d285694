package conformance

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
)

// The backup list: §4.2 GET /api/backups, §2.1.

// backupsListRequirements: the list, its entries and who may read it.
var backupsListRequirements = []*Requirement{
	{
		ID:      "BKP-LIST-001",
		Source:  SourceDocument,
		Section: "§4.2 GET /api/backups; §2.1",
		Name:    "backup list shape and order",
		Text: "GET /api/backups as superuser answers 200 with a JSON array (never null) of entries with exactly " +
			"key (string, the archive's name), modified (string YYYY-MM-DD HH:MM:SS.mmmZ) and size (integer), " +
			"in any order; archives just created are listed with their sizes.",
		Run: backupsCheck(func(ctx context.Context, c *Client) error {
			stem := "cf_" + newNonce(12)
			for _, k := range []string{stem + "_b.zip", stem + "_a.zip"} {
				if err := c.createBackup(ctx, k); err != nil {
					return err
				}
			}
			list, err := c.listBackups(ctx)
			if err != nil {
				return err
			}
			keys := make([]string, len(list))
			for i, e := range list {
				keys[i] = e.Key
			}
			if c.strict() && !slices.IsSorted(keys) {
				return Mismatch("entries ascending by key", strings.Join(keys, ", "))
			}
			for _, k := range []string{stem + "_a.zip", stem + "_b.zip"} {
				e, ok := findBackup(list, k)
				if !ok || e.Size <= 0 {
					return Mismatch(k+" listed with a positive size", strings.Join(keys, ", "))
				}
			}
			return nil
		}),
	},
	{
		ID:      "BKP-LIST-002",
		Source:  SourceDocument,
		Section: "§4.1; §4.2 GET /api/backups",
		Name:    "backup list fields",
		Text:    "GET /api/backups?fields=key answers 200 with an array whose every entry has exactly the key key.",
		Run: backupsCheck(func(ctx context.Context, c *Client) error {
			if err := c.createBackup(ctx, newBackupName()); err != nil {
				return err
			}
			r, err := c.get(ctx, "/api/backups?fields=key", c.su)
			if err != nil {
				return err
			}
			if err := expectStatus(r, http.StatusOK); err != nil {
				return err
			}
			var list []map[string]any
			if err := json.Unmarshal(r.body, &list); err != nil || len(list) == 0 {
				return Mismatch("a non-empty JSON array", r.String())
			}
			for _, m := range list {
				if _, ok := getString(m, "key"); !ok || len(m) != 1 {
					return Mismatch("entries of exactly {key}", jsonText(m))
				}
			}
			return nil
		}),
	},
	backupGuard("BKP-LIST-003", "GET", "/api/backups", false),
	backupGuard("BKP-LIST-004", "GET", "/api/backups", true),
}
