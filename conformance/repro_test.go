package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// shellSamples are strings the shell must get back exactly from their
// quoted form.
var shellSamples = []string{
	"", "plain", "two words", "it's", `"double"`, "$HOME", "${X:-y}", "`id`", "$(id)", "back\\slash",
	"new\nline", "tab\tand\rcr", "non-ASCII: é ü 日本 🙂", "'", "''", `'\''`, "*?[a]", "~root", "a;b|c&d>e<f",
	"-n", "%s %d %%", "!event",
}

// TestShellQuote: the shell reads back every sample exactly from its
// shellQuote form, and printfRecipe writes back every sample's bytes.
func TestShellQuote(t *testing.T) {
	sh := needShell(t)
	for _, s := range shellSamples {
		if got := runShell(t, sh, "printf %s "+shellQuote(s)); got != s {
			t.Errorf("sh -c 'printf %%s %s' = %q, want %q", shellQuote(s), got, s)
		}
		data := []byte(s + "\x00\x01\xff\x7f")
		if got := runShell(t, sh, printfRecipe(data)); got != string(data) {
			t.Errorf("sh -c %q = %q, want %q", printfRecipe(data), got, data)
		}
	}
}

// FuzzShellQuote: whatever the string (no NUL, which no argument can
// hold), the shell reads it back from its quoted form, and printfRecipe
// writes back any bytes.
func FuzzShellQuote(f *testing.F) {
	sh := needShell(f)
	for _, s := range shellSamples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got := runShell(t, sh, printfRecipe([]byte(s))); got != s {
			t.Errorf("sh -c %q = %q, want %q", printfRecipe([]byte(s)), got, s)
		}
		if strings.Contains(s, "\x00") {
			return
		}
		if got := runShell(t, sh, "printf %s "+shellQuote(s)); got != s {
			t.Errorf("sh -c 'printf %%s %s' = %q, want %q", shellQuote(s), got, s)
		}
	})
}

func needShell(t testing.TB) string {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH: the quoting is checked by running it")
	}
	return sh
}

func runShell(t testing.TB, sh, script string, env ...string) string {
	t.Helper()
	cmd := exec.Command(sh, "-c", script)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sh -c %q: %v\n%s", script, err, stderr.String())
	}
	return string(out)
}

// TestReproductionRunsWithCurl makes requirements fail against strongbox
// behind a mutator, takes the reproduction from the report, runs it with
// the real curl (STRONGBOX_CURL) (the token steps included: a superuser's login with
// $PASSWORD, a user's sign-up and login), and requires the answer to show
// the same deviation: the status and message of the request the report
// shows, and what the case names in the body. With the mutation turned
// off, the same commands must show the requirement met instead, so the
// answer is the server's, not the script's.
func TestReproductionRunsWithCurl(t *testing.T) {
	curl := os.Getenv("STRONGBOX_CURL")
	if curl == "" {
		t.Skip("no curl: set STRONGBOX_CURL to a curl executable (Debian package curl, /usr/bin/curl): " +
			"the reproduction is checked by running it")
	}
	if filepath.Base(curl) != "curl" {
		t.Fatalf("STRONGBOX_CURL=%s: the reproductions call it curl, so its name must be curl", curl)
	}
	sh := needShell(t)
	cases := []struct {
		bug, id string
		// deviant and fixed are fragments of the body with the mutation
		// on and off ("" checks the status alone).
		deviant, fixed string
		fixedStatus    int
		lines          []string // fragments the reproduction must hold
	}{
		{"lax-page-number", "LOG-LIST-006", `"page":1`, `"status":400`, 400,
			[]string{`TOKEN=$(curl`, `-H 'Authorization: '"$TOKEN"`, `/api/logs?page=abc'`, "# PASSWORD: "}},
		{"superuser-record-without-email", "AUTH-PW-001", `"token"`, `"email":"` + testEmail + `"`, 200,
			[]string{`"password":"'"$PASSWORD"'"}'`}},
		{"refresh-empty-token", "AUTH-REFRESH-001", `"token":""`, `"token":"ey`, 200,
			[]string{"# the check signed cf-", "/api/collections/users/auth-with-password as cf-", `"$TOKEN"`}},
		{"upload-trusts-extension", "BKP-UPLOAD-001", "", "validation_invalid_mime_type", 400,
			[]string{"-F 'file=@", ";type=application/zip'", "printf 'this is plain text, not a zip archive\\012' > "}},
	}
	byBug := map[string]mutation{}
	for _, m := range mutators() {
		byBug[m.bug] = m.m
	}
	for _, tc := range cases {
		t.Run(tc.bug, func(t *testing.T) {
			t.Parallel()
			var off atomic.Bool
			mutate := byBug[tc.bug]
			if mutate == nil {
				t.Fatalf("no mutator %q", tc.bug)
			}
			base := startFront(t, startStrongbox(t), func(x *front, w http.ResponseWriter, r *http.Request) {
				if off.Load() {
					x.pass(w, r)
					return
				}
				mutate(x, w, r)
			})
			req := requirementByID(t, tc.id)
			rep := runRequirements(t.Context(), Config{BaseURL: base, Email: testEmail, Password: testPassword,
				Profile: SourceStrongbox, WaitTimeout: mutatorWait}, []*Requirement{req})
			res := rep.Results[0]
			if res.Outcome != Fail || res.Exchange == nil || res.Repro == "" {
				t.Fatalf("%s: %v, exchange %v, repro %q; want a FAIL with its reproduction (%s)", tc.id, res.Outcome,
					res.Exchange, res.Repro, res.Detail)
			}
			t.Logf("reproduction of %s:\n%s", tc.id, res.Repro)
			for _, frag := range tc.lines {
				if !strings.Contains(res.Repro, frag) {
					t.Errorf("reproduction holds no %q", frag)
				}
			}
			if strings.Contains(res.Repro, testPassword) {
				t.Errorf("the reproduction shows the superuser's password")
			}
			var buf bytes.Buffer
			rep.Print(&buf)
			if !strings.Contains(buf.String(), "        curl -sS -i ") {
				t.Errorf("the text report holds no indented curl line:\n%s", buf.String())
			}
			var js, ju bytes.Buffer
			if err := rep.WriteJSON(&js); err != nil || !strings.Contains(js.String(), `"repro": "`) {
				t.Errorf("the JSON report holds no repro (%v):\n%s", err, js.String())
			}
			if err := rep.WriteJUnit(&ju); err != nil || !strings.Contains(ju.String(), "reproduce (sh, curl, sed):") {
				t.Errorf("the JUnit report holds no reproduction (%v):\n%s", err, ju.String())
			}
			dir := t.TempDir()
			run := func() (int, string) {
				cmd := exec.CommandContext(t.Context(), sh, "-c", res.Repro)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "PASSWORD="+testPassword,
					"PATH="+filepath.Dir(curl)+string(filepath.ListSeparator)+os.Getenv("PATH"))
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("running the reproduction: %v\n%s", err, stderr.String())
				}
				return parseCurlAnswer(t, out)
			}
			status, body := run()
			if status != res.Exchange.Status || !strings.Contains(body, tc.deviant) ||
				(res.Exchange.Message != "" && !strings.Contains(body, strconv.Quote(res.Exchange.Message)[1:])) {
				t.Errorf("the reproduction answered %d %s; the report showed %s (want %q in the body)", status, body,
					res.Exchange, tc.deviant)
			}
			off.Store(true)
			if status, body := run(); status != tc.fixedStatus || !strings.Contains(body, tc.fixed) {
				t.Errorf("without the mutation the reproduction answered %d %s, want %d with %q", status, body,
					tc.fixedStatus, tc.fixed)
			}
		})
	}
}

// requirementByID returns the requirement id of the table.
func requirementByID(t *testing.T, id string) *Requirement {
	t.Helper()
	i := slices.IndexFunc(Requirements, func(r *Requirement) bool { return r.ID == id })
	if i < 0 {
		t.Fatalf("no requirement %s", id)
	}
	return Requirements[i]
}

// parseCurlAnswer reads what curl -i printed: the status of the last
// response (after any 100 Continue) and its body, which curl has already
// decoded (a Transfer-Encoding: chunked header may remain).
func parseCurlAnswer(t *testing.T, out []byte) (int, string) {
	t.Helper()
	rest := string(out)
	for {
		head, body, ok := strings.Cut(rest, "\r\n\r\n")
		line, _, _ := strings.Cut(head, "\r\n")
		f := strings.Fields(line)
		if !ok || len(f) < 2 || !strings.HasPrefix(f[0], "HTTP/") {
			t.Fatalf("curl printed no HTTP answer:\n%s", out)
		}
		status, err := strconv.Atoi(f[1])
		if err != nil {
			t.Fatalf("curl printed the status line %q", line)
		}
		if status != http.StatusContinue {
			return status, body
		}
		rest = body
	}
}

// TestReportHidesIssuedTokens: a token in an answer (a sign-in, a file
// token) shows as REDACTED under actual and request.
func TestReportHidesIssuedTokens(t *testing.T) {
	const issued = "eyJissued.token.sig"
	srv := stubServer(t, http.StatusOK)
	reqs := []*Requirement{stubReq("T-A-001", func(ctx context.Context, c *Client) error {
		r := &response{method: "POST", path: "/api/files/token", status: 200, body: []byte(`{"token":"` + issued + `"}`)}
		c.remember(r.exchange(), nil)
		return Mismatch("a refusal", r.String())
	})}
	rep := runRequirements(t.Context(), Config{BaseURL: srv.URL, Email: "a@b.c", Password: "p"}, reqs)
	var buf bytes.Buffer
	rep.Print(&buf)
	if out := buf.String(); strings.Contains(out, issued) || strings.Count(out, `{"token":"REDACTED"}`) != 2 {
		t.Errorf("the report shows the issued token, or not REDACTED under actual and request:\n%s", out)
	}
}

// BenchmarkRecordRequest is what send adds to every request for its
// reproduction: the request kept whole, and its answer read for a token.
func BenchmarkRecordRequest(b *testing.B) {
	c := &Client{base: "http://127.0.0.1:8090"}
	body := map[string]string{"identity": "cf-abc@example.com", "password": "Cf-0123456789abcdef"}
	answer := []byte(`{"record":{"id":"abc","email":"cf-abc@example.com"},"token":"eyJhbGciOiJIUzI1NiJ9.e30.sig"}`)
	hdr := http.Header{"Authorization": {"tok"}}
	for b.Loop() {
		s := newSentRequest(http.MethodPost, "/api/collections/users/auth-with-password", hdr, "application/json", body)
		c.recordAnswer(s, http.StatusOK, answer)
	}
}

// TestReproductionBodies: each kind of body becomes what the shell sends
// again exactly (JSON and text inline, text with newlines and small
// binaries through printf, a streamed body through its recipe, a small
// upload as a file printf writes), or a description (a large binary, a
// large upload), never raw bytes.
func TestReproductionBodies(t *testing.T) {
	sh := needShell(t)
	zip := append([]byte("PK\x03\x04"), bytes.Repeat([]byte{0}, 600)...)
	small := []byte("PK\x05\x06\x00\x01'%\\\n")
	const fill = 10
	stream := streamBody{contentType: "application/json", r: strings.NewReader(""),
		n: int64(len(loginBodyPrefix) + fill + len(loginBodySuffix)),
		recipe: fmt.Sprintf("{ printf '%%s' '%s'; head -c %d /dev/zero | tr '\\0' a; printf '%%s' '%s'; }",
			loginBodyPrefix, fill, loginBodySuffix)}
	for _, tc := range []struct {
		name  string
		body  any
		sends string   // the bytes the command's printf or recipe writes ("": none)
		holds []string // fragments of the lines and the command
	}{
		{"json", map[string]string{"a": "it's $x `y`"}, "", []string{`--data-raw '{"a":"it'\''s $x ` + "`y`" + `"}'`}},
		{"text with a newline", rawBody{"text/plain", []byte("one\ntwo %s")}, "one\ntwo %s", []string{"| curl ", "--data-binary @-"}},
		{"small binary", rawBody{"application/zip", small}, string(small), []string{"--data-binary @-"}},
		{"large binary", rawBody{"application/zip", zip}, "", []string{"# body: the 604 bytes the check sent, not pasted (<604 bytes, not text: 50 4b 03 04", "--data-binary @body"}},
		{"streamed", stream, loginBodyPrefix + strings.Repeat("a", fill) + loginBodySuffix, []string{"--data-binary @-"}},
		{"upload", multipartFile(map[string]string{"note": "@not-a-file"}, "file", "../x y.zip", "application/zip", small), "", []string{
			`--form-string note=@not-a-file`, `-F 'file=@upload2;filename="../x y.zip";type=application/zip'`, "# upload2: the file the check uploaded, 10 bytes"}},
		{"large upload", multipartFile(nil, "file", "cf_a.zip", "application/zip", zip), "", []string{
			"# cf_a.zip: the file the check uploaded, a zip archive of 604 bytes, not pasted", "-F 'file=@cf_a.zip;type=application/zip'"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Client{base: "http://127.0.0.1:1"}
			_, ctype, err := requestBody(tc.body)
			if err != nil {
				t.Fatal(err)
			}
			rp := &repro{c: c, vars: map[string]string{}}
			cmd := rp.command(newSentRequest(http.MethodPost, "/api/x", nil, ctype, tc.body), 0)
			all := strings.Join(append(rp.lines, cmd), "\n")
			for _, frag := range tc.holds {
				if !strings.Contains(all, frag) {
					t.Errorf("no %q in\n%s", frag, all)
				}
			}
			if strings.Contains(all, "PK\x03\x04") || strings.Contains(all, "\x00") {
				t.Errorf("raw bytes in\n%q", all)
			}
			if tc.sends != "" {
				pre, _, ok := strings.Cut(cmd, " | curl ")
				if !ok {
					t.Fatalf("no pipe into curl: %s", cmd)
				}
				if got := runShell(t, sh, pre); got != tc.sends {
					t.Errorf("sh -c %q wrote %q, want %q", pre, got, tc.sends)
				}
			}
		})
	}
}

// FuzzReproduction: whatever the path, header value and text body, the
// shell hands curl exactly the URL, header and body the check sent (curl
// replaced by a function that prints its arguments).
func FuzzReproduction(f *testing.F) {
	sh := needShell(f)
	for _, s := range shellSamples {
		f.Add("/api/x?q="+s, s, s)
	}
	f.Fuzz(func(t *testing.T, path, value, body string) {
		if strings.ContainsAny(path+value+body, "\x00\r\n") || strings.Contains(strings.ToLower(path), "token") ||
			!isText([]byte(body)) || len(body) > maxInlineBody {
			return
		}
		c := &Client{base: "http://127.0.0.1:1"}
		s := newSentRequest(http.MethodPut, path, http.Header{"X-Cf": {value}}, "text/plain", rawBody{"text/plain", []byte(body)})
		script := `curl() { for a; do printf '%s\0' "$a"; done; }; ` + c.reproductionOf(s)
		got := strings.Split(strings.TrimSuffix(runShell(t, sh, script), "\x00"), "\x00")
		if !slices.Contains(got, c.base+path) {
			t.Fatalf("curl got %q, without the URL %q\nscript: %s", got, c.base+path, script)
		}
		for _, want := range [][2]string{{"-X", "PUT"}, {"-H", "Content-Type: text/plain"}, {"-H", "X-Cf: " + value},
			{"--data-raw", body}} {
			if !slices.ContainsFunc(pairs(got), func(p [2]string) bool { return p == want }) {
				t.Fatalf("curl got %q, want %q after %q\nscript: %s", got, want[1], want[0], script)
			}
		}
	})
}

// pairs returns each argument with the one after it.
func pairs(args []string) [][2]string {
	var out [][2]string
	for i := 0; i+1 < len(args); i++ {
		out = append(out, [2]string{args[i], args[i+1]})
	}
	return out
}

// TestReproductionOutcomes: an ERROR after a request carries its
// reproduction, as a FAIL does; an ERROR before any request, a SKIP and a
// PASS carry none.
func TestReproductionOutcomes(t *testing.T) {
	srv := stubServer(t, http.StatusOK)
	get := func(ctx context.Context, c *Client) error {
		_, err := c.get(ctx, "/api/health?cf=1", c.su)
		return err
	}
	reqs := []*Requirement{
		stubReq("T-R-001", func(ctx context.Context, c *Client) error { get(ctx, c); return Mismatch("200", "404") }),
		stubReq("T-R-002", func(ctx context.Context, c *Client) error { get(ctx, c); return errors.New("fixture refused") }),
		stubReq("T-R-003", func(ctx context.Context, c *Client) error { return errors.New("before any request") }),
		stubReq("T-R-004", func(ctx context.Context, c *Client) error { get(ctx, c); return Skipf("not configured") }),
		stubReq("T-R-005", func(ctx context.Context, c *Client) error { return get(ctx, c) }),
	}
	rep := runRequirements(t.Context(), Config{BaseURL: srv.URL, Email: "a@b.c", Password: "p"}, reqs)
	for i, want := range []bool{true, true, false, false, false} {
		res := rep.Results[i]
		if got := strings.Contains(res.Repro, "curl -sS -i --globoff --path-as-is '"+srv.URL+`/api/health?cf=1' -H 'Authorization: '"$TOKEN"`); got != want {
			t.Errorf("%s (%v): reproduction %q, want one: %v", res.Req.ID, res.Outcome, res.Repro, want)
		}
	}
}
