package app

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"strongbox/backup"
	"strongbox/backup/cron"
	"strongbox/httpapi/settings"
)

// TestBackupCheckRoutes: POST /api/backups/check checks every stored
// archive in the background; GET reports it; a damaged archive is an
// error event naming it, a mail to the superusers (here the outbox, SMTP
// being off) naming the key but no server path, and the metrics.
func TestBackupCheckRoutes(t *testing.T) {
	t.Parallel()
	var maddr net.Addr
	es := startEventsServer(t, func(c *Config) {
		c.MetricsAddr = "127.0.0.1:0"
		c.OnReady = func(r Ready) { maddr = r.Metrics }
	})
	es.call("POST", "/api/backups", `{"name":"good.zip"}`, 204)
	good, err := os.ReadFile(filepath.Join(es.dir, "backups", "good.zip"))
	if err != nil {
		t.Fatal(err)
	}
	bad := append([]byte(nil), good...)
	bad[len(bad)/3] ^= 0xff
	if err := os.WriteFile(filepath.Join(es.dir, "backups", "bad.zip"), bad, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := es.do(t, "POST", "/api/backups/check", "", ""); code == 204 {
		t.Fatal("POST /api/backups/check without a token = 204")
	}
	es.call("POST", "/api/backups/check", "", 204)
	var st struct {
		Running bool
		Last    *struct {
			Checked int
			Bytes   int64
			Error   string
			Bad     []struct {
				Key, Reason string
				Unread      bool
			}
		}
	}
	for deadline := time.Now().Add(20 * time.Second); ; {
		if err := json.Unmarshal(es.call("GET", "/api/backups/check", "", 200), &st); err != nil {
			t.Fatal(err)
		}
		if !st.Running && st.Last != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the check did not end within 20 s: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if l := st.Last; l.Checked != 1 || l.Error != "" || len(l.Bad) != 1 || l.Bad[0].Key != "bad.zip" || l.Bad[0].Unread || l.Bad[0].Reason == "" || l.Bytes < int64(len(good)) {
		t.Fatalf("GET /api/backups/check: last %+v, want good.zip checked, bad.zip damaged", *l)
	}
	if log := es.stderr.String(); !strings.Contains(log, `level=ERROR msg="backup check: archive failed" key=bad.zip`) || !strings.Contains(log, `msg="backup check failed" checked=1 bad=1`) {
		t.Errorf("stderr lacks the check's error events:\n%s", log)
	}
	var mail string
	for deadline := time.Now().Add(10 * time.Second); mail == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		files, _ := filepath.Glob(filepath.Join(es.dir, MailDir, "*.eml"))
		for _, f := range files {
			if b, _ := os.ReadFile(f); strings.Contains(string(b), "backup check failed") {
				mail = string(b)
			}
		}
	}
	if !strings.Contains(mail, "bad.zip") || !strings.Contains(mail, testEmail) || strings.Contains(mail, es.dir) {
		t.Errorf("the superuser's mail does not name bad.zip to %s, or names the data dir:\n%s", testEmail, mail)
	}
	out := scrape(t, "http://"+maddr.String())
	for _, want := range []string{"strongbox_backup_archives_bad 1\n", "strongbox_backup_archives_checked 1\n", "strongbox_backup_check_failures_total 1\n", "strongbox_backup_check_last_run_timestamp_seconds "} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
}

// TestBackupCheckSchedule: the check follows checkCron, runs at the due
// UTC minute only, one at a time (Start refuses while one runs), and
// stop cancels it. Time is a synctest bubble's.
func TestBackupCheckSchedule(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		d := openBackupDir(t, t.TempDir())
		(&fakeCreate{d: d}).create(t.Context(), "a.zip")
		release := make(chan struct{})
		var lb logBuffer
		c := &archiveCheck{log: lb.logger(), now: time.Now, store: func() backup.Storage { return gatedStorage{d.Storage(), release} }}
		c.sched = cron.New(c.now)
		c.ctx, c.cancel = t.Context(), func() {}
		c.reload(settings.Settings{Backups: settings.Backups{BackupsKeep: settings.BackupsKeep{CheckCron: "30 * * * *"}}})
		c.start()
		time.Sleep(29*time.Minute + 59*time.Second) // 00:29:59: not due yet
		synctest.Wait()
		if last, running := c.State(); last != nil || running {
			t.Fatalf("at 00:29:59: %v, running %v; want no check yet", last, running)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if _, running := c.State(); !running {
			t.Fatal("at 00:30:01 no check runs")
		}
		if c.Start() {
			t.Error("Start while a check runs = true")
		}
		close(release)
		synctest.Wait()
		last, running := c.State()
		if running || last == nil || last.Checked != 1 || !last.OK() {
			t.Fatalf("after the run: %+v, running %v; want a.zip checked", last, running)
		}
		c.sched.Stop()
	})
}

// gatedStorage is a storage whose listing waits for release.
type gatedStorage struct {
	backup.Storage
	release chan struct{}
}

func (g gatedStorage) List(ctx context.Context) ([]backup.Info, error) {
	<-g.release
	return g.Storage.List(ctx)
}
