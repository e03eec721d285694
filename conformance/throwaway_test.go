package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestThrowawaySuperuser: the checks work as a throwaway superuser under
// conformance.invalid, whose reproduction names the given superuser
// instead; the run deletes it at the end, also when its context ends
// during a check; it deletes the leftovers of earlier runs whose time has
// passed, and keeps those of runs still going and superusers not of its
// making.
func TestThrowawaySuperuser(t *testing.T) {
	base := startStrongbox(t)
	admin := signInSuperuser(t, base, testEmail, testPassword, userAgent)
	now := time.Now()
	past := fmt.Sprintf("cf-su-%d-aaaaaaaa@%s", now.Add(-time.Minute).Unix(), throwawayDomain)
	future := fmt.Sprintf("cf-su-%d-bbbbbbbb@%s", now.Add(time.Hour).Unix(), throwawayDomain)
	other := "cf-su-someone@" + throwawayDomain
	for _, email := range []string{past, future, other} {
		createSuperuser(t, base, admin, email)
	}

	var seen []string // the superusers the checks ran as
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	reqs := []*Requirement{
		stubReq("T-TW-001", func(ctx context.Context, c *Client) error {
			seen = append(seen, c.email)
			if !throwawayEmail.MatchString(c.email) || c.su == c.given || c.password == testPassword {
				return fmt.Errorf("the check runs as %s, not as a throwaway", c.email)
			}
			if _, err := c.login(ctx, "_superusers", c.email, c.password); err != nil {
				return err
			}
			r, err := c.get(ctx, "/api/collections/_superusers/records?perPage=1", c.su)
			if err != nil {
				return err
			}
			return Mismatch("a failure, for its reproduction", r.String())
		}),
		stubReq("T-TW-002", func(ctx context.Context, c *Client) error {
			seen = append(seen, c.email)
			cancel() // the run is interrupted during a check
			return nil
		}),
		stubReq("T-TW-003", func(ctx context.Context, c *Client) error { return nil }),
	}
	rep := runRequirements(ctx, Config{BaseURL: base, Email: testEmail, Password: testPassword}, reqs)
	if len(rep.Notes) != 0 {
		t.Errorf("notes: %q", rep.Notes)
	}
	if got := []Outcome{rep.Results[0].Outcome, rep.Results[1].Outcome, rep.Results[2].Outcome}; !slices.Equal(got,
		[]Outcome{Fail, Pass, Error}) {
		t.Errorf("outcomes %v (%s), want FAIL PASS ERROR", got, rep.Results[0].Detail)
	}
	if len(seen) != 2 || seen[0] != seen[1] {
		t.Errorf("the checks ran as %q, want one throwaway", seen)
	}
	repro := rep.Results[0].Repro
	if strings.Contains(repro, seen[0]) || !strings.Contains(repro, "as "+testEmail+" → .token") {
		t.Errorf("the reproduction names the throwaway, not %s:\n%s", testEmail, repro)
	}
	left := superuserEmails(t, base, admin)
	want := []string{testEmail, future, other}
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Errorf("superusers after the run: %q, want %q (the throwaway and the past leftover deleted)", left, want)
	}
}

// TestThrowawayFallback: a server that refuses the throwaway gets the run
// as the given superuser, with a note that says so.
func TestThrowawayFallback(t *testing.T) {
	srv := stubServer(t, http.StatusOK)
	reqs := []*Requirement{stubReq("T-TW-001", func(ctx context.Context, c *Client) error {
		if c.email != "a@b.c" || c.su != "stub.token.sig" {
			return fmt.Errorf("runs as %s", c.email)
		}
		return nil
	})}
	rep := runRequirements(t.Context(), Config{BaseURL: srv.URL, Email: "a@b.c", Password: "p"}, reqs)
	if rep.Results[0].Outcome != Pass || len(rep.Notes) != 1 ||
		!strings.Contains(rep.Notes[0], "the suite ran as the superuser a@b.c, not as a throwaway of its own") {
		t.Errorf("outcome %v (%s), notes %q", rep.Results[0].Outcome, rep.Results[0].Detail, rep.Notes)
	}
}

// mailMatch selects the requirements of TestRunMailsTheSuperuserOnce:
// those that sign in as the superuser.
var mailMatch = "^(AUTH-PW-00[1-7]|AUTH-TOKEN-00[1-4]|COLL-SYS-0)"

// TestRunMailsTheSuperuserOnce: a superuser that has signed in before
// (from a browser) gets one new-login alert from a run of the checks that
// sign in as the superuser (the suite's own sign-in from a device it has
// not used), and none from a second run; no other mail reaches it or the
// throwaway. strongbox, SMTP off, writes its mail to the outbox.
func TestRunMailsTheSuperuserOnce(t *testing.T) {
	dir := t.TempDir()
	base := startStrongboxIn(t, dir, nil)
	signInSuperuser(t, base, testEmail, testPassword, "cf-browser/1")
	for run, want := range []int{1, 1} {
		rep := runRequirements(t.Context(), Config{BaseURL: base, Email: testEmail, Password: testPassword,
			Profile: SourceStrongbox, Match: mailMatch}, Requirements)
		if !rep.OK() || len(rep.Results) < 5 {
			var b strings.Builder
			rep.Print(&b)
			t.Fatalf("run %d:\n%s", run+1, b.String())
		}
		mails := outboxMails(t, filepath.Join(dir, "mail"))
		if len(mails) != want || !strings.HasPrefix(mails[0], testEmail+": Login from a new location") {
			t.Errorf("after run %d the outbox holds %q, want the one alert to %s", run+1, mails, testEmail)
		}
	}
}

// TestRunMailsTheSuperuserOnceOnPocketBase is TestRunMailsTheSuperuserOnce
// against a PocketBase v0.31.0 (STRONGBOX_POCKETBASE) whose mail goes to an
// SMTP sink of the test's own (the mail checks point it at theirs for
// their duration, and back): the superuser gets one alert from the first
// run and none from the second, and nothing else reaches it or the
// throwaways.
func TestRunMailsTheSuperuserOnceOnPocketBase(t *testing.T) {
	bin := os.Getenv("STRONGBOX_POCKETBASE")
	if bin == "" {
		t.Skip("no PocketBase: set STRONGBOX_POCKETBASE to a PocketBase v0.31.0 executable (.ci/run builds one)")
	}
	base := startPocketBase(t, bin, testEmail, testPassword)
	sink, err := startSMTPSink("127.0.0.1", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	tok := signInSuperuser(t, base, testEmail, testPassword, "cf-browser/1")
	c := &Client{base: base, hc: http.DefaultClient, sleep: sleepCtx, su: tok}
	if err := c.patchOK(t.Context(), "/api/settings", map[string]any{"smtp": map[string]any{"enabled": true,
		"host": "127.0.0.1", "port": sink.port(), "tls": false}}); err != nil {
		t.Fatal(err)
	}
	for run, want := range []int{1, 0} {
		rep := runRequirements(t.Context(), Config{BaseURL: base, Email: testEmail, Password: testPassword,
			Profile: SourcePocketBase, Match: mailMatch, Known: "pocketbase-0.31.0"}, Requirements)
		if !rep.OK() || len(rep.Results) < 5 || len(rep.Notes) > 0 {
			var b strings.Builder
			rep.Print(&b)
			t.Fatalf("run %d:\n%s", run+1, b.String())
		}
		var got []string
		for m := sink.wait(t.Context(), testEmail, 2*time.Second); m != nil; m = sink.wait(t.Context(), testEmail, time.Second) {
			got = append(got, m.Subject)
		}
		if len(got) != want || want == 1 && got[0] != alertSubject {
			t.Errorf("run %d mailed the superuser %q, want %d alert", run+1, got, want)
		}
	}
}

// outboxMails returns "recipient: subject" of each mail in strongbox's
// outbox dir.
func outboxMails(t *testing.T, dir string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.eml"))
	var out []string
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := mail.ReadMessage(fh)
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		to, err := m.Header.AddressList("To")
		if err != nil || len(to) != 1 {
			t.Fatalf("%s: To %q: %v", f, m.Header.Get("To"), err)
		}
		out = append(out, to[0].Address+": "+m.Header.Get("Subject"))
	}
	return out
}

// signInSuperuser signs the superuser in with the User-Agent ua and returns
// its token.
func signInSuperuser(t *testing.T, base, email, password, ua string) string {
	t.Helper()
	c := &Client{base: base, hc: http.DefaultClient, sleep: sleepCtx}
	r, err := c.doWith(t.Context(), http.MethodPost, "/api/collections/_superusers/auth-with-password",
		http.Header{"User-Agent": {ua}}, map[string]string{"identity": email, "password": password})
	if err != nil {
		t.Fatal(err)
	}
	res, err := parseAuthResult(r)
	if err != nil {
		t.Fatal(err)
	}
	return res.token
}

// createSuperuser creates the superuser email with token tok.
func createSuperuser(t *testing.T, base, tok, email string) {
	t.Helper()
	c := &Client{base: base, hc: http.DefaultClient, sleep: sleepCtx}
	pw := "Cf-" + newNonce(16)
	r, err := c.post(t.Context(), "/api/collections/_superusers/records", tok,
		map[string]string{"email": email, "password": pw, "passwordConfirm": pw})
	if err != nil || r.status != http.StatusOK {
		t.Fatalf("creating the superuser %s: %v %v", email, err, r)
	}
}

// superuserEmails lists the superusers' emails, sorted.
func superuserEmails(t *testing.T, base, tok string) []string {
	t.Helper()
	c := &Client{base: base, hc: http.DefaultClient, sleep: sleepCtx}
	r, m, err := c.getOK(t.Context(), "/api/collections/_superusers/records?perPage=500&fields=email", tok)
	if err != nil {
		t.Fatalf("%v %v", err, r)
	}
	var list struct {
		Items []struct {
			Email string `json:"email"`
		} `json:"items"`
	}
	json.Unmarshal([]byte(jsonText(m)), &list)
	var out []string
	for _, it := range list.Items {
		out = append(out, it.Email)
	}
	slices.Sort(out)
	return out
}
