package conformance

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"
)

// The fake's backups (§4.2): archives are small zips kept in memory, each
// with a copy of the users collection's records as they were when it was
// made, which a restore puts back. Nothing restarts.

type fakeBackup struct {
	data     []byte
	modified time.Time
	users    map[string]*fakeRecord // nil for an upload
}

var reFakeBackupName = regexp.MustCompile(`^[a-z0-9_-]+\.zip$`)

func fakeBackupInvalid(msg, field, code, fieldMsg string) *fakeErr {
	return &fakeErr{status: 400, msg: msg, data: map[string]any{field: map[string]any{"code": code, "message": fieldMsg}}}
}

func (f *fakeServer) handleBackups(q *fakeReq) error {
	r := q.r
	rest := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/api/backups"), "/")
	parts := strings.Split(rest, "/")
	switch {
	case rest == "" && r.Method == "GET":
		return f.backupList(q)
	case rest == "" && r.Method == "POST":
		return f.backupCreate(q)
	case rest == "upload" && r.Method == "POST":
		return f.backupUpload(q)
	case len(parts) == 1 && (r.Method == "GET" || r.Method == "HEAD"):
		return f.backupDownload(q, parts[0])
	case len(parts) == 1 && r.Method == "DELETE":
		return f.backupDelete(q, parts[0])
	case len(parts) == 2 && parts[1] == "restore" && r.Method == "POST":
		return f.backupRestore(q, parts[0])
	}
	return ferr(404, msgNotFound)
}

// backupGuard refuses guests and non-superusers.
func (f *fakeServer) backupGuard(q *fakeReq, list bool) error {
	if q.auth == nil {
		if f.bug("backups-guest-403") {
			return ferr(403, msgNotAllowed)
		}
		return ferr(401, msgNeedsToken)
	}
	if q.authColl.name != "_superusers" && !f.bug("backups-users-allowed") {
		if list && !f.bug("backups-list-reference-message") {
			return ferr(403, msgOnlySuperusers)
		}
		return ferr(403, msgNotAllowed)
	}
	return nil
}

func (f *fakeServer) backupList(q *fakeReq) error {
	if err := f.backupGuard(q, true); err != nil {
		return err
	}
	type entry struct {
		Modified string `json:"modified"`
		Key      string `json:"key"`
		Size     int    `json:"size"`
	}
	keys := make([]string, 0, len(f.backups))
	for k := range f.backups {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if f.bug("backups-list-descending") || f.bug("document-readings") {
		slices.Reverse(keys)
	}
	list := make([]entry, 0, len(keys))
	for _, k := range keys {
		b := f.backups[k]
		modified := b.modified.UTC().Format("2006-01-02 15:04:05.000Z")
		if f.bug("backups-modified-iso") {
			modified = b.modified.UTC().Format("2006-01-02T15:04:05.000Z")
		}
		list = append(list, entry{Modified: modified, Key: k, Size: len(b.data)})
	}
	if f.bug("backups-ignore-fields") {
		q.w.Header().Set("Content-Type", "application/json")
		q.w.WriteHeader(200)
		q.status = 200
		return json.NewEncoder(q.w).Encode(list)
	}
	return q.json(200, list)
}

func (f *fakeServer) backupCreate(q *fakeReq) error {
	if err := f.backupGuard(q, false); err != nil {
		return err
	}
	body, err := readBody(q.r)
	if err != nil {
		return err
	}
	name, ok := body["name"].(string)
	if !ok && body["name"] != nil {
		return ferr(400, "An error occurred while loading the submitted data.")
	}
	switch {
	case name == "" && f.bug("create-requires-name"):
		return fakeBackupInvalid(msgValidation, "name", "validation_required", "Cannot be blank.")
	case name == "" && f.bug("generated-names-collide"):
		name = "pb_backup_fixed.zip"
	case name == "":
		base := "pb_backup_" + time.Now().UTC().Format("20060102150405")
		name = base + ".zip"
		for i := 2; f.backups[name] != nil; i++ {
			name = fmt.Sprintf("%s_%d.zip", base, i)
		}
	case len(name) > 150 && !f.bug("no-length-check"):
		return fakeBackupInvalid(msgValidation, "name", "validation_length_out_of_range", "The length must be between 1 and 150.")
	case !reFakeBackupName.MatchString(name) && !f.bug("lax-backup-name"):
		return fakeBackupInvalid(msgValidation, "name", "validation_match_invalid", "Must be in a valid format.")
	case f.backups[name] != nil && !f.bug("create-overwrites"):
		return fakeBackupInvalid(msgValidation, "name", "validation_backup_name_exists", "The backup file name is invalid or already exists.")
	}
	users := map[string]*fakeRecord{}
	for id, rec := range f.collection("users").records {
		users[id] = rec
	}
	f.backups[name] = &fakeBackup{data: fakeZip(name + newNonce(8)), modified: time.Now(), users: users}
	if f.bug("create-returns-200") {
		return q.json(200, map[string]any{"key": name})
	}
	return q.nullSuccess()
}

// fakeZip is a zip of one entry holding content.
func fakeZip(content string) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.Create("data.json")
	io.WriteString(w, `{"content":"`+content+`"}`)
	zw.Close()
	return b.Bytes()
}

func (f *fakeServer) backupUpload(q *fakeReq) error {
	if err := f.backupGuard(q, false); err != nil {
		return err
	}
	if f.bug("upload-accepts-raw") && q.r.Header.Get("Content-Type") == "application/zip" {
		data, _ := io.ReadAll(q.r.Body)
		f.backups["cf_raw_"+newNonce(6)+".zip"] = &fakeBackup{data: data, modified: time.Now()}
		return q.nullSuccess()
	}
	var data []byte
	name := ""
	if err := q.r.ParseMultipartForm(1 << 20); err == nil {
		defer q.r.MultipartForm.RemoveAll()
		if fhs := q.r.MultipartForm.File["file"]; len(fhs) > 0 {
			fd, err := fhs[0].Open()
			if err == nil {
				data, _ = io.ReadAll(fd)
				fd.Close()
				name = fhs[0].Filename
			}
		}
	}
	switch {
	case name == "" && f.bug("upload-missing-file-500"):
		return ferr(500, msgGenericBad)
	case name == "":
		return fakeBackupInvalid(msgGenericBad, "file", "validation_required", "Cannot be blank.")
	case !bytes.HasPrefix(data, []byte("PK\x03\x04")) && !bytes.HasPrefix(data, []byte("PK\x05\x06")) &&
		!(f.bug("upload-trusts-extension") && strings.HasSuffix(name, ".zip")):
		return fakeBackupInvalid(msgGenericBad, "file", "validation_invalid_mime_type", `"`+name+`" mime type must be one of: application/zip.`)
	case f.backups[name] != nil && !f.bug("upload-overwrites"):
		return fakeBackupInvalid(msgGenericBad, "file", "validation_backup_name_exists", "Backup file with the specified name already exists.")
	}
	if !f.bug("upload-drops-file") {
		f.backups[name] = &fakeBackup{data: data, modified: time.Now()}
	}
	return q.nullSuccess()
}

func (f *fakeServer) backupDownload(q *fakeReq, key string) error {
	if !f.bug("download-open") {
		rec, c := f.loadAuth(q.r.URL.Query().Get("token"), "file")
		if rec == nil || c.name != "_superusers" && !f.bug("download-any-file-token") {
			return ferr(403, msgFileForbidden)
		}
	}
	b := f.backups[key]
	if b == nil {
		if f.bug("download-unknown-400") {
			return ferr(400, msgGenericBad)
		}
		return ferr(404, msgNotFound)
	}
	ct := "application/zip"
	if f.bug("download-octet-stream") || f.bug("document-readings") {
		ct = "application/octet-stream"
	}
	q.w.Header().Set("Content-Type", ct)
	if !f.bug("document-readings") {
		q.w.Header().Set("Content-Disposition", "attachment; filename="+key)
	}
	data := b.data
	if f.bug("download-truncated") {
		data = data[:len(data)/2]
	}
	http.ServeContent(q.w, q.r, "", b.modified, bytes.NewReader(data))
	q.status = 200
	return nil
}

func (f *fakeServer) backupDelete(q *fakeReq, key string) error {
	if err := f.backupGuard(q, false); err != nil {
		return err
	}
	if f.backups[key] == nil {
		if f.bug("delete-leaks-path") {
			return ferr(400, msgBackupDeleteMissing+" Raw error: remove /srv/pb_data/backups/"+key+": no such file or directory.")
		}
		return ferr(400, msgBackupDeleteMissing)
	}
	if !f.bug("delete-keeps-file") {
		delete(f.backups, key)
	}
	return q.nullSuccess()
}

func (f *fakeServer) backupRestore(q *fakeReq, key string) error {
	if err := f.backupGuard(q, false); err != nil {
		return err
	}
	b := f.backups[key]
	if b == nil && !f.bug("restore-missing-204") {
		return ferr(400, msgBackupMissing)
	}
	if b != nil && b.users != nil && !f.bug("restore-noop") {
		users := map[string]*fakeRecord{}
		for id, rec := range b.users {
			users[id] = rec
		}
		f.collection("users").records = users
	}
	return q.nullSuccess()
}

// nullSuccess answers a backup operation whose success body §4.2 calls
// null: 204 with no body as PocketBase does, or, under another reading the
// document allows (bug document-readings), 200 with the JSON null.
func (q *fakeReq) nullSuccess() error {
	if q.f.bug("document-readings") {
		q.w.Header().Set("Content-Type", "application/json")
		q.w.WriteHeader(200)
		q.status = 200
		q.w.Write([]byte("null"))
		return nil
	}
	q.w.WriteHeader(204)
	q.status = 204
	return nil
}
