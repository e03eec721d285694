package conformance

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// Restoring a backup: §3 rule 3, §4.2 POST /api/backups/{key}/restore.

// backupsRestoreRequirements: a refused restore, who may restore, and (only
// with Config.Destructive) a full restore.
var backupsRestoreRequirements = []*Requirement{
	{
		ID:      "BKP-RESTORE-001",
		Source:  SourcePocketBase,
		Section: "§4.2 POST /api/backups/{key}/restore (message not shown: PocketBase v0.31.0)",
		Name:    "restore of a missing backup",
		Text:    "POST /api/backups/{key}/restore of a key no archive has answers 400 \"" + msgBackupMissing + "\", and the server goes on.",
		Run: backupsCheck(func(ctx context.Context, c *Client) error {
			r, err := c.post(ctx, "/api/backups/"+seg(newBackupName())+"/restore", c.su, nil)
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusBadRequest, msgBackupMissing)
			return err
		}),
	},
	backupGuard("BKP-RESTORE-002", "POST", "/api/backups/{key}/restore", false),
	backupGuard("BKP-RESTORE-003", "POST", "/api/backups/{key}/restore", true),
	{
		ID:      "BKP-FULLRESTORE-001",
		Source:  SourceDocument,
		Section: "§3 rule 3; §4.2 POST /api/backups/{key}/restore (destructive: only with Config.Destructive)",
		Name:    "full restore",
		Text: "After a record A, a backup, then a record B, POST /api/backups/{key}/restore answers success with a null body (204, or 200 with null); the server restarts " +
			"and, within the restart timeout, answers GET /api/health with 200 again, with A present and B gone.",
		Run: func(ctx context.Context, c *Client) error {
			if !c.opts.destructive {
				return Skipf("destructive checks are off (Config.Destructive, strongbox conformance --destructive)")
			}
			if err := c.requireBackups(ctx); err != nil {
				return err
			}
			a, err := c.newUser(ctx)
			if err != nil {
				return err
			}
			key := newBackupName()
			if err := c.createBackup(ctx, key); err != nil {
				return err
			}
			b, err := c.newUser(ctx)
			if err != nil {
				return err
			}
			r, err := c.post(ctx, "/api/backups/"+seg(key)+"/restore", c.su, nil)
			if err != nil {
				return err
			}
			if !nullSuccess(r, false) {
				return Mismatch("204 with no body, or 200 with a null body", r.String())
			}
			return c.waitRestored(ctx, a.id, b.id)
		},
	},
}

// waitRestored polls, within the restart timeout, until the server answers
// GET /api/health with 200 and the record kept (of the users collection)
// exists while the record dropped does not.
func (c *Client) waitRestored(ctx context.Context, kept, dropped string) error {
	deadline := time.Now().Add(c.opts.restartTimeout)
	last := "no answer"
	for {
		if state, done := c.restoredState(ctx, kept, dropped); done {
			return nil
		} else {
			last = state
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return Mismatch(fmt.Sprintf("health 200 within %v, with record %s present and %s gone", c.opts.restartTimeout, kept, dropped), last)
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// restoredState reports whether the server has restarted on the restored
// data, and what it shows otherwise.
func (c *Client) restoredState(ctx context.Context, kept, dropped string) (string, bool) {
	h, err := c.get(ctx, "/api/health", "")
	if err != nil {
		return err.Error(), false
	}
	if h.status != http.StatusOK {
		return "health " + h.String(), false
	}
	rk, err := c.get(ctx, "/api/collections/users/records/"+seg(kept), c.su)
	if err != nil {
		return err.Error(), false
	}
	rd, err := c.get(ctx, "/api/collections/users/records/"+seg(dropped), c.su)
	if err != nil {
		return err.Error(), false
	}
	state := fmt.Sprintf("record %s: %d, record %s: %d", kept, rk.status, dropped, rd.status)
	return state, rk.status == http.StatusOK && rd.status == http.StatusNotFound
}
