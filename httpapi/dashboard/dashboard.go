package dashboard

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"errors"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
)

// files are the app's files: ui/ but its unit tests (*.test.mjs, which
// run under Node, see node_test.go) and package.json (which tells Node the
// .js files are modules). Only the extensions of types are embedded.
//
//go:embed ui/*.html ui/*.css ui/*.js ui/*.svg
var files embed.FS

// CSP is the Content-Security-Policy of every answer under /_/: the app
// loads only its own files, runs no inline script or style and no eval,
// connects only to its own origin and cannot be framed.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// ErrNotFound is Serve's answer for a name that is no file of the app; the
// caller renders it (the JSON 404).
var ErrNotFound = errors.New("dashboard: no such file")

// types are the Content-Types of the app's files, by extension; a file of
// another extension is not served.
var types = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
}

// asset is one file, as sent plain and compressed.
type asset struct {
	ctype           string
	plain, gz       []byte
	plainTag, gzTag string
}

// assets holds every file of ui/ by its name under it ("index.html",
// "app.js"), built once.
var assets = sync.OnceValue(func() map[string]*asset {
	m := map[string]*asset{}
	err := fs.WalkDir(files, "ui", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ctype, ok := types[path.Ext(p)]
		if !ok {
			return nil
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		gz := compress(b)
		m[strings.TrimPrefix(p, "ui/")] = &asset{ctype: ctype, plain: b, gz: gz, plainTag: etag(b), gzTag: etag(gz)}
		return nil
	})
	if err != nil {
		panic("dashboard: reading the embedded files: " + err.Error()) // the embedded FS cannot fail
	}
	return m
})

func compress(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func etag(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`
}

// Names returns the names of the app's files, for tests and checks.
func Names() []string {
	var names []string
	for name := range assets() {
		names = append(names, name)
	}
	return names
}

// SetHeaders sets the headers of every answer under /_/, a 404 included:
// the CSP, no sniffing, no referrer, no framing.
func SetHeaders(h http.Header) {
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
}

// Serve answers a GET or HEAD of the file name under /_/ ("" is
// index.html): the file, gzip-compressed when the request accepts it, or
// 304 when its If-None-Match names the ETag of what would be sent. It
// returns ErrNotFound, having written nothing, for a name that is no file
// of the app. It sets the headers of SetHeaders in every case.
func Serve(w http.ResponseWriter, r *http.Request, name string) error {
	h := w.Header()
	SetHeaders(h)
	if name == "" {
		name = "index.html"
	}
	a, ok := assets()[name]
	if !ok {
		return ErrNotFound
	}
	body, tag := a.plain, a.plainTag
	gzipped := acceptsGzip(r.Header.Values("Accept-Encoding"))
	if gzipped {
		body, tag = a.gz, a.gzTag
	}
	h.Add("Vary", "Accept-Encoding")
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", tag)
	if matches(r.Header.Values("If-None-Match"), tag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h.Set("Content-Type", a.ctype)
	if gzipped {
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
	return nil
}

// acceptsGzip reports whether an Accept-Encoding header accepts gzip: it
// names gzip, or *, without q=0 (RFC 9110 §12.5.3).
func acceptsGzip(values []string) bool {
	for _, v := range values {
		for _, item := range strings.Split(v, ",") {
			coding, params, _ := strings.Cut(item, ";")
			coding = strings.ToLower(strings.TrimSpace(coding))
			if coding != "gzip" && coding != "x-gzip" && coding != "*" {
				continue
			}
			return !zeroQ(params)
		}
	}
	return false
}

// zeroQ reports whether the parameters of an Accept-Encoding item set q=0.
func zeroQ(params string) bool {
	for _, p := range strings.Split(params, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return err == nil && q == 0
		}
	}
	return false
}

// matches reports whether an If-None-Match header names tag, or is "*"
// (RFC 9110 §13.1.2: a weak comparison).
func matches(values []string, tag string) bool {
	for _, v := range values {
		for _, t := range strings.Split(v, ",") {
			t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
			if t == "*" || t == tag {
				return true
			}
		}
	}
	return false
}
