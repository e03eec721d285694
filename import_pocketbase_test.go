package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	pbdata "strongbox/backup/pocketbase"
	"strongbox/backup/sqlite"
	"strongbox/conformance/oauth2provider"
	"strongbox/conformance/smtpsink"
	"strongbox/httpapi/app/throwaway"
)

// importPlan is what the test tells testdata/import/seed.mjs and check.mjs
// (as the JSON file IMPORT_PLAN names): the accounts and their passwords,
// where the SMTP sink, the OAuth2 provider and the mailbox are, and where
// to write what they record.
type importPlan struct {
	Nonce      string                   `json:"nonce"`
	Superusers []importAccount          `json:"superusers"`
	Accounts   map[string]importAccount `json:"accounts"`
	SMTP       struct {
		Host     string `json:"host"`
		Port     int    `json:"port"`
		Username string `json:"username"`
		Password string `json:"password"`
	} `json:"smtp"`
	OAuth2 struct {
		URL          string `json:"url"`
		ClientID     string `json:"clientId"`
		ClientSecret string `json:"clientSecret"`
	} `json:"oauth2"`
	Mailbox    string `json:"mailbox"`
	Requests   int    `json:"requests"`
	SeedOut    string `json:"seedOut"`
	BackupKey  string `json:"backupKey"`
	BackupPath string `json:"backupPath"`
}

// importAccount is an account the scripts make on PocketBase and sign in
// with on strongbox: Fields are values of the collection's extra fields.
type importAccount struct {
	Collection string         `json:"collection,omitempty"`
	Email      string         `json:"email"`
	Password   string         `json:"password"`
	Verified   bool           `json:"verified"`
	Fields     map[string]any `json:"fields,omitempty"`
}

// importTools returns the PocketBase executable, the JS SDK's ES module
// and node, skipping the test when one is missing.
func importTools(t *testing.T) (pocketbase, sdk, node string) {
	t.Helper()
	pocketbase, sdk = os.Getenv("STRONGBOX_POCKETBASE"), os.Getenv("STRONGBOX_JS_SDK")
	if pocketbase == "" || sdk == "" {
		t.Skip("needs PocketBase v0.31.0 and its JS SDK: set STRONGBOX_POCKETBASE and STRONGBOX_JS_SDK (.ci/run installs both)")
	}
	if fi, err := os.Stat(sdk); err == nil && fi.IsDir() {
		sdk = filepath.Join(sdk, "dist", "pocketbase.es.mjs")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("STRONGBOX_JS_SDK is set but node is not installed")
	}
	return pocketbase, sdk, node
}

// importHTTP is the client of the test's own requests: none waits long.
var importHTTP = &http.Client{Timeout: 10 * time.Second}

// pbProcess is a PocketBase serving a data dir, as a child process.
type pbProcess struct {
	base string
	cmd  *exec.Cmd
	done chan struct{}
	out  *syncBuffer
}

// startPB serves PocketBase from data (its working dir is data's parent,
// where it writes pb_migrations) on a free loopback port, and waits for
// /api/health. It is killed when the test ends if still running.
func startPB(t *testing.T, ctx context.Context, bin, data string) *pbProcess {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	p := &pbProcess{base: "http://" + addr, done: make(chan struct{}), out: &syncBuffer{}}
	p.cmd = exec.Command(bin, "serve", "--http", addr, "--dir", data)
	p.cmd.Dir = filepath.Dir(data)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("PocketBase's output:\n%s", p.out)
		}
	})
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := importHTTP.Get(p.base + "/api/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-p.done:
			t.Fatalf("PocketBase exited before it served:\n%s", p.out)
		case <-ctx.Done():
			t.Fatalf("PocketBase did not answer /api/health: %v", err)
		case <-tick.C:
		}
	}
}

// stop stops PocketBase cleanly (SIGTERM) and waits for it, at most 30 s.
func (p *pbProcess) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM to PocketBase: %v", err)
	}
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("PocketBase did not stop within 30 s of SIGTERM")
	}
}

// serveMailbox serves the SMTP sink's mail to the node scripts:
// GET /mail?to=ADDR&subject=S answers the next mail to ADDR whose subject
// contains S (others to ADDR are dropped) as {subject, text}, or 404 when
// none comes within 15 s.
func serveMailbox(t *testing.T, sink *smtpsink.Sink) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		to, subject := r.URL.Query().Get("to"), r.URL.Query().Get("subject")
		deadline := time.Now().Add(15 * time.Second)
		for {
			m := sink.Wait(r.Context(), to, time.Until(deadline))
			if m == nil {
				w.WriteHeader(http.StatusNotFound)
				return
			}
			if strings.Contains(m.Subject, subject) {
				json.NewEncoder(w).Encode(map[string]string{"subject": m.Subject, "text": m.Text})
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// runNode runs testdata/import/SCRIPT with args, the plan and the SDK,
// failing the test unless it succeeds; it logs the script's output.
func runNode(t *testing.T, ctx context.Context, node, sdk, planPath, script string, args ...string) {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("testdata", "import", script))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, node, append([]string{path}, args...)...)
	cmd.Env = append(os.Environ(), "SDK_MODULE="+sdk, "IMPORT_PLAN="+planPath)
	out, err := cmd.CombinedOutput()
	t.Logf("node %s:\n%s", script, out)
	if err != nil {
		t.Fatalf("node %s: %v", script, err)
	}
}

// runStrongbox runs the strongbox binary with args and returns its
// combined output.
func runStrongbox(ctx context.Context, bin string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	return string(out), err
}

// oldLogsSQL adds 1,500 request logs shaped like PocketBase's, one every
// 86 s back from now (36 hours), so that the stats answers have many hour
// buckets: PocketBase's requests during the test all fall in one or two.
const oldLogsSQL = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1500),
r(i, method, status, url) AS (SELECT i, CASE i % 3 WHEN 0 THEN 'POST' ELSE 'GET' END,
  CASE WHEN i % 7 = 0 THEN 404 ELSE 200 END, printf('/api/collections/users/records?page=%d', i % 9) FROM n)
INSERT INTO _logs (id, level, message, data, created)
SELECT printf('old%012d', i), CASE WHEN status >= 400 THEN 8 ELSE 0 END, method || ' ' || url,
  json_object('auth', '', 'execTime', i / 7.0, 'method', method, 'referer', '', 'remoteIP', '127.0.0.1',
    'status', status, 'type', 'request', 'url', url, 'userAgent', 'node', 'userIP', '127.0.0.1'),
  strftime('%Y-%m-%d %H:%M:%fZ', 'now', printf('-%d seconds', i * 86))
FROM r;`

// addOldLogs runs oldLogsSQL on PocketBase's auxiliary.db (made by
// `superuser upsert`) with Debian's sqlite3, when it is installed.
func addOldLogs(t *testing.T, ctx context.Context, db string) {
	t.Helper()
	sqlite3, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Log("no sqlite3: the logs are only those of the test's requests, all within an hour or two")
		return
	}
	if out, err := exec.CommandContext(ctx, sqlite3, db, oldLogsSQL).CombinedOutput(); err != nil {
		t.Fatalf("sqlite3 %s: %v\n%s", db, err, out)
	}
}

// importRunning imports data, the dir of a running PocketBase, into
// target, and says what is wrong unless the import fails with a message
// that says to stop PocketBase or use a backup archive, leaving no target.
func importRunning(ctx context.Context, bin, data, target string) string {
	out, err := runStrongbox(ctx, bin, "import", "pocketbase", data, "--dir", target)
	var why []string
	if err == nil || !regexp.MustCompile(`(?i)stop`).MatchString(out) || !regexp.MustCompile(`(?i)archive`).MatchString(out) {
		why = append(why, fmt.Sprintf("the import of the dir of a running PocketBase answered %v, want a failure that says "+
			"to stop PocketBase or use a backup archive:\n%s", err, out))
	}
	if _, err := os.Stat(target); err == nil {
		why = append(why, fmt.Sprintf("the import of the dir of a running PocketBase left %s behind", target))
	}
	return strings.Join(why, "\n")
}

// serveImported serves the data dir an import made, as a child process
// with env added to its environment, until the test ends.
func serveImported(t *testing.T, ctx context.Context, bin, dir string, env ...string) *throwaway.Process {
	t.Helper()
	log := &syncBuffer{}
	sb, err := throwaway.StartProcess(ctx, bin, "127.0.0.1:0", dir, env, log)
	if err != nil {
		t.Fatalf("serve the imported dir: %v\n%s", err, log)
	}
	t.Cleanup(func() {
		if err := sb.Stop(); err != nil {
			t.Errorf("stop strongbox: %v", err)
		}
		if t.Failed() {
			t.Logf("strongbox's log:\n%s", log)
		}
	})
	return sb
}

// newImportPlan names the accounts and where things go, under dir; n
// makes the names unique.
func newImportPlan(n, dir string, prov *oauth2provider.Provider) *importPlan {
	p := &importPlan{Nonce: n, Requests: 3000,
		SeedOut: filepath.Join(dir, "pocketbase.json"), BackupKey: "import_" + n + ".zip",
		BackupPath: filepath.Join(dir, "pb_backup.zip")}
	p.Superusers = []importAccount{
		{Email: "root-" + n + "@example.com", Password: "Root-password-" + n},
		{Email: "ops-" + n + "@example.com", Password: "Ops-password-" + n},
	}
	p.Accounts = map[string]importAccount{
		"verified": {Collection: "users", Email: "alice-" + n + "@example.com", Password: "Alice-pw-" + n, Verified: true,
			Fields: map[string]any{"bio": "first user", "score": 42.5, "subscribed": true}},
		"unverified": {Collection: "users", Email: "bob-" + n + "@example.com", Password: "Bob-pw-" + n,
			Fields: map[string]any{"bio": "", "score": 0.0, "subscribed": false}},
		"oauth": {Collection: "users", Email: "carol-" + n + "@example.com", Password: "Carol-pw-" + n, Verified: true,
			Fields: map[string]any{"bio": "linked", "score": -3.0, "subscribed": true}},
		"mfa": {Collection: "staff", Email: "dave-" + n + "@example.com", Password: "Dave-pw-" + n, Verified: true,
			Fields: map[string]any{"department": "ops"}},
	}
	p.SMTP.Username, p.SMTP.Password = "mailer-"+n, "smtp-secret-"+n
	p.OAuth2.URL, p.OAuth2.ClientID, p.OAuth2.ClientSecret = prov.URL, prov.ClientID, prov.ClientSecret
	return p
}

// TestImportPocketBase is the end-to-end test of `strongbox import
// pocketbase` against a real PocketBase v0.31.0 (issue 24). pocketBasePhase
// gives PocketBase its data and records its answers, and checks that the
// import refuses its dir while it runs; once it has stopped, both its data
// dir and its backup archive are imported into fresh strongbox dirs, and
// check.mjs signs everyone in on a strongbox serving each, through the
// same SDK, and asks the same questions, whose answers must equal
// PocketBase's.
func TestImportPocketBase(t *testing.T) {
	pocketbase, sdk, node := importTools(t)
	bin := strongboxBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	prov := oauth2provider.Start(t)
	dir := t.TempDir()
	plan := newImportPlan(fmt.Sprintf("%x", time.Now().UnixNano())[:10], dir, prov)
	// The sink takes mail only with PocketBase's SMTP credentials: the
	// imported settings must carry the password, which no API shows.
	sink := smtpsink.Start(t, smtpsink.Options{Username: plan.SMTP.Username, Password: plan.SMTP.Password})
	plan.SMTP.Host, plan.SMTP.Port = sink.Host, sink.Port
	plan.Mailbox = serveMailbox(t, sink)
	o := plan.Accounts["oauth"]
	prov.SignIn(oauth2provider.Grant{User: map[string]any{"sub": "sub-" + plan.Nonce, "email": o.Email,
		"email_verified": true, "name": "Carol at the provider"}})
	planPath := filepath.Join(dir, "plan.json")
	b, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(planPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "pb_data")
	want := pocketBasePhase(t, ctx, pocketbase, sdk, node, bin, plan, planPath, data)

	for _, src := range []struct{ name, path string }{{"folder", data}, {"archive", plan.BackupPath}} {
		t.Run(src.name, func(t *testing.T) {
			target := filepath.Join(t.TempDir(), "sb_data")
			for _, dry := range []bool{true, false} {
				args := []string{"import", "pocketbase", src.path, "--dir", target}
				if dry {
					args = append(args, "--dry-run")
				}
				out, err := runStrongbox(ctx, bin, args...)
				t.Logf("strongbox %s:\n%s", strings.Join(args, " "), out)
				if err != nil {
					t.Fatalf("import: %v", err)
				}
				// The report names what it skipped: the file fields, the
				// base collection and the batch settings.
				for _, skipped := range []string{"contract", "avatar", "notes", "batch"} {
					if !strings.Contains(out, skipped) {
						t.Errorf("the import's report does not mention %q", skipped)
					}
				}
				if _, err := os.Stat(target); dry && err == nil {
					t.Fatalf("the dry run wrote %s", target)
				}
			}
			// The provider is on 127.0.0.1.
			sb := serveImported(t, ctx, bin, target, "STRONGBOX_OAUTH2_ALLOW_PRIVATE=1")
			answersPath := filepath.Join(t.TempDir(), "answers.json")
			runNode(t, ctx, node, sdk, planPath, "check.mjs", sb.Base, answersPath)
			var got answersDoc
			if b, err := os.ReadFile(answersPath); err != nil {
				t.Fatal(err)
			} else if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			compareAnswers(t, want, got)
		})
	}
}

// pocketBasePhase makes PocketBase's data dir: two superusers (`superuser
// upsert`), older logs (addOldLogs), then, with PocketBase serving it,
// seed.mjs's settings, collections, accounts (verified, unverified, one
// linked through PocketBase's own OAuth2 code flow with the loopback
// provider, one with MFA whose OTP goes to the SMTP sink) and requests,
// and its answers; then the import must refuse the dir of the running
// PocketBase; backup.mjs makes and downloads a backup archive; PocketBase
// stops cleanly. It returns PocketBase's answers.
func pocketBasePhase(t *testing.T, ctx context.Context, pocketbase, sdk, node, bin string, plan *importPlan, planPath, data string) answersDoc {
	t.Helper()
	for _, s := range plan.Superusers {
		up := exec.CommandContext(ctx, pocketbase, "superuser", "upsert", s.Email, s.Password, "--dir", data)
		up.Dir = filepath.Dir(data)
		if out, err := up.CombinedOutput(); err != nil {
			t.Fatalf("superuser upsert: %v\n%s", err, out)
		}
	}
	addOldLogs(t, ctx, filepath.Join(data, "auxiliary.db"))
	pb := startPB(t, ctx, pocketbase, data)
	runNode(t, ctx, node, sdk, planPath, "seed.mjs", pb.base)

	dir := filepath.Dir(data)
	if why := importRunning(ctx, bin, data, filepath.Join(dir, "refused")); why != "" {
		t.Error(why)
	}
	runNode(t, ctx, node, sdk, planPath, "backup.mjs", pb.base)
	t.Run("running, after a backup", func(t *testing.T) {
		// PocketBase's backup reads data.db through descriptors of its own
		// and closes them, which drops every POSIX lock of the process on
		// that file, SQLite's too (fcntl locks belong to the process, not
		// the descriptor), and a PocketBase idle for a few minutes holds
		// none either (its pool has closed its connections): the lock
		// check does not see it run. On Linux, /proc shows that it still
		// has data.db open. Elsewhere, what it writes while an import
		// reads is seen instead: Unchanged fails once PocketBase has
		// written the log of a request (it writes logs every 3 s).
		if why := importRunning(ctx, bin, data, filepath.Join(dir, "refused-after-backup")); why == "" {
			return
		} else if runtime.GOOS == "linux" {
			t.Fatal(why)
		}
		src, err := pbdata.Open(data, pbdata.Options{})
		if err != nil {
			t.Fatalf("open the data dir of PocketBase after its backup: %v", err)
		}
		defer src.Close()
		if resp, err := importHTTP.Get(pb.base + "/api/health"); err != nil {
			t.Fatal(err)
		} else {
			resp.Body.Close()
		}
		deadline := time.Now().Add(15 * time.Second)
		for src.Unchanged() == nil {
			if time.Now().After(deadline) {
				t.Fatal("PocketBase wrote its request log, but Unchanged still reports the data dir unchanged")
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err := src.Unchanged(); !errors.Is(err, sqlite.ErrChanged) || !strings.Contains(err.Error(), "stop it, or import a backup archive") {
			t.Errorf("Unchanged = %v, want sqlite.ErrChanged saying what to do", err)
		}
	})
	pb.stop(t)

	var seed struct{ Answers answersDoc }
	if b, err := os.ReadFile(plan.SeedOut); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(b, &seed); err != nil {
		t.Fatal(err)
	}
	if len(seed.Answers.Logs) == 0 || len(seed.Answers.Stats) == 0 {
		t.Fatal("seed.mjs recorded no logs answers")
	}
	t.Logf("PocketBase's answers: %v logs up to T, in %d hour buckets", seed.Answers.Logs[0].Answer["totalItems"],
		len(seed.Answers.Stats[0].Answer))
	return seed.Answers
}

// answersDoc is what lib.mjs's answers() records.
type answersDoc struct {
	Settings map[string]any `json:"settings"`
	Logs     []struct {
		Query  map[string]any `json:"query"`
		Answer map[string]any `json:"answer"`
	} `json:"logs"`
	Stats []struct {
		Filter string `json:"filter"`
		Answer []any  `json:"answer"`
	} `json:"stats"`
}

// strongboxBatch is the batch section of strongbox's settings after the
// import: its defaults. Strongbox has no /api/batch and refuses
// batch.enabled true, so the import skips PocketBase's batch section (and
// its report says so).
var strongboxBatch any = map[string]any{"enabled": false, "maxRequests": 50.0, "timeout": 3.0, "maxBodySize": 0.0}

// strongboxBackups are the keys of the backups section that strongbox
// adds to PocketBase's (retention keeps, the archive check, encryption,
// continuous backup), as an import leaves them: their defaults.
var strongboxBackups = map[string]any{
	"checkCron": "0 4 * * 0", "cronKeepDaily": 0.0, "cronKeepWeekly": 0.0, "cronKeepMonthly": 0.0,
	"encryption": map[string]any{"enabled": false, "recipients": []any{}},
	"continuous": map[string]any{"enabled": false, "retentionDays": 7.0},
}

// compareAnswers requires strongbox's answers to equal PocketBase's:
// settings section by section (batch excepted: strongboxBatch; backups
// with strongboxBackups added), each logs list, each stats answer.
func compareAnswers(t *testing.T, want, got answersDoc) {
	t.Helper()
	for section, w := range want.Settings {
		if section == "batch" {
			w = strongboxBatch
		}
		if m, ok := w.(map[string]any); ok && section == "backups" {
			w = maps.Clone(m)
			maps.Copy(w.(map[string]any), strongboxBackups)
		}
		if diff := cmp.Diff(w, got.Settings[section]); diff != "" {
			t.Errorf("settings.%s differs from PocketBase's (-PocketBase +strongbox):\n%s", section, diff)
		}
	}
	for section := range got.Settings {
		if _, ok := want.Settings[section]; !ok {
			t.Errorf("settings.%s is not in PocketBase's settings", section)
		}
	}
	if len(got.Logs) != len(want.Logs) || len(got.Stats) != len(want.Stats) {
		t.Fatalf("%d logs and %d stats answers, want %d and %d", len(got.Logs), len(got.Stats), len(want.Logs), len(want.Stats))
	}
	for i, w := range want.Logs {
		if diff := cmp.Diff(w.Answer, got.Logs[i].Answer); diff != "" {
			t.Errorf("GET /api/logs %v differs from PocketBase's answer (-PocketBase +strongbox):\n%s", w.Query, diff)
		}
	}
	for i, w := range want.Stats {
		if diff := cmp.Diff(w.Answer, got.Stats[i].Answer); diff != "" {
			t.Errorf("GET /api/logs/stats filter=%s differs from PocketBase's answer (-PocketBase +strongbox):\n%s", w.Filter, diff)
		}
	}
}

// TestImportPocketBaseKilled imports the data dir of a PocketBase killed
// (SIGKILL) right after a write: its data.db-wal holds the committed
// transaction, which the import must have.
func TestImportPocketBaseKilled(t *testing.T) {
	pocketbase, _, _ := importTools(t)
	bin := strongboxBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	data := filepath.Join(t.TempDir(), "pb_data")
	pb := startPB(t, ctx, pocketbase, data)
	email, password := fmt.Sprintf("killed-%x@example.com", time.Now().UnixNano()), "Killed-password-1"
	body, _ := json.Marshal(map[string]any{"email": email, "password": password, "passwordConfirm": password})
	resp, err := importHTTP.Post(pb.base+"/api/collections/users/records", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct{ ID string }
	json.NewDecoder(resp.Body).Decode(&rec)
	resp.Body.Close()
	pb.cmd.Process.Kill()
	<-pb.done
	if resp.StatusCode != http.StatusOK || rec.ID == "" {
		t.Fatalf("sign-up on PocketBase answered %d", resp.StatusCode)
	}
	wal, _ := os.ReadFile(filepath.Join(data, "data.db-wal"))
	db, _ := os.ReadFile(filepath.Join(data, "data.db"))
	if !bytes.Contains(wal, []byte(email)) || bytes.Contains(db, []byte(email)) {
		t.Fatalf("the new user is not (only) in data.db-wal (%d bytes): the case does not test the WAL", len(wal))
	}

	target := filepath.Join(t.TempDir(), "sb_data")
	out, err := runStrongbox(ctx, bin, "import", "pocketbase", data, "--dir", target)
	t.Logf("strongbox import pocketbase:\n%s", out)
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	sb := serveImported(t, ctx, bin, target)
	body, _ = json.Marshal(map[string]string{"identity": email, "password": password})
	resp, err = importHTTP.Post(sb.Base+"/api/collections/users/auth-with-password", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var auth struct{ Record struct{ ID string } }
	json.NewDecoder(resp.Body).Decode(&auth)
	if resp.StatusCode != http.StatusOK || auth.Record.ID != rec.ID {
		t.Errorf("the user written just before the kill: sign-in answered %d with record %q, want 200 with %q", resp.StatusCode, auth.Record.ID, rec.ID)
	}
}
