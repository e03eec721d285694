package conformance

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// The violations of the backups API (backups.go), committed by mutations
// in front of the real strongbox.

var (
	bkAny    = under("", "/api/backups")
	bkList   = route(http.MethodGet, "/api/backups")
	bkCreate = route(http.MethodPost, "/api/backups")
	bkUpload = route(http.MethodPost, "/api/backups/upload")
)

// bkKey selects the requests of method on /api/backups/{key}.
func bkKey(methods ...string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		key, ok := strings.CutPrefix(r.URL.Path, "/api/backups/")
		return ok && key != "upload" && !strings.Contains(key, "/") && slices.Contains(methods, r.Method)
	}
}

var (
	bkDownload = bkKey(http.MethodGet, http.MethodHead)
	bkDelete   = bkKey(http.MethodDelete)
)

func bkRestore(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/api/backups/") && strings.HasSuffix(r.URL.Path, "/restore")
}

// noContent is a 204 with no body.
func noContent() *answered { return &answered{status: 204, header: http.Header{}} }

// bodyJSON returns the JSON object r carries (nil if none) and leaves the
// body to be read again.
func bodyJSON(r *http.Request) map[string]any {
	rewind(r)
	if r.Body == nil {
		return nil
	}
	b, _ := io.ReadAll(r.Body)
	rewind(r)
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

// setBody replaces the JSON body of r by m.
func setBody(r *http.Request, m map[string]any) {
	b, _ := json.Marshal(m)
	r.Body, r.ContentLength, r.GetBody = io.NopCloser(bytes.NewReader(b)), int64(len(b)), nil
	r.Header.Set("Content-Length", fmtInt(len(b)))
}

func fmtInt(n int) string { b, _ := json.Marshal(n); return string(b) }

// accept answers 204 to the requests match selects that strongbox refused
// with the validation code.
func accept(match func(*http.Request) bool, code string) mutation {
	return edit(match, func(_ *http.Request, res *answered) {
		if res.status == 400 && bytes.Contains(res.body, []byte(`"`+code+`"`)) {
			*res = *noContent()
		}
	})
}

// editList rewrites every entry of the backup list.
func editList(fn func(list []any)) mutation {
	return edit(bkList, func(_ *http.Request, res *answered) {
		if list, ok := res.json().([]any); ok {
			fn(list)
			res.setJSON(list)
		}
	})
}

// withFileToken sends a download strongbox refused again with a file token
// of the superuser, when match selects it.
func withFileToken(match func(*http.Request) bool) mutation {
	return when(both(bkDownload, match), func(x *front, w http.ResponseWriter, r *http.Request) {
		res := x.forward(r)
		if res.status == 401 || res.status == 403 {
			q := r.URL.Query()
			q.Set("token", x.fileToken())
			r.URL.RawQuery = q.Encode()
			res = x.forward(r)
		}
		res.write(w)
	})
}

var backupsMutators = []mutator{
	// The weekly keep is dropped from every settings change.
	{"keep-weekly-ignored", []string{"BKP-KEEP-001"}, rewrite(settingsPatch, func(r *http.Request) {
		if m := bodyJSON(r); m != nil {
			if b, ok := m["backups"].(map[string]any); ok {
				delete(b, "cronKeepWeekly")
				setBody(r, m)
			}
		}
	})},
	// A refused keep or checkCron is answered with the settings, as if taken.
	{"keep-accept-negative", []string{"BKP-KEEP-002"}, when(settingsPatch, func(x *front, w http.ResponseWriter, r *http.Request) {
		res := x.forward(r)
		if res.status == 400 && bytes.Contains(res.body, []byte(`"cronKeepDaily"`)) {
			get := r.Clone(r.Context())
			get.Method, get.Body, get.GetBody, get.ContentLength = http.MethodGet, nil, nil, 0
			res = x.forward(get)
		}
		res.write(w)
	})},
	// The stream's state is answered to guests too.
	{"stream-state-open", []string{"STREAM-001"}, when(route(http.MethodGet, "/api/backups/stream"), func(x *front, w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"enabled":false,"lastShipped":"","restorableFrom":"","restorableTo":"","lastError":"","lagMs":0}`))
			return
		}
		x.forward(r).write(w)
	})},
	// Continuous backup without the bucket is taken: the refusal is
	// answered with the settings.
	{"stream-without-bucket", []string{"STREAM-002"}, when(settingsPatch, func(x *front, w http.ResponseWriter, r *http.Request) {
		res := x.forward(r)
		if res.status == 400 && bytes.Contains(res.body, []byte(`"continuous"`)) {
			get := r.Clone(r.Context())
			get.Method, get.Body, get.GetBody, get.ContentLength = http.MethodGet, nil, nil, 0
			res = x.forward(get)
		}
		res.write(w)
	})},
	{"backups-list-descending", []string{"BKP-LIST-501"}, editList(slices.Reverse)},
	{"backups-modified-iso", []string{"BKP-LIST-001"}, editList(func(list []any) {
		for _, e := range list {
			if m, ok := e.(map[string]any); ok {
				m["modified"] = strings.Replace(m["modified"].(string), " ", "T", 1)
			}
		}
	})},
	{"backups-ignore-fields", []string{"BKP-LIST-002"}, editQuery(bkList, func(q url.Values) { q.Del("fields") })},
	{"backups-guest-403", []string{"BKP-LIST-003", "BKP-CREATE-008", "BKP-UPLOAD-005", "BKP-DEL-003", "BKP-RESTORE-002"},
		edit(bkAny, func(_ *http.Request, res *answered) {
			if res.status == 401 {
				*res = *envelopeAnswer(403, msgNotAllowed)
			}
		})},
	{"backups-list-reference-message", []string{"BKP-LIST-004"}, edit(bkList, func(_ *http.Request, res *answered) {
		if res.status == 403 {
			*res = *envelopeAnswer(403, msgNotAllowed)
		}
	})},
	{"backups-users-allowed", []string{"BKP-LIST-004", "BKP-CREATE-009", "BKP-UPLOAD-006", "BKP-DEL-004", "BKP-RESTORE-003"},
		asSuperuser(func(r *http.Request) bool { return bkAny(r) && !bkDownload(r) }, 403)},
	{"create-returns-200", []string{"BKP-CREATE-001", "BKP-CREATE-002"}, edit(bkCreate, func(r *http.Request, res *answered) {
		if res.status == 204 {
			name, _ := bodyJSON(r)["name"].(string)
			*res = answered{status: 200, header: http.Header{}}
			res.setJSON(map[string]any{"key": name})
		}
	})},
	{"create-requires-name", []string{"BKP-CREATE-002", "BKP-CREATE-007"}, answer(func(r *http.Request) bool {
		return bkCreate(r) && bodyJSON(r)["name"] == nil
	}, &answered{status: 400, header: http.Header{"Content-Type": {"application/json"}}, body: []byte(
		`{"data":{"name":{"code":"validation_required","message":"Cannot be blank."}},"message":"` + msgValidation + `","status":400}`)})},
	{"lax-backup-name", []string{"BKP-CREATE-003", "BKP-CREATE-004", "BKP-CREATE-010"}, accept(bkCreate, "validation_match_invalid")},
	{"no-length-check", []string{"BKP-CREATE-005"}, accept(bkCreate, "validation_length_out_of_range")},
	{"create-overwrites", []string{"BKP-CREATE-006"}, accept(bkCreate, "validation_backup_name_exists")},
	{"generated-names-collide", []string{"BKP-CREATE-007"}, rewrite(bkCreate, func(r *http.Request) {
		if m := bodyJSON(r); m == nil || m["name"] == nil || m["name"] == "" {
			setBody(r, map[string]any{"name": "pb_backup_fixed.zip"})
		}
	})},
	{"upload-trusts-extension", []string{"BKP-UPLOAD-001"}, accept(bkUpload, "validation_invalid_mime_type")},
	{"upload-missing-file-500", []string{"BKP-UPLOAD-002"}, edit(bkUpload, func(_ *http.Request, res *answered) {
		if res.status == 400 && bytes.Contains(res.body, []byte(`"validation_required"`)) {
			*res = *envelopeAnswer(500, msgGenericBad)
		}
	})},
	{"upload-overwrites", []string{"BKP-UPLOAD-003"}, accept(bkUpload, "validation_backup_name_exists")},
	{"upload-drops-file", []string{"BKP-UPLOAD-004"}, answer(bkUpload, noContent())},
	{"upload-keeps-unrestorable", []string{"BKP-UPLOAD-008"}, accept(bkUpload, "validation_invalid_backup")},
	{"upload-pocketbase-unexplained", []string{"BKP-UPLOAD-009"}, edit(bkUpload, func(_ *http.Request, res *answered) {
		res.body = bytes.ReplaceAll(res.body, []byte("strongbox import pocketbase"), []byte("a converter"))
	})},
	{"upload-accepts-raw", []string{"BKP-UPLOAD-007"}, answer(func(r *http.Request) bool {
		return bkUpload(r) && r.Header.Get("Content-Type") == "application/zip"
	}, noContent())},
	{"download-octet-stream", []string{"BKP-DL-501"}, edit(bkDownload, func(_ *http.Request, res *answered) {
		if res.status == 200 {
			res.header.Set("Content-Type", "application/octet-stream")
		}
	})},
	{"download-truncated", []string{"BKP-DL-001"}, edit(bkDownload, func(_ *http.Request, res *answered) {
		if res.status == 200 {
			res.body = res.body[:len(res.body)/2]
		}
	})},
	{"download-open", []string{"BKP-DL-002", "BKP-DL-003", "BKP-DL-008"}, withFileToken(func(*http.Request) bool { return true })},
	{"download-any-token", []string{"BKP-DL-004", "BKP-DL-005", "BKP-DL-006"}, withFileToken(has("token", ""))},
	{"download-unknown-400", []string{"BKP-DL-007"}, edit(bkDownload, func(_ *http.Request, res *answered) {
		if res.status == 404 {
			*res = *envelopeAnswer(400, msgGenericBad)
		}
	})},
	{"delete-keeps-file", []string{"BKP-DEL-001"}, answer(bkDelete, noContent())},
	{"delete-leaks-path", []string{"BKP-DEL-002"}, edit(bkDelete, func(r *http.Request, res *answered) {
		if m := res.object(); res.status == 400 && m != nil {
			m["message"] = m["message"].(string) + " Raw error: remove /srv/pb_data" + r.URL.Path + ": no such file or directory."
			res.setJSON(m)
		}
	})},
	{"restore-missing-204", []string{"BKP-RESTORE-001"}, edit(bkRestore, func(_ *http.Request, res *answered) {
		if res.status == 400 {
			*res = *noContent()
		}
	})},
	{"restore-noop", []string{"BKP-FULLRESTORE-001"}, answer(bkRestore, noContent())},
	{"encryption-identity-answered", []string{"BKP-ENC-001"}, edit(route(http.MethodGet, "/api/settings"), func(_ *http.Request, res *answered) {
		res.body = bytes.Replace(res.body, []byte(`"encryption":{`), []byte(`"encryption":{"identity":"`+encTestIdentity+`",`), 1)
	})},
	{"encryption-ignored", []string{"BKP-ENC-002"}, rewrite(route(http.MethodPatch, "/api/settings"), func(r *http.Request) {
		if m := bodyJSON(r); m != nil {
			if b, ok := m["backups"].(map[string]any); ok {
				if e, ok := b["encryption"].(map[string]any); ok && e["enabled"] == true {
					e["enabled"] = false
					setBody(r, m)
				}
			}
		}
	})},
}
