package conformance

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
)

// Uploading a backup: §4.2 POST /api/backups/upload, §7 row 3, §8.

// backupsUploadRequirements: what an upload stores and what it refuses.
var backupsUploadRequirements = []*Requirement{
	{
		ID:      "BKP-UPLOAD-001",
		Source:  SourceDocument,
		Section: "§4.2 POST /api/backups/upload; §7 row 3; §8",
		Name:    "upload refuses what is not a zip",
		Text: "POST /api/backups/upload with a file named .zip and sent as application/zip whose content is text answers " +
			"400 \"" + msgGenericBad + "\" with data.file.code validation_invalid_mime_type and a message ending " +
			"\"mime type must be one of: application/zip.\", and stores nothing.",
		Run: backupsCheck(func(ctx context.Context, c *Client) error {
			name := newBackupName()
			c.cleanupBackup(name)
			r, err := c.post(ctx, "/api/backups/upload", c.su,
				multipartFile(nil, "file", name, "application/zip", []byte("this is plain text, not a zip archive\n")))
			if err != nil {
				return err
			}
			if err := expectFieldError(r, msgGenericBad, "file", "validation_invalid_mime_type", "mime type must be one of: application/zip."); err != nil {
				return err
			}
			if c.hasBackup(ctx, name) {
				return Mismatch("nothing stored", name+" listed")
			}
			return nil
		}),
	},
	{
		ID:      "BKP-UPLOAD-002",
		Source:  SourceDocument,
		Section: "§4.2 POST /api/backups/upload; §7 row 3",
		Name:    "upload without a file",
		Text: "POST /api/backups/upload with a multipart body that has no file answers 400 \"" + msgGenericBad +
			"\" with data.file.code validation_required.",
		Run: backupsCheck(func(ctx context.Context, c *Client) error {
			r, err := c.post(ctx, "/api/backups/upload", c.su, multipartFile(map[string]string{"other": "x"}, "", "", "", nil))
			if err != nil {
				return err
			}
			return expectFieldError(r, msgGenericBad, "file", "validation_required", "")
		}),
	},
	{
		ID:      "BKP-UPLOAD-007",
		Source:  SourceDocument,
		Section: "§4.2 POST /api/backups/upload (multipart/form-data only); §7 row 3; §8 (upload content type)",
		Name:    "upload refuses a body that is not multipart",
		Text: "POST /api/backups/upload with a zip archive sent as the raw body (application/zip), and with a JSON body " +
			"{\"file\": <the archive in base64>}, answers 400 \"" + msgGenericBad + "\" with data.file {code, message} " +
			"(PocketBase: validation_required), and the list gains no archive.",
		Run: backupsCheckSince(func(ctx context.Context, c *Client, before []backupEntry) error {
			empty := []byte("PK\x05\x06" + strings.Repeat("\x00", 18))
			for _, tc := range []struct {
				what string
				body any
			}{
				{"a raw application/zip body", rawBody{contentType: "application/zip", data: empty}},
				{"a JSON body", map[string]string{"file": base64.StdEncoding.EncodeToString(empty)}},
			} {
				r, err := c.post(ctx, "/api/backups/upload", c.su, tc.body)
				if err != nil {
					return err
				}
				if err := expectFieldError(r, msgGenericBad, "file", "validation_required", ""); err != nil {
					return fmt.Errorf("%s: %w", tc.what, err)
				}
			}
			return c.expectNoNewBackups(ctx, before)
		}),
	},
	{
		ID:      "BKP-UPLOAD-003",
		Source:  SourceDocument,
		Section: "§4.2 POST /api/backups/upload; §7 row 3",
		Name:    "upload refuses an existing name",
		Text: "POST /api/backups/upload of a valid archive under the name of an existing one answers 400 \"" + msgGenericBad +
			"\" with data.file.code validation_backup_name_exists, and the existing archive is unchanged.",
		Run: backupsCheck(func(ctx context.Context, c *Client) error {
			a, b := newBackupName(), newBackupName()
			if err := c.createBackup(ctx, a); err != nil {
				return err
			}
			if err := c.createBackup(ctx, b); err != nil {
				return err
			}
			dataA, err := c.downloadBackup(ctx, a)
			if err != nil {
				return err
			}
			dataB, err := c.downloadBackup(ctx, b)
			if err != nil {
				return err
			}
			r, err := c.post(ctx, "/api/backups/upload", c.su, multipartFile(nil, "file", a, "application/zip", dataB))
			if err != nil {
				return err
			}
			if err := expectFieldError(r, msgGenericBad, "file", "validation_backup_name_exists", ""); err != nil {
				return err
			}
			return c.expectArchiveUnchanged(ctx, a, dataA)
		}),
	},
	{
		ID:      "BKP-UPLOAD-004",
		Source:  SourceDocument,
		Section: "§4.2 POST /api/backups/upload",
		Name:    "upload stores an archive",
		Text: "POST /api/backups/upload of an archive the server made, under a new valid name, answers success " +
			"with a null body (204 with no body, or 200 with null); " +
			"the list then holds that name with the uploaded size, and its download gives the same bytes.",
		Run: backupsCheck(func(ctx context.Context, c *Client) error {
			src, dst := newBackupName(), newBackupName()
			if err := c.createBackup(ctx, src); err != nil {
				return err
			}
			data, err := c.downloadBackup(ctx, src)
			if err != nil {
				return err
			}
			c.cleanupBackup(dst)
			r, err := c.post(ctx, "/api/backups/upload", c.su, multipartFile(nil, "file", dst, "application/zip", data))
			if err != nil {
				return err
			}
			if err := c.expectNullSuccess(r); err != nil {
				return err
			}
			list, err := c.listBackups(ctx)
			if err != nil {
				return err
			}
			if e, ok := findBackup(list, dst); !ok || e.Size != float64(len(data)) {
				return Mismatch(fmt.Sprintf("%s listed with size %d", dst, len(data)), jsonText(e))
			}
			got, err := c.downloadBackup(ctx, dst)
			if err != nil {
				return err
			}
			if !bytes.Equal(got, data) {
				return Mismatch("the uploaded bytes back", fmt.Sprintf("%d other bytes", len(got)))
			}
			return nil
		}),
	},
	{
		ID:      "BKP-UPLOAD-008",
		Source:  SourceStrongbox,
		Section: "§4.2 POST /api/backups/upload; §7 row 3; strongbox promise: an archive that cannot restore is refused before it is kept",
		Name:    "upload refuses an archive whose stores do not open",
		Text: "POST /api/backups/upload of an archive the server made with a byte of auth.journal's first record changed " +
			"(manifest.json listing the changed file's true size and SHA-256), and of an archive whose manifest.json lists " +
			"no files, each answers 400 \"" + msgGenericBad + "\" with data.file.code validation_invalid_backup, " +
			"and the list gains no archive. On a server whose archives are not in strongbox's layout (PocketBase's) " +
			"the damaged archive cannot be made: skipped, with what the archive lacks.",
		Run: backupsCheckSince(func(ctx context.Context, c *Client, before []backupEntry) error {
			src := newBackupName()
			if err := c.createBackup(ctx, src); err != nil {
				return err
			}
			data, err := c.downloadBackup(ctx, src)
			if err != nil {
				return err
			}
			damaged, err := damageArchive(data, "auth.journal", journalFirstRecordByte)
			if err != nil {
				return err
			}
			for _, tc := range []struct {
				what string
				data []byte
			}{
				{"a damaged auth.journal whose manifest matches it", damaged},
				{"an empty manifest", emptyArchive()},
			} {
				name := newBackupName()
				c.cleanupBackup(name)
				r, err := c.post(ctx, "/api/backups/upload", c.su, multipartFile(nil, "file", name, "application/zip", tc.data))
				if err != nil {
					return err
				}
				if err := expectFieldError(r, msgGenericBad, "file", codeInvalidBackup, ""); err != nil {
					return fmt.Errorf("%s: %w", tc.what, err)
				}
			}
			return c.expectNoNewBackups(ctx, append(before, backupEntry{Key: src}))
		}),
	},
	{
		ID:      "BKP-UPLOAD-009",
		Source:  SourceStrongbox,
		Section: "§4.2 POST /api/backups/upload; §7 row 3; strongbox promise: a PocketBase archive is refused with the command that imports it",
		Name:    "upload of a PocketBase archive names the import command",
		Text: "POST /api/backups/upload of a zip holding data.db at its root and no manifest.json (a backup archive " +
			"PocketBase made) answers 400 \"" + msgGenericBad + "\" with data.file.code validation_invalid_backup and a " +
			"data.file.message that names `strongbox import pocketbase`, and the list gains no archive.",
		Run: backupsCheckSince(func(ctx context.Context, c *Client, before []backupEntry) error {
			name := newBackupName()
			c.cleanupBackup(name)
			data, err := pocketBaseArchive()
			if err != nil {
				return err
			}
			r, err := c.post(ctx, "/api/backups/upload", c.su, multipartFile(nil, "file", name, "application/zip", data))
			if err != nil {
				return err
			}
			env, err := expectError(r, http.StatusBadRequest, msgGenericBad)
			if err != nil {
				return err
			}
			fe, _ := getObject(env.data, "file")
			code, _ := getString(fe, "code")
			msg, _ := getString(fe, "message")
			if code != codeInvalidBackup || !strings.Contains(msg, "strongbox import pocketbase") {
				return Mismatch("data.file.code "+codeInvalidBackup+" with a message naming `strongbox import pocketbase`", r.String())
			}
			return c.expectNoNewBackups(ctx, before)
		}),
	},
	backupGuard("BKP-UPLOAD-005", "POST", "/api/backups/upload", false),
	backupGuard("BKP-UPLOAD-006", "POST", "/api/backups/upload", true),
}

// pocketBaseArchive returns a backup archive as PocketBase makes it: its
// data dir zipped, data.db and auxiliary.db at the root, no manifest.
func pocketBaseArchive() ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"data.db", "auxiliary.db"} {
		w, err := zw.Create(name)
		if err != nil {
			return nil, err
		}
		w.Write([]byte("SQLite format 3\x00")) // the database header's magic: enough to tell the archive
	}
	err := zw.Close()
	return buf.Bytes(), err
}
