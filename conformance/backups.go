package conformance

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Backups: §2.1, §3, §4.2, §5.10, §7 and §8. Where the document is silent
// (validation codes of a name, the delete of a missing archive) the checks
// follow the reference (pocketbase-backups-logs-filter.md §1), and do
// better where it has a defect: no archive is overwritten by a concurrent
// create, and no error names a server path.
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
	c.cleanupBackup(name)
	r, err := c.post(ctx, "/api/backups", c.su, map[string]string{"name": name})
	if err != nil {
		return fmt.Errorf("fixture: create backup: %w", err)
	}
	if !nullSuccess(r, false) {
		return fmt.Errorf("fixture: create backup %s: expected success with a null body, got %s", name, r)
	}
	return nil
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
	name, status, msg, row, who := endpoint+" without a token", 401, msgNeedsToken, "§7 row 6", "without Authorization"
	if asUser {
		msg, row = msgNotAllowed, "§7 row 8"
		if endpoint == "GET /api/backups" {
			msg, row = msgOnlySuperusers, "§7 row 7"
		}
		name, status, who = endpoint+" as a regular user", 403, "with a regular user's token"
	}
	return &Requirement{
		ID:      id,
		Source:  SourceDocument,
		Section: "§4.2 " + endpoint + ", Errors; §5.10; " + row,
		Name:    name,
		Text:    fmt.Sprintf("%s %s answers %d %q, and changes nothing.", endpoint, who, status, msg),
		Run: func(ctx context.Context, c *Client) error {
			auth := ""
			if asUser {
				_, tok, err := c.newUserToken(ctx)
				if err != nil {
					return err
				}
				auth = tok
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
			_, err = expectError(r, status, msg)
			return err
		},
	}
}

// downloadRefused builds a requirement that a download with the token (and
// Authorization header) that tok returns is refused with 403.
func downloadRefused(id, name, what string, tok func(ctx context.Context, c *Client) (query, header string, err error)) *Requirement {
	return &Requirement{
		ID:      id,
		Source:  SourcePocketBase,
		Section: "§4.2 GET /api/backups/{key}; §5.10; reference (the document names no status for a refused download)",
		Name:    "download " + name,
		Text: fmt.Sprintf("GET /api/backups/{key} of an existing archive %s answers 403 %q: only a superuser file token "+
			"in the query parameter token grants the download.", what, msgFileForbidden),
		Run: func(ctx context.Context, c *Client) error {
			if err := c.requireBackups(ctx); err != nil {
				return err
			}
			key := newBackupName()
			if err := c.createBackup(ctx, key); err != nil {
				return err
			}
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
		},
	}
}

var backupRequirements = []*Requirement{
	// ---- list ----
	{
		ID:      "BKP-LIST-001",
		Source:  SourceDocument,
		Section: "§4.2 GET /api/backups; §2.1",
		Name:    "backup list shape and order",
		Text: "GET /api/backups as superuser answers 200 with a JSON array (never null) of entries with exactly " +
			"key (string, the archive's name), modified (string YYYY-MM-DD HH:MM:SS.mmmZ) and size (integer), " +
			"in any order; archives just created are listed with their sizes.",
		Run: func(ctx context.Context, c *Client) error {
			if err := c.requireBackups(ctx); err != nil {
				return err
			}
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
		},
	},
	{
		ID:      "BKP-LIST-002",
		Source:  SourceDocument,
		Section: "§4.1; §4.2 GET /api/backups",
		Name:    "backup list fields",
		Text:    "GET /api/backups?fields=key answers 200 with an array whose every entry has exactly the key key.",
		Run: func(ctx context.Context, c *Client) error {
			if err := c.requireBackups(ctx); err != nil {
				return err
			}
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
		},
	},
	backupGuard("BKP-LIST-003", "GET", "/api/backups", false),
	backupGuard("BKP-LIST-004", "GET", "/api/backups", true),

	// ---- create ----
	{
		ID:      "BKP-CREATE-001",
		Source:  SourceDocument,
		Section: "§4.2 POST /api/backups",
		Name:    "create a named backup",
		Text: "POST /api/backups {name} with a valid unused name answers success with a null body (204 with no body, " +
			"or 200 with null), and the list then holds that key.",
		Run: func(ctx context.Context, c *Client) error {
			if err := c.requireBackups(ctx); err != nil {
				return err
			}
			name := newBackupName()
			c.cleanupBackup(name)
			r, err := c.post(ctx, "/api/backups", c.su, map[string]string{"name": name})
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
		},
	},
	{
		ID:      "BKP-CREATE-002",
		Source:  SourceDocument,
		Section: "§4.2 POST /api/backups; §8",
		Name:    "create with a generated name",
		Text: "POST /api/backups with no body answers success with a null body (204 with no body, or 200 with null), " +
			"and one new archive appears whose key matches [a-z0-9_-]+.zip.",
		Run: func(ctx context.Context, c *Client) error {
			if err := c.requireBackups(ctx); err != nil {
				return err
			}
			before, err := c.listBackups(ctx)
			if err != nil {
				return err
			}
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
		},
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
		Section: "§4.2 POST /api/backups; §8 (name format); validation code: reference",
		Name:    "create refuses an existing name",
		Text: "POST /api/backups {name} naming an existing archive answers 400 \"" + msgValidation + "\" with data.name.code " +
			"validation_backup_name_exists, and the archive is unchanged.",
		Run: func(ctx context.Context, c *Client) error {
			if err := c.requireBackups(ctx); err != nil {
				return err
			}
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
		},
	},
	{
		ID:      "BKP-CREATE-010",
		Source:  SourceDocument,
		Section: "§4.2 POST /api/backups (name format); §8; §2.5 (per-field validation errors)",
		Name:    "create refuses names outside the format",
		Text: "POST /api/backups with a name outside [a-z0-9_-].zip (capital letters, no .zip, a dot before .zip, " +
			"a space, a path) answers 400 in the envelope with data.name {code, message} (any code and message: " +
			"the document names none; BKP-CREATE-003 and 004 demand PocketBase's), and creates nothing.",
		Run: func(ctx context.Context, c *Client) error {
			if err := c.requireBackups(ctx); err != nil {
				return err
			}
			before, err := c.listBackups(ctx)
			if err != nil {
				return err
			}
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
		},
	},
	{
		ID:      "BKP-CREATE-007",
		Source:  SourceDocument,
		Section: "§3 rule 1; §4.2 POST /api/backups; §7 row 2; §8",
		Name:    "concurrent creates, one at a time",
		Text: "Of three POST /api/backups sent at once, each answers success (204, or 200 with null) or 400 \"" +
			msgBackupBusy + "\", at least one succeeds, and each success leaves an archive of its own: none is overwritten.",
		Run: func(ctx context.Context, c *Client) error {
			if err := c.requireBackups(ctx); err != nil {
				return err
			}
			before, err := c.listBackups(ctx)
			if err != nil {
				return err
			}
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
		},
	},
	backupGuard("BKP-CREATE-008", "POST", "/api/backups", false),
	backupGuard("BKP-CREATE-009", "POST", "/api/backups", true),

	// ---- upload ----
	{
		ID:      "BKP-UPLOAD-001",
		Source:  SourceDocument,
		Section: "§4.2 POST /api/backups/upload; §7 row 3; §8",
		Name:    "upload refuses what is not a zip",
		Text: "POST /api/backups/upload with a file named .zip and sent as application/zip whose content is text answers " +
			"400 \"" + msgGenericBad + "\" with data.file.code validation_invalid_mime_type and a message ending " +
			"\"mime type must be one of: application/zip.\", and stores nothing.",
		Run: func(ctx context.Context, c *Client) error {
			if err := c.requireBackups(ctx); err != nil {
				return err
			}
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
		},
	},
	{
		ID:      "BKP-UPLOAD-002",
		Source:  SourceDocument,
		Section: "§4.2 POST /api/backups/upload; §7 row 3",
		Name:    "upload without a file",
		Text: "POST /api/backups/upload with a multipart body that has no file answers 400 \"" + msgGenericBad +
			"\" with data.file.code validation_required.",
		Run: func(ctx context.Context, c *Client) error {
			if err := c.requireBackups(ctx); err != nil {
				return err
			}
			r, err := c.post(ctx, "/api/backups/upload", c.su, multipartFile(map[string]string{"other": "x"}, "", "", "", nil))
			if err != nil {
				return err
			}
			return expectFieldError(r, msgGenericBad, "file", "validation_required", "")
		},
	},
	{
		ID:      "BKP-UPLOAD-007",
		Source:  SourceDocument,
		Section: "§4.2 POST /api/backups/upload (multipart/form-data only); §7 row 3; §8 (upload content type)",
		Name:    "upload refuses a body that is not multipart",
		Text: "POST /api/backups/upload with a zip archive sent as the raw body (application/zip), and with a JSON body " +
			"{\"file\": <the archive in base64>}, answers 400 \"" + msgGenericBad + "\" with data.file {code, message} " +
			"(PocketBase: validation_required), and the list gains no archive.",
		Run: func(ctx context.Context, c *Client) error {
			if err := c.requireBackups(ctx); err != nil {
				return err
			}
			before, err := c.listBackups(ctx)
			if err != nil {
				return err
			}
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
		},
	},
	{
		ID:      "BKP-UPLOAD-003",
		Source:  SourceDocument,
		Section: "§4.2 POST /api/backups/upload; §7 row 3",
		Name:    "upload refuses an existing name",
		Text: "POST /api/backups/upload of a valid archive under the name of an existing one answers 400 \"" + msgGenericBad +
			"\" with data.file.code validation_backup_name_exists, and the existing archive is unchanged.",
		Run: func(ctx context.Context, c *Client) error {
			if err := c.requireBackups(ctx); err != nil {
				return err
			}
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
		},
	},
	{
		ID:      "BKP-UPLOAD-004",
		Source:  SourceDocument,
		Section: "§4.2 POST /api/backups/upload",
		Name:    "upload stores an archive",
		Text: "POST /api/backups/upload of an archive the server made, under a new valid name, answers success " +
			"with a null body (204 with no body, or 200 with null); " +
			"the list then holds that name with the uploaded size, and its download gives the same bytes.",
		Run: func(ctx context.Context, c *Client) error {
			if err := c.requireBackups(ctx); err != nil {
				return err
			}
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
		},
	},
	backupGuard("BKP-UPLOAD-005", "POST", "/api/backups/upload", false),
	backupGuard("BKP-UPLOAD-006", "POST", "/api/backups/upload", true),

	// ---- download ----
	{
		ID:      "BKP-DL-001",
		Source:  SourceDocument,
		Section: "§4.2 GET /api/backups/{key}; §5.10",
		Name:    "download with a superuser file token",
		Text: "GET /api/backups/{key}?token=<superuser file token> answers 200 with the archive's bytes " +
			"(a zip of the listed size).",
		Run: func(ctx context.Context, c *Client) error {
			if err := c.requireBackups(ctx); err != nil {
				return err
			}
			key := newBackupName()
			if err := c.createBackup(ctx, key); err != nil {
				return err
			}
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
		},
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
		Run: func(ctx context.Context, c *Client) error {
			if err := c.requireBackups(ctx); err != nil {
				return err
			}
			key := newBackupName()
			if err := c.createBackup(ctx, key); err != nil {
				return err
			}
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
		},
	},
	{
		ID:      "BKP-DL-007",
		Source:  SourceDocument,
		Section: "§4.2 GET /api/backups/{key}; §7 row 9",
		Name:    "download of an unknown key",
		Text:    "GET /api/backups/{key} of a key no archive has, with a superuser file token, answers 404 \"" + msgNotFound + "\".",
		Run: func(ctx context.Context, c *Client) error {
			if err := c.requireBackups(ctx); err != nil {
				return err
			}
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
		},
	},

	// ---- delete ----
	{
		ID:      "BKP-DEL-001",
		Source:  SourceDocument,
		Section: "§4.2 DELETE /api/backups/{key}",
		Name:    "delete a backup",
		Text: "DELETE /api/backups/{key} of an existing archive answers success with a null body (204 with no body, " +
			"or 200 with null), and the list no longer holds it.",
		Run: func(ctx context.Context, c *Client) error {
			if err := c.requireBackups(ctx); err != nil {
				return err
			}
			key := newBackupName()
			if err := c.createBackup(ctx, key); err != nil {
				return err
			}
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
		},
	},
	{
		ID:      "BKP-DEL-002",
		Source:  SourceStrongbox,
		Section: "§4.2 DELETE /api/backups/{key} (message not shown: reference); strongbox promise: the message names no server path (a reference defect)",
		Name:    "delete of a missing backup",
		Text: "DELETE /api/backups/{key} of a key no archive has answers 400 with a message starting \"" + msgBackupDeleteMissing +
			"\" that names no path on the server (no '/').",
		Run: func(ctx context.Context, c *Client) error {
			if err := c.requireBackups(ctx); err != nil {
				return err
			}
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
		},
	},
	backupGuard("BKP-DEL-003", "DELETE", "/api/backups/{key}", false),
	backupGuard("BKP-DEL-004", "DELETE", "/api/backups/{key}", true),

	// ---- restore ----
	{
		ID:      "BKP-RESTORE-001",
		Source:  SourcePocketBase,
		Section: "§4.2 POST /api/backups/{key}/restore (message not shown: reference)",
		Name:    "restore of a missing backup",
		Text:    "POST /api/backups/{key}/restore of a key no archive has answers 400 \"" + msgBackupMissing + "\", and the server goes on.",
		Run: func(ctx context.Context, c *Client) error {
			if err := c.requireBackups(ctx); err != nil {
				return err
			}
			r, err := c.post(ctx, "/api/backups/"+seg(newBackupName())+"/restore", c.su, nil)
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusBadRequest, msgBackupMissing)
			return err
		},
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

// backupNameReq builds a requirement that POST /api/backups refuses name
// with the validation code and message of the reference (§1.4).
func backupNameReq(id, what, name, code, message string) *Requirement {
	return &Requirement{
		ID:      id,
		Source:  SourcePocketBase,
		Section: "§4.2 POST /api/backups; §8 (name format); validation code: reference",
		Name:    "create refuses " + what,
		Text: fmt.Sprintf("POST /api/backups with %s answers 400 %q with data.name {code %s, message %q}, and creates nothing.",
			what, msgValidation, code, message),
		Run: func(ctx context.Context, c *Client) error {
			if err := c.requireBackups(ctx); err != nil {
				return err
			}
			c.cleanupBackup(name)
			r, err := c.post(ctx, "/api/backups", c.su, map[string]string{"name": name})
			if err != nil {
				return err
			}
			return expectFieldError(r, msgValidation, "name", code, message)
		},
	}
}

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
			return Mismatch(fmt.Sprintf("within %v, health 200 with record %s present and %s gone", c.opts.restartTimeout, kept, dropped), last)
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
