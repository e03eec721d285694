package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// Creating a backup: §3 rule 1, §4.2 POST /api/backups, §8 (the name format).

// backupsCreateRequirements: named and generated creates, refused names,
// concurrent creates, and who may create.
var backupsCreateRequirements = []*Requirement{
	{
		ID:      "BKP-CREATE-001",
		Source:  SourceDocument,
		Section: "§4.2 POST /api/backups",
		Name:    "create a named backup",
		Text: "POST /api/backups {name} with a valid unused name answers success with a null body (204 with no body, " +
			"or 200 with null), and the list then holds that key.",
		Run: backupsCheck(func(ctx context.Context, c *Client) error {
			name := newBackupName()
			r, err := c.postBackup(ctx, name)
			if err != nil {
				return err
			}
			if err := c.expectNullSuccess(r); err != nil {
				return err
			}
			if !c.hasBackup(ctx, name) {
				return Mismatch(name+" in the list", "not listed")
			}
			return nil
		}),
	},
	{
		ID:      "BKP-CREATE-002",
		Source:  SourceDocument,
		Section: "§4.2 POST /api/backups; §8",
		Name:    "create with a generated name",
		Text: "POST /api/backups with no body answers success with a null body (204 with no body, or 200 with null), " +
			"and one new archive appears whose key matches [a-z0-9_-]+.zip.",
		Run: backupsCheckSince(func(ctx context.Context, c *Client, before []backupEntry) error {
			r, err := c.post(ctx, "/api/backups", c.su, nil)
			if err != nil {
				return err
			}
			added, err := c.newBackups(ctx, before)
			if err != nil {
				return err
			}
			if err := c.expectNullSuccess(r); err != nil {
				return err
			}
			if len(added) != 1 || !reBackupName.MatchString(added[0]) {
				return Mismatch("one new archive named [a-z0-9_-]+.zip", fmt.Sprintf("new archives %v", added))
			}
			return nil
		}),
	},
	backupNameReq("BKP-CREATE-003", "a name with capital letters", "Cf_"+"Upper.zip",
		"validation_match_invalid", "Must be in a valid format."),
	backupNameReq("BKP-CREATE-004", "a name without .zip", "cf_no_extension",
		"validation_match_invalid", "Must be in a valid format."),
	backupNameReq("BKP-CREATE-005", "a name of 151 characters", "cf_"+strings.Repeat("x", 144)+".zip",
		"validation_length_out_of_range", "The length must be between 1 and 150."),
	{
		ID:      "BKP-CREATE-006",
		Source:  SourcePocketBase,
		Section: "§4.2 POST /api/backups; §8 (name format); validation code: PocketBase v0.31.0",
		Name:    "create refuses an existing name",
		Text: "POST /api/backups {name} naming an existing archive answers 400 \"" + msgValidation + "\" with data.name.code " +
			"validation_backup_name_exists, and the archive is unchanged.",
		Run: backupsCheck(func(ctx context.Context, c *Client) error {
			name := newBackupName()
			if err := c.createBackup(ctx, name); err != nil {
				return err
			}
			before, err := c.downloadBackup(ctx, name)
			if err != nil {
				return err
			}
			r, err := c.post(ctx, "/api/backups", c.su, map[string]string{"name": name})
			if err != nil {
				return err
			}
			if err := expectFieldError(r, msgValidation, "name", "validation_backup_name_exists", "The backup file name is invalid or already exists."); err != nil {
				return err
			}
			return c.expectArchiveUnchanged(ctx, name, before)
		}),
	},
	{
		ID:      "BKP-CREATE-010",
		Source:  SourceDocument,
		Section: "§4.2 POST /api/backups (name format); §8; §2.5 (per-field validation errors)",
		Name:    "create refuses names outside the format",
		Text: "POST /api/backups with a name outside [a-z0-9_-].zip (capital letters, no .zip, a dot before .zip, " +
			"a space, a path) answers 400 in the envelope with data.name {code, message} (any code and message: " +
			"the document names none; BKP-CREATE-003 and 004 demand PocketBase's), and creates nothing.",
		Run: backupsCheckSince(func(ctx context.Context, c *Client, before []backupEntry) error {
			nonce := newNonce(8)
			for _, name := range []string{"Cf_" + nonce + ".zip", "cf_" + nonce, "cf_" + nonce + ".v1.zip",
				"cf " + nonce + ".zip", "../cf_" + nonce + ".zip"} {
				if !strings.Contains(name, "/") { // no key of the API can name a path
					c.cleanupBackup(name)
				}
				r, err := c.post(ctx, "/api/backups", c.su, map[string]string{"name": name})
				if err != nil {
					return err
				}
				if err := expectFieldError(r, msgValidation, "name", "validation_match_invalid", ""); err != nil {
					return fmt.Errorf("name %q: %w", name, err)
				}
			}
			return c.expectNoNewBackups(ctx, before)
		}),
	},
	{
		ID:      "BKP-CREATE-007",
		Source:  SourceDocument,
		Section: "§3 rule 1; §4.2 POST /api/backups; §7 row 2; §8",
		Name:    "concurrent creates, one at a time",
		Text: "Of three POST /api/backups sent at once, each answers success (204, or 200 with null) or 400 \"" +
			msgBackupBusy + "\", at least one succeeds, and each success leaves an archive of its own: none is overwritten.",
		Run: backupsCheckSince(func(ctx context.Context, c *Client, before []backupEntry) error {
			const n = 3
			res := make([]*response, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() { res[i], errs[i] = c.post(ctx, "/api/backups", c.su, nil) })
			}
			wg.Wait()
			added, err := c.newBackups(ctx, before)
			if err != nil {
				return err
			}
			if err := errors.Join(errs...); err != nil {
				return err
			}
			won := 0
			for _, r := range res {
				if nullSuccess(r, false) {
					won++
					continue
				}
				if _, err := expectError(r, http.StatusBadRequest, msgBackupBusy); err != nil {
					return fmt.Errorf("a create that did not win: %w", err)
				}
			}
			if won == 0 || len(added) != won {
				return Mismatch("at least one success, and as many new archives as successes",
					fmt.Sprintf("%d successes, new archives %v", won, added))
			}
			return nil
		}),
	},
	backupGuard("BKP-CREATE-008", "POST", "/api/backups", false),
	backupGuard("BKP-CREATE-009", "POST", "/api/backups", true),
}

// backupNameReq builds a requirement that POST /api/backups refuses name
// with the validation code and message PocketBase v0.31.0 gives.
func backupNameReq(id, what, name, code, message string) *Requirement {
	return &Requirement{
		ID:      id,
		Source:  SourcePocketBase,
		Section: "§4.2 POST /api/backups; §8 (name format); validation code: PocketBase v0.31.0",
		Name:    "create refuses " + what,
		Text: fmt.Sprintf("POST /api/backups with %s answers 400 %q with data.name {code %s, message %q}, and creates nothing.",
			what, msgValidation, code, message),
		Run: backupsCheck(func(ctx context.Context, c *Client) error {
			r, err := c.postBackup(ctx, name)
			if err != nil {
				return err
			}
			return expectFieldError(r, msgValidation, "name", code, message)
		}),
	}
}
