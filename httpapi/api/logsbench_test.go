package api

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"strongbox/authn"
	"strongbox/httpapi/settings"
	"strongbox/logstore"
)

// BenchmarkLogsList1M is GET /api/logs?sort=-created&perPage=50 through
// the real handler (superuser check, List, the answer's JSON) over a
// million request logs seeded as `strongbox logs seed` seeds them, with
// /api/health beside it for the HTTP figure's baseline (issue 32: p50 of
// 21 over HTTP minus /api/health's):
//
//	go test -run '^$' -bench LogsList1M -count 6 ./httpapi/api
func BenchmarkLogsList1M(b *testing.B) {
	if testing.Short() {
		b.Skip("seeds a million request logs")
	}
	dir := b.TempDir()
	if err := logstore.Seed(filepath.Join(dir, "logs"), 1_000_000, logstore.Options{}); err != nil {
		b.Fatal(err)
	}
	h, token := benchServer(b, dir)
	for _, c := range []struct{ name, path string }{
		{"SortCreated", "/api/logs?sort=-created&perPage=50"},
		{"Health", "/api/health"},
	} {
		path := c.path
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				r := httptest.NewRequest("GET", path, nil)
				r.Header.Set("Authorization", token)
				h.ServeHTTP(w, r)
				if w.Code != 200 {
					b.Fatalf("%s: %d %s", path, w.Code, w.Body)
				}
			}
		})
	}
}

// benchServer serves the stores of dir (a superuser created) and returns
// the handler and the superuser's token.
func benchServer(b *testing.B, dir string) (http.Handler, string) {
	b.Helper()
	hasher, err := authn.NewHasher(bcrypt.MinCost, 0)
	if err != nil {
		b.Fatal(err)
	}
	auth, err := authn.Open(filepath.Join(dir, "auth.journal"), authn.Options{Hasher: hasher})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { auth.Close() })
	if _, err := auth.CreateSuperuser(b.Context(), suEmail, suPassword); err != nil {
		b.Fatal(err)
	}
	set, err := settings.Open(filepath.Join(dir, "settings.journal"), settings.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { set.Close() })
	logs, err := logstore.Open(filepath.Join(dir, "logs"), logstore.Options{MaxDays: 5})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { logs.Close() })
	api := NewServer(Config{Auth: auth, Logs: logs, Settings: set, Now: time.Now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	b.Cleanup(set.Subscribe(api.ApplySettings))
	body, _ := json.Marshal(map[string]string{"identity": suEmail, "password": suPassword})
	w := httptest.NewRecorder()
	r := httptest.NewRequest("POST", "/api/collections/_superusers/auth-with-password", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	api.ServeHTTP(w, r)
	var res struct{ Token string }
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil || res.Token == "" {
		b.Fatalf("login: %d %s", w.Code, w.Body)
	}
	return api, res.Token
}
