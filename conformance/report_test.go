package conformance

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestReportKnown: a listed failure is Known and does not fail the run; a
// listed pass and an entry naming no requirement are notes; an unlisted
// failure still fails.
func TestReportKnown(t *testing.T) {
	srv := stubServer(t, http.StatusOK)
	list := filepath.Join(t.TempDir(), "impl-1.tsv")
	os.WriteFile(list, []byte("# comment\n\nT-A-001\tanswers 200\nT-A-002\tused to differ\nT-GONE-001\tdropped\n"), 0o644)
	reqs := []*Requirement{
		stubReq("T-A-001", func(context.Context, *Client) error { return Mismatch("404", "200") }),
		stubReq("T-A-002", func(context.Context, *Client) error { return nil }),
		stubReq("T-A-003", func(context.Context, *Client) error { return Mismatch("1", "2") }),
	}
	rep := runRequirements(t.Context(), Config{BaseURL: srv.URL, Email: "a@b.c", Password: "p", Known: list}, reqs)
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	got := []Outcome{rep.Results[0].Outcome, rep.Results[1].Outcome, rep.Results[2].Outcome}
	if got[0] != Known || got[1] != Pass || got[2] != Fail {
		t.Errorf("outcomes = %v, want KNOWN PASS FAIL", got)
	}
	if r := rep.Results[0].KnownReason; r != "answers 200" {
		t.Errorf("KnownReason = %q", r)
	}
	if tl := rep.Tally(); tl != (Tally{Passed: 1, Failed: 1, Known: 1}) {
		t.Errorf("Tally() = %+v", tl)
	}
	var buf bytes.Buffer
	rep.Print(&buf)
	out := buf.String()
	for _, frag := range []string{
		"KNOWN T-A-001",
		"      known:    answers 200\n",
		"note: T-A-002 passed but is listed as a known deviation of impl-1 (used to differ)",
		"note: impl-1 lists T-GONE-001, which is no requirement of the suite",
		"\n1 passed, 1 failed, 0 skipped, 1 known\n",
	} {
		if !strings.Contains(out, frag) {
			t.Errorf("report does not contain %q:\n%s", frag, out)
		}
	}
	if rep.OK() {
		t.Errorf("OK() = true with an unlisted failure")
	}
	reqs = reqs[:2]
	if rep := runRequirements(t.Context(), Config{BaseURL: srv.URL, Email: "a@b.c", Password: "p", Known: list}, reqs); !rep.OK() {
		t.Errorf("OK() = false with only a known deviation failing")
	}
}

func TestKnownErrors(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"no tab", "T-A-001 reason\n", "want ID<TAB>reason"},
		{"no reason", "T-A-001\t\n", "want ID<TAB>reason"},
		{"twice", "T-A-001\tx\nT-A-001\ty\n", "T-A-001 listed twice"},
	} {
		if _, err := parseKnown("x", []byte(tc.data)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: parseKnown = %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	err := Config{Known: "nginx-1.0"}.Validate()
	if err == nil || !strings.Contains(err.Error(), `no known deviations for implementation "nginx-1.0"`) ||
		!strings.Contains(err.Error(), "pocketbase-0.31.0") {
		t.Errorf("Validate() = %v, want an error naming the unknown implementation and the known ones", err)
	}
	rep := Run(t.Context(), Config{Known: "nginx-1.0"})
	if rep.Err == nil || len(rep.Results) != 0 || rep.OK() {
		t.Errorf("Run with an unknown implementation = %+v, want Err and no results", rep)
	}
}

// TestKnownListsExist: every embedded list parses and names only
// requirements of the table, each entry with a reason written by hand and
// an observation recorded by the suite, and pocketbase-0.31.0 is among
// them.
func TestKnownListsExist(t *testing.T) {
	names := KnownImplementations()
	if !strings.Contains(strings.Join(names, ","), "pocketbase-0.31.0") {
		t.Errorf("KnownImplementations() = %v, want pocketbase-0.31.0 among them", names)
	}
	ids := map[string]bool{}
	for _, r := range Requirements {
		ids[r.ID] = true
	}
	for _, n := range names {
		l, err := LoadKnown(n)
		if err != nil {
			t.Errorf("LoadKnown(%q): %v", n, err)
			continue
		}
		if len(l.IDs) == 0 {
			t.Errorf("%s lists nothing", n)
		}
		for _, id := range l.IDs {
			if !ids[id] {
				t.Errorf("%s lists %s, which is no requirement", n, id)
			}
			if l.Observed[id] == "" {
				t.Errorf("%s: %s records no observation (record it from a run: TestAgainstPocketBase -update)", n, id)
			}
			if l.Reasons[id] == placeholderReason {
				t.Errorf("%s: %s has no reason yet (%q)", n, id, placeholderReason)
			}
		}
	}
}

func TestRunMatch(t *testing.T) {
	srv := stubServer(t, http.StatusOK)
	pass := func(context.Context, *Client) error { return nil }
	reqs := []*Requirement{stubReq("LOG-A-001", pass), stubReq("LOG-B-002", pass), stubReq("BKP-A-001", pass)}
	rep := runRequirements(t.Context(), Config{BaseURL: srv.URL, Email: "a@b.c", Password: "p", Match: "A-00[1-9]$"}, reqs)
	var ids []string
	for _, res := range rep.Results {
		ids = append(ids, res.Req.ID)
	}
	if got := strings.Join(ids, ","); got != "LOG-A-001,BKP-A-001" {
		t.Errorf("Match ran %s", got)
	}
	rep = runRequirements(t.Context(), Config{BaseURL: srv.URL, Email: "a@b.c", Password: "p", Match: "A-", Only: "BKP-"}, reqs)
	if len(rep.Results) != 1 || rep.Results[0].Req.ID != "BKP-A-001" {
		t.Errorf("Match with Only ran %v", rep.Results)
	}
	rep = runRequirements(t.Context(), Config{BaseURL: srv.URL, Email: "a@b.c", Password: "p", Match: "(["}, reqs)
	if rep.Err == nil || !strings.Contains(rep.Err.Error(), "run pattern") || rep.OK() {
		t.Errorf("invalid Match: Err = %v, OK = %v", rep.Err, rep.OK())
	}
}

// TestReportExchange: a failure shows the last request the check sent and
// what came back, not the cleanup's; a pass carries none.
func TestReportExchange(t *testing.T) {
	srv := stubServer(t, http.StatusOK)
	reqs := []*Requirement{
		stubReq("T-A-001", func(ctx context.Context, c *Client) error {
			c.Cleanup("later request", func(ctx context.Context) error {
				_, err := c.get(ctx, "/api/cleanup", "")
				return err
			})
			r, err := c.get(ctx, "/api/logs?filter=x", c.su)
			if err != nil {
				return err
			}
			return expectStatus(r, 200)
		}),
		stubReq("T-A-002", func(ctx context.Context, c *Client) error {
			_, err := c.get(ctx, "/api/health", "")
			return err
		}),
	}
	rep := runRequirements(t.Context(), Config{BaseURL: srv.URL, Email: "a@b.c", Password: "p"}, reqs)
	e := rep.Results[0].Exchange
	want := Exchange{Method: "GET", Path: "/api/logs?filter=x", Status: 404, Message: "The requested resource wasn't found.",
		Body: `{"data":{},"message":"The requested resource wasn't found.","status":404}`}
	if e == nil || *e != want {
		t.Fatalf("Exchange = %+v, want %+v", e, want)
	}
	if rep.Results[1].Exchange != nil {
		t.Errorf("a pass carries an Exchange: %+v", rep.Results[1].Exchange)
	}
	var buf bytes.Buffer
	rep.Print(&buf)
	if frag := `      request:  GET /api/logs?filter=x → 404 "The requested resource wasn't found." {"data"`; !strings.Contains(buf.String(), frag) {
		t.Errorf("report does not contain %q:\n%s", frag, buf.String())
	}
}

func TestRedactPath(t *testing.T) {
	for in, want := range map[string]string{
		"/api/backups/a.zip?token=eyJ.x.y":     "/api/backups/a.zip?token=REDACTED",
		"/api/backups/a.zip?Token=1&thumb=100": "/api/backups/a.zip?Token=REDACTED&thumb=100",
		"/api/logs?filter=a%3D1":               "/api/logs?filter=a%3D1",
		"/api/health":                          "/api/health",
	} {
		if got := redactPath(in); got != want {
			t.Errorf("redactPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRunCheckTimeout: a check that outlives Config.CheckTimeout ends as
// an Error saying so, and the next check still runs.
func TestRunCheckTimeout(t *testing.T) {
	srv := stubServer(t, http.StatusOK)
	reqs := []*Requirement{
		stubReq("T-A-001", func(ctx context.Context, c *Client) error {
			<-ctx.Done()
			return ctx.Err()
		}),
		stubReq("T-A-002", func(context.Context, *Client) error { return nil }),
	}
	rep := runRequirements(t.Context(), Config{BaseURL: srv.URL, Email: "a@b.c", Password: "p", CheckTimeout: 50 * time.Millisecond}, reqs)
	r := rep.Results[0]
	if r.Outcome != Error || !strings.Contains(r.Detail, "ran out of its 50ms") {
		t.Errorf("T-A-001: %v %q, want Error naming the check timeout", r.Outcome, r.Detail)
	}
	if rep.Results[1].Outcome != Pass {
		t.Errorf("T-A-002: %v, want Pass", rep.Results[1].Outcome)
	}
}

func TestBodyText(t *testing.T) {
	zipHead := []byte("PK\x03\x04\x14\x00\x08\x00\x08\x00\x10(\x82]")
	for _, tt := range []struct {
		name string
		body []byte
		max  int
		want string
	}{
		{"empty", nil, 10, ""},
		{"json", []byte("{\"a\":\n  1}"), 100, `{"a": 1}`},
		{"cut at max", []byte("abcdefghij"), 4, "abcd…"},
		{"cut before a rune", []byte("abcé"), 4, "abc…"},
		{"zip", zipHead, 100, "<14 bytes, not text: 50 4b 03 04 14 00 08 00 …>"},
		{"short binary", []byte{0xff, 0x00}, 100, "<2 bytes, not text: ff 00>"},
		{"NUL in text", []byte("a\x00b"), 100, "<3 bytes, not text: 61 00 62>"},
		{"escape sequence", []byte("ok \x1b[2J"), 100, "<7 bytes, not text: 6f 6b 20 1b 5b 32 4a>"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := bodyText(tt.body, tt.max); got != tt.want {
				t.Errorf("bodyText(%q, %d) = %q, want %q", tt.body, tt.max, got, tt.want)
			}
		})
	}
}

// TestReportBinaryBody: a failure whose last answer is an archive shows its
// length and first bytes, never the bytes themselves.
func TestReportBinaryBody(t *testing.T) {
	archive := emptyArchive()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/collections/_superusers/auth-with-password" {
			w.Write([]byte(`{"record":{"id":"a"},"token":"stub.token.sig"}`))
			return
		}
		if r.URL.Path != "/api/backups/a.zip" {
			http.NotFound(w, r) // the throwaway superuser too
			return
		}
		w.Header().Set("Content-Type", "application/zip")
		w.Write(archive)
	}))
	t.Cleanup(srv.Close)
	reqs := []*Requirement{stubReq("T-A-001", func(ctx context.Context, c *Client) error {
		r, err := c.get(ctx, "/api/backups/a.zip?token=t", "")
		if err != nil {
			return err
		}
		return Mismatch("404", r.String())
	})}
	rep := runRequirements(t.Context(), Config{BaseURL: srv.URL, Email: "a@b.c", Password: "p"}, reqs)
	var buf bytes.Buffer
	rep.Print(&buf)
	out := buf.String()
	if strings.Contains(out, "token=t") {
		t.Errorf("the report holds the file token:\n%s", out)
	}
	if strings.Contains(out, "PK\x03\x04") || !utf8.ValidString(out) {
		t.Errorf("the report holds the archive's raw bytes:\n%q", out)
	}
	want := fmt.Sprintf("<%d bytes, not text: 50 4b 03 04", len(archive))
	if strings.Count(out, want) != 2 { // actual: and request:
		t.Errorf("the report does not show %q under actual and request:\n%s", want, out)
	}
}

// TestDamageArchiveSkips: an archive not in strongbox's layout (PocketBase's
// holds data.db and no manifest.json) makes BKP-UPLOAD-008's fixture
// impossible, which is a skip with the reason, not an error.
func TestDamageArchiveSkips(t *testing.T) {
	var pb bytes.Buffer
	zw := zip.NewWriter(&pb)
	w, _ := zw.Create("data.db")
	w.Write([]byte("SQLite format 3\x00"))
	zw.Close()
	strongbox, err := writeArchive(archiveManifest{Format: 1, Files: []manifestFile{{Name: "auth.journal"}}},
		map[string][]byte{"auth.journal": make([]byte, 64)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		archive []byte
		want    Outcome
		detail  string
	}{
		{"not a zip", []byte("<html>"), Skip, "it is not a zip"},
		{"PocketBase's", pb.Bytes(), Skip, "it has no manifest.json with a format"},
		{"no journal", emptyArchive(), Skip, "it has no auth.journal of more than 24 bytes"},
		{"strongbox's", strongbox, Pass, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := damageArchive(tt.archive, "auth.journal", journalFirstRecordByte)
			got, detail := classify(err)
			if got != tt.want || !strings.Contains(detail, tt.detail) {
				t.Errorf("damageArchive: %s %q, want %s with %q", got, detail, tt.want, tt.detail)
			}
		})
	}
}

// TestExpectNoSecretsWording: a secret found in a log entry is reported in
// plain words, and the report does not repeat the secret.
func TestExpectNoSecretsWording(t *testing.T) {
	entry := map[string]any{"data": map[string]any{"url": "/api/health?token=cfsecret123"}}
	err := expectNoSecrets(entry, map[string]string{"the token query parameter": "cfsecret123"})
	r := classifyResult(err)
	if want := "the log entry's data.url without the token query parameter"; r.Outcome != Fail || r.Expected != want {
		t.Errorf("expected %q (%s), want %q", r.Expected, r.Outcome, want)
	}
	if strings.Contains(r.Actual, "cfsecret123") || !strings.Contains(r.Actual, "token=<secret>") {
		t.Errorf("actual %q: want the value with the secret shown as <secret>", r.Actual)
	}
	if err := expectNoSecrets(entry, map[string]string{"the Authorization token": "other"}); err != nil {
		t.Errorf("no secret in the entry: %v", err)
	}
}

// FuzzBodyText: whatever a server answers, the report's rendering of it is
// UTF-8 text without control characters, and bounded.
func FuzzBodyText(f *testing.F) {
	for _, s := range []string{"", `{"a":1}`, "PK\x03\x04\x14\x00", "a\x00b", "é\xff", "ok \x1b[2J", "\u0085x"} {
		f.Add([]byte(s), 10)
	}
	f.Fuzz(func(t *testing.T, body []byte, max int) {
		max = max&0x3ff + 1
		got := bodyText(body, max)
		if !isText([]byte(got)) || strings.ContainsAny(got, "\n\r\t") {
			t.Fatalf("bodyText(%q, %d) = %q: not one line of text", body, max, got)
		}
		if len(got) > max+len("…") && !strings.HasPrefix(got, "<") {
			t.Fatalf("bodyText(%q, %d) = %q: longer than %d bytes", body, max, got, max)
		}
	})
}
