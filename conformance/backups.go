package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"regexp"
	"slices"
	"strings"
)

// Backups: §2.1, §3, §4.2, §5.10, §7 and §8. Where the document is silent
// (validation codes of a name, the delete of a missing archive) the checks
// follow PocketBase v0.31.0, and do better where it has a defect: no
// archive is overwritten by a concurrent create, and no error names a
// server path. The checks live in one file per route (backups_list.go,
// backups_create.go, backups_upload.go, backups_download.go,
// backups_delete.go, backups_restore.go); this file holds what they share.
//
// Every archive a check creates has a unique name starting with "cf_" and
// is deleted afterwards. The checks that need the backup storage are
// skipped on a server that answers the list with §7 row 1's 400 (its
// storage cannot be loaded): there is nothing to check there but that
// message.

const (
	msgBackupsLoad         = "Failed to load backups filesystem."
	msgBackupBusy          = "Try again later - another backup/restore process has already been started."
	msgFileForbidden       = "Insufficient permissions to access the resource."
	msgBackupMissing       = "Missing or invalid backup file."
	msgBackupDeleteMissing = "Invalid or already deleted backup file."
	codeInvalidMIME        = "validation_invalid_mime_type"       // the only code §4.2 and §7 name
	msgFilesystemInit      = "Filesystem initialization failure." // §7 row 5; no check provokes it yet
)

// reBackupModified is the format of a backup entry's modified (§2.1).
var reBackupModified = regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// reBackupName is the name format of §8.
var reBackupName = regexp.MustCompile(`^[a-z0-9_-]+\.zip$`)

// backupEntry is a decoded §2.1 backup entry.
type backupEntry struct {
	Key      string
	Modified string
	Size     float64
}

// newBackupName returns a unique valid archive name.
func newBackupName() string { return "cf_" + newNonce(12) + ".zip" }

// requireBackups skips the check when the server cannot load its backup
// storage (GET /api/backups answers §7 row 1's 400). The answer is asked
// once per run.
func (c *Client) requireBackups(ctx context.Context) error {
	c.shared.backupsMu.Lock()
	defer c.shared.backupsMu.Unlock()
	if !c.shared.backupsDone {
		r, err := c.get(ctx, "/api/backups", c.su)
		if err != nil {
			return err
		}
		c.shared.backupsDone = true
		if r.status == http.StatusBadRequest {
			if env, err := parseEnvelope(r); err == nil && env.message == msgBackupsLoad {
				c.shared.backupsErr = Skipf("the server cannot load its backup storage (GET /api/backups answers 400 %q, §7 row 1)", msgBackupsLoad)
			}
		}
	}
	return c.shared.backupsErr
}

// listBackups returns the backup list, which must be 200 with an array of
// entries of exactly the keys of §2.1 with their types.
func (c *Client) listBackups(ctx context.Context) ([]backupEntry, error) {
	r, err := c.get(ctx, "/api/backups", c.su)
	if err != nil {
		return nil, err
	}
	return parseBackupList(r)
}

func parseBackupList(r *response) ([]backupEntry, error) {
	if err := expectStatus(r, http.StatusOK); err != nil {
		return nil, err
	}
	var raw []map[string]any
	if err := json.Unmarshal(r.body, &raw); err != nil || raw == nil {
		return nil, Mismatch("a JSON array of backup entries (never null)", r.String())
	}
	list := make([]backupEntry, 0, len(raw))
	for _, m := range raw {
		key, okKey := getString(m, "key")
		mod, okMod := getString(m, "modified")
		size, okSize := getNumber(m, "size")
		if len(m) != 3 || !okKey || !okMod || !okSize {
			return nil, Mismatch("entries of exactly {key: string, modified: string, size: number}", jsonText(m))
		}
		if !reBackupModified.MatchString(mod) {
			return nil, Mismatch("modified formatted YYYY-MM-DD HH:MM:SS.mmmZ", jsonText(m))
		}
		if size < 0 || size != float64(int64(size)) {
			return nil, Mismatch("size a non-negative integer", jsonText(m))
		}
		list = append(list, backupEntry{Key: key, Modified: mod, Size: size})
	}
	return list, nil
}

// findBackup returns the entry of key in list.
func findBackup(list []backupEntry, key string) (backupEntry, bool) {
	for _, e := range list {
		if e.Key == key {
			return e, true
		}
	}
	return backupEntry{}, false
}

// createBackup creates the archive name as a fixture and registers its
// deletion.
func (c *Client) createBackup(ctx context.Context, name string) error {
	r, err := c.postBackup(ctx, name)
	if err != nil {
		return fmt.Errorf("fixture: create backup: %w", err)
	}
	if !nullSuccess(r, false) {
		return fmt.Errorf("fixture: create backup %s: expected success with a null body, got %s", name, r)
	}
	return nil
}

// postBackup sends POST /api/backups {name} as superuser, having
// registered the deletion of name should the server create it.
func (c *Client) postBackup(ctx context.Context, name string) (*response, error) {
	c.cleanupBackup(name)
	return c.post(ctx, "/api/backups", c.su, map[string]string{"name": name})
}

// nullSuccess reports whether r is the success §4.2 describes as "body is
// null": 204 with no body (PocketBase's reading, the only one when strict),
// or 200 with a body of JSON null or nothing.
func nullSuccess(r *response, strict bool) bool {
	if r.status == http.StatusNoContent && len(r.body) == 0 {
		return true
	}
	b := bytes.TrimSpace(r.body)
	return !strict && r.status == http.StatusOK && (len(b) == 0 || string(b) == "null")
}

// expectNullSuccess requires r to be a success with a null body
// (nullSuccess), 204 with no body under PocketBase's readings.
func (c *Client) expectNullSuccess(r *response) error {
	if nullSuccess(r, c.strict()) {
		return nil
	}
	if c.strict() {
		return Mismatch("204 with no body", r.String())
	}
	return Mismatch("204 with no body, or 200 with a null body", r.String())
}

// cleanupBackup registers the deletion of the archive key, which may not
// exist (any more) by then.
func (c *Client) cleanupBackup(key string) {
	c.Cleanup("delete backup "+key, func(ctx context.Context) error {
		r, err := c.do(ctx, http.MethodDelete, "/api/backups/"+seg(key), c.su, nil)
		if err != nil {
			return err
		}
		if nullSuccess(r, false) || r.status == http.StatusBadRequest && !c.hasBackup(ctx, key) {
			return nil
		}
		return fmt.Errorf("delete backup %s: %s", key, r)
	})
}

// hasBackup reports whether the list holds key (false if it cannot be read).
func (c *Client) hasBackup(ctx context.Context, key string) bool {
	list, err := c.listBackups(ctx)
	if err != nil {
		return false
	}
	_, ok := findBackup(list, key)
	return ok
}

// downloadBackup fetches the archive key with a fresh superuser file token.
func (c *Client) downloadBackup(ctx context.Context, key string) ([]byte, error) {
	ft, err := c.fileToken(ctx, c.su)
	if err != nil {
		return nil, err
	}
	r, err := c.get(ctx, "/api/backups/"+seg(key)+"?token="+ft, "")
	if err != nil {
		return nil, err
	}
	if r.status != http.StatusOK {
		return nil, fmt.Errorf("fixture: download backup %s: expected 200, got %s", key, r)
	}
	return r.body, nil
}

// multipartFile is a multipart/form-data body holding fields and, when
// fileName is not "", one file in field.
func multipartFile(fields map[string]string, field, fileName, contentType string, data []byte) rawBody {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	if fileName != "" {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, field, fileName))
		h.Set("Content-Type", contentType)
		w, _ := mw.CreatePart(h)
		w.Write(data)
	}
	mw.Close()
	return rawBody{contentType: mw.FormDataContentType(), data: b.Bytes()}
}

// expectFieldError requires a 400 with message and data.<field>.code.
// A non-empty msgSuffix must end data.<field>.message. Under the
// document's reading (response.strict false) a code §7 does not name may be
// any code, and the message of validation_invalid_mime_type need only name
// application/zip.
func expectFieldError(r *response, message, field, code, msgSuffix string) error {
	env, err := expectError(r, http.StatusBadRequest, message)
	if err != nil {
		return err
	}
	fe, _ := getObject(env.data, field)
	got, _ := getString(fe, "code")
	fm, isString := getString(fe, "message")
	if !r.strict && code != codeInvalidMIME {
		// §7 names no other code: a validation error of the field is
		// all the document fixes.
		if got == "" || !isString {
			return Mismatch(fmt.Sprintf("data.%s {code, message}", field), r.String())
		}
		return nil
	}
	if !r.strict && code == codeInvalidMIME && got == code && strings.Contains(fm, "application/zip") {
		return nil // §4.2: the message states the allowed type, in words of the server's own
	}
	if got != code || !strings.HasSuffix(fm, msgSuffix) {
		want := fmt.Sprintf("data.%s.code %q", field, code)
		if msgSuffix != "" {
			want += fmt.Sprintf(" with a message ending %q", msgSuffix)
		}
		return Mismatch(want, r.String())
	}
	return nil
}

// backupGuard builds a 401 (asUser false) or 403 requirement for one
// backup endpoint. The list refuses users with msgOnlySuperusers (§7 row
// 7), the others with msgNotAllowed (§7 row 8).
func backupGuard(id, method, path string, asUser bool) *Requirement {
	endpoint := method + " " + path
	f := refusalOf(asUser)
	if asUser && endpoint == "GET /api/backups" {
		f.msg, f.row = msgOnlySuperusers, "§7 row 7"
	}
	return &Requirement{
		ID:      id,
		Source:  SourceDocument,
		Section: "§4.2 " + endpoint + ", Errors; §5.10; " + f.row,
		Name:    f.name(endpoint),
		Text:    fmt.Sprintf("%s %s answers %d %q, and changes nothing.", endpoint, f.who, f.status, f.msg),
		Run: func(ctx context.Context, c *Client) error {
			auth, err := f.token(ctx, c)
			if err != nil {
				return err
			}
			p := strings.ReplaceAll(path, "{key}", "cf_"+newNonce(12)+".zip")
			var body any
			switch {
			case strings.HasSuffix(path, "/upload"):
				body = multipartFile(nil, "file", newBackupName(), "application/zip", []byte("PK\x05\x06"+strings.Repeat("\x00", 18)))
			case method == http.MethodPost:
				name := newBackupName()
				c.cleanupBackup(name) // in case the server creates it anyway
				body = map[string]string{"name": name}
			}
			r, err := c.do(ctx, method, p, auth, body)
			if err != nil {
				return err
			}
			_, err = expectError(r, f.status, f.msg)
			return err
		},
	}
}

// backupsCheck is the Run of a check that needs the backup storage: it
// skips where requireBackups says so, and runs f otherwise.
func backupsCheck(f func(ctx context.Context, c *Client) error) func(context.Context, *Client) error {
	return func(ctx context.Context, c *Client) error {
		if err := c.requireBackups(ctx); err != nil {
			return err
		}
		return f(ctx, c)
	}
}

// backupsCheckOn is backupsCheck for a check on one existing archive: it
// creates a new one (createBackup) and passes f its key.
func backupsCheckOn(f func(ctx context.Context, c *Client, key string) error) func(context.Context, *Client) error {
	return backupsCheck(func(ctx context.Context, c *Client) error {
		key := newBackupName()
		if err := c.createBackup(ctx, key); err != nil {
			return err
		}
		return f(ctx, c, key)
	})
}

// backupsCheckSince is backupsCheck for a check that compares the list
// with what it held before (newBackups, expectNoNewBackups): it passes f
// the list as it was when the check began.
func backupsCheckSince(f func(ctx context.Context, c *Client, before []backupEntry) error) func(context.Context, *Client) error {
	return backupsCheck(func(ctx context.Context, c *Client) error {
		before, err := c.listBackups(ctx)
		if err != nil {
			return err
		}
		return f(ctx, c, before)
	})
}

// backupRequirements is every backup check, route by route, each in its
// own file (backups_list.go … backups_restore.go).
var backupRequirements = slices.Concat(
	backupsListRequirements,
	backupsCreateRequirements,
	backupsUploadRequirements,
	backupsDownloadRequirements,
	backupsDeleteRequirements,
	backupsRestoreRequirements,
	backupsEncryptionRequirements,
)

// newBackups returns the keys listed now that before did not hold, and
// registers their deletion.
func (c *Client) newBackups(ctx context.Context, before []backupEntry) ([]string, error) {
	after, err := c.listBackups(ctx)
	if err != nil {
		return nil, err
	}
	var added []string
	for _, e := range after {
		if _, ok := findBackup(before, e.Key); !ok {
			added = append(added, e.Key)
			c.cleanupBackup(e.Key)
		}
	}
	return added, nil
}

// expectArchiveUnchanged requires the archive key to download as want: a
// refused create or upload under its name left it as it was.
func (c *Client) expectArchiveUnchanged(ctx context.Context, key string, want []byte) error {
	got, err := c.downloadBackup(ctx, key)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return Mismatch("the existing archive unchanged", "its content changed")
	}
	return nil
}

// expectNoNewBackups requires the list to hold no archive that before
// lacks (any there is, is deleted afterwards).
func (c *Client) expectNoNewBackups(ctx context.Context, before []backupEntry) error {
	added, err := c.newBackups(ctx, before)
	if err != nil {
		return err
	}
	if len(added) != 0 {
		return Mismatch("no new archive", fmt.Sprint(added))
	}
	return nil
}
