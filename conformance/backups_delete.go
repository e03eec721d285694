package conformance

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// Deleting a backup: §4.2 DELETE /api/backups/{key}.

// backupsDeleteRequirements: the delete, of a missing archive, and who may
// delete.
var backupsDeleteRequirements = []*Requirement{
	{
		ID:      "BKP-DEL-001",
		Source:  SourceDocument,
		Section: "§4.2 DELETE /api/backups/{key}",
		Name:    "delete a backup",
		Text: "DELETE /api/backups/{key} of an existing archive answers success with a null body (204 with no body, " +
			"or 200 with null), and the list no longer holds it.",
		Run: backupsCheckOn(func(ctx context.Context, c *Client, key string) error {
			r, err := c.do(ctx, http.MethodDelete, "/api/backups/"+seg(key), c.su, nil)
			if err != nil {
				return err
			}
			if err := c.expectNullSuccess(r); err != nil {
				return err
			}
			if c.hasBackup(ctx, key) {
				return Mismatch(key+" gone from the list", "still listed")
			}
			return nil
		}),
	},
	{
		ID:      "BKP-DEL-002",
		Source:  SourceStrongbox,
		Section: "§4.2 DELETE /api/backups/{key} (message not shown: PocketBase v0.31.0); strongbox promise: the message names no server path (a PocketBase defect)",
		Name:    "delete of a missing backup",
		Text: "DELETE /api/backups/{key} of a key no archive has answers 400 with a message starting \"" + msgBackupDeleteMissing +
			"\" that names no path on the server (no '/').",
		Run: backupsCheck(func(ctx context.Context, c *Client) error {
			r, err := c.do(ctx, http.MethodDelete, "/api/backups/"+seg(newBackupName()), c.su, nil)
			if err != nil {
				return err
			}
			env, err := expectError(r, http.StatusBadRequest, "")
			if err != nil {
				return err
			}
			if !strings.HasPrefix(env.message, msgBackupDeleteMissing) || strings.Contains(env.message, "/") {
				return Mismatch(fmt.Sprintf("a message starting %q without a path", msgBackupDeleteMissing), r.String())
			}
			return nil
		}),
	},
	backupGuard("BKP-DEL-003", "DELETE", "/api/backups/{key}", false),
	backupGuard("BKP-DEL-004", "DELETE", "/api/backups/{key}", true),
}
