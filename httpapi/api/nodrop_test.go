package api

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// part is one part of a multipart body: a file part when file is set.
type part struct{ name, value, file string }

func multipartParts(t *testing.T, parts ...part) (string, *bytes.Buffer) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, p := range parts {
		if p.file == "" {
			mw.WriteField(p.name, p.value)
			continue
		}
		fw, err := mw.CreateFormFile(p.name, p.file)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write([]byte(p.value))
	}
	mw.Close()
	return mw.FormDataContentType(), &b
}

// TestRecordBodyNoDrop: a record create or update whose body carries a
// file part, or a field the collection does not have, is refused with a
// field error naming it, never answered 200 with the key dropped; the
// record is left as it was.
func TestRecordBodyNoDrop(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.signUp("ann@example.com", "password123")
	const (
		fileErr    = `{"code":"validation_file_unsupported","message":"File uploads are not supported by this server."}`
		unknownErr = `{"code":"validation_unknown_field","message":"Unknown field."}`
		twiceErr   = `{"code":"validation_unsupported_value","message":"The field was sent more than once; a record field holds one value."}`
		created    = "Failed to create record."
		updated    = "Failed to update record."
	)
	signUp := []part{{"email", "bob@example.com", ""}, {"password", "password123", ""}, {"passwordConfirm", "password123", ""}}
	png := "\x89PNG\r\n\x1a\n"
	tests := []struct {
		name   string
		method string
		parts  []part
		msg    string
		data   string
	}{
		{"create avatar file", "POST", append(signUp, part{"avatar", png, "a.png"}), created, `{"avatar":` + fileErr + `}`},
		{"create file on text field", "POST", append(signUp, part{"name", "x", "a.txt"}), created, `{"name":` + fileErr + `}`},
		{"create file on unknown field", "POST", append(signUp, part{"nope", "x", "a.txt"}), created, `{"nope":` + fileErr + `}`},
		{"create append modifier", "POST", append(signUp, part{"avatar+", png, "a.png"}), created, `{"avatar+":` + fileErr + `}`},
		{"create two files", "POST", append(signUp, part{"avatar", png, "a.png"}, part{"x", "", "b.png"}), created, `{"avatar":` + fileErr + `,"x":` + fileErr + `}`},
		{"create unknown field", "POST", append(signUp, part{"nope", "x", ""}), created, `{"nope":` + unknownErr + `}`},
		{"create name twice", "POST", append(signUp, part{"name", "a", ""}, part{"name", "b", ""}), created, `{"name":` + twiceErr + `}`},
		{"update avatar file", "PATCH", []part{{"name", "Ann", ""}, {"avatar", png, "a.png"}}, updated, `{"avatar":` + fileErr + `}`},
		{"update file only", "PATCH", []part{{"avatar", png, "a.png"}}, updated, `{"avatar":` + fileErr + `}`},
		{"update unknown field", "PATCH", []part{{"name", "Ann", ""}, {"nope", "x", ""}}, updated, `{"nope":` + unknownErr + `}`},
		{"update name twice and a file", "PATCH", []part{{"name", "a", ""}, {"name", "b", ""}, {"avatar", png, "a.png"}}, updated, `{"avatar":` + fileErr + `,"name":` + twiceErr + `}`},
		{"update name twice urlencoded", "PATCH", nil, updated, `{"name":` + twiceErr + `}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := "/api/collections/users/records"
			if tt.method == "PATCH" {
				path += "/" + id
			}
			ct, body := multipartParts(t, tt.parts...)
			if tt.parts == nil {
				ct, body = "application/x-www-form-urlencoded", bytes.NewBufferString("name=a&name=b")
			}
			res := e.doRaw(tt.method, path, e.su, ct, body)
			want := `{"data":` + tt.data + `,"message":"` + tt.msg + `","status":400}`
			if res.Status != 400 || strings.TrimSpace(string(res.Body)) != want {
				t.Errorf("got %d %s\nwant 400 %s", res.Status, res.Body, want)
			}
		})
	}
	// Nothing was stored: no second record, and ann unchanged.
	res := e.do("GET", "/api/collections/users/records?fields=email,name", e.su, nil)
	if want := `{"items":[{"email":"ann@example.com","name":""}],"page":1,"perPage":30,"totalItems":1,"totalPages":1}`; strings.TrimSpace(string(res.Body)) != want {
		t.Errorf("records: %s\nwant %s", res.Body, want)
	}
}

// TestHealthRealIP: the health check reports the client's address as the
// request log records it, through the trusted proxy headers when set.
func TestHealthRealIP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		name, proxy, header, want string
	}{
		{"no proxy, no header", `{"headers":[]}`, "", "127.0.0.1"},
		{"no proxy, header ignored", `{"headers":[]}`, "203.0.113.7", "127.0.0.1"},
		{"proxy header", `{"headers":["X-Real-IP"]}`, "203.0.113.7", "203.0.113.7"},
		{"proxy, rightmost", `{"headers":["X-Real-IP"]}`, "198.51.100.1, 203.0.113.7", "203.0.113.7"},
		{"proxy, leftmost", `{"headers":["X-Real-IP"],"useLeftmostIP":true}`, "198.51.100.1, 203.0.113.7", "198.51.100.1"},
		{"proxy, header missing", `{"headers":["X-Real-IP"]}`, "", "127.0.0.1"},
		{"proxy, header not an IP", `{"headers":["X-Real-IP"]}`, "nope", "127.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.patchSettings(`{"trustedProxy":` + tt.proxy + `,"logs":{"logIP":true}}`)
			req, err := http.NewRequest("GET", e.srv.URL+"/api/health?case="+url.QueryEscape(tt.name), nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", e.su)
			if tt.header != "" {
				req.Header.Set("X-Real-IP", tt.header)
			}
			res, err := e.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			want := `{"message":"API is healthy.","code":200,"data":{"canBackup":true,"possibleProxyHeader":"","realIP":"` + tt.want + `"}}`
			if res.StatusCode != 200 || strings.TrimSpace(string(body)) != want {
				t.Errorf("got %d %s\nwant 200 %s", res.StatusCode, body, want)
			}
			// The request log records the same address.
			logs := e.listLogs("data.url = '/api/health?case=" + url.QueryEscape(tt.name) + "'")
			if len(logs) != 1 || logs[0]["data"].(map[string]any)["userIP"] != tt.want {
				t.Errorf("logged: %v, want userIP %s", logs, tt.want)
			}
		})
	}
}
