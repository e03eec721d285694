package app

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"strongbox/backup"
	"strongbox/backup/backuptest"
	"strongbox/httpapi/settings"
)

// fakeCreate is the create of a schedule under test: it records the keys
// and writes a small archive, or fails with err.
type fakeCreate struct {
	d   *backup.Dir
	st  backup.Storage // where it creates; nil = d
	err error

	mu   sync.Mutex
	keys []string
}

func (f *fakeCreate) create(ctx context.Context, key string) (backup.Info, error) {
	f.mu.Lock()
	f.keys = append(f.keys, key)
	f.mu.Unlock()
	if f.err != nil {
		return backup.Info{}, f.err
	}
	src := backup.Source{{Name: "auth.journal", Size: 1, Open: func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader("x")), nil
	}}}
	st := f.st
	if st == nil {
		st = f.d.Storage()
	}
	return st.Create(ctx, key, src, backup.Meta{Created: captureTime})
}

func (f *fakeCreate) created() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.keys)
}

// keys lists the archives of d.
func keys(t *testing.T, d *backup.Dir) []string {
	t.Helper()
	list, err := d.List()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, i := range list {
		out = append(out, i.Key)
	}
	return out
}

// TestAutoBackupRun: one run of the schedule, with its pruning.
func TestAutoBackupRun(t *testing.T) {
	t.Parallel()
	// The archives there before the run, each with its modification time
	// in minutes before captureTime.
	existing := []struct {
		key string
		age int
	}{
		{"@auto_sb_backup_20261123155000.zip", 10},
		{"@auto_sb_backup_20261123154000.zip", 20},
		{"@auto_sb_backup_20261123153000.zip", 30},
		{"@auto_b.zip", 20}, // same time as ...154000: the key breaks the tie
		{"manual.zip", 100},
		{"uploaded.zip", 200},
	}
	newKey := "@auto_sb_backup_20261123160000.zip"
	tests := []struct {
		name      string
		keep      int
		createErr error
		busy      bool     // another operation holds the lock
		want      []string // the archives after the run
		wantLog   string
	}{
		{"keeps the newest 2", 2, nil, false,
			[]string{newKey, "@auto_sb_backup_20261123155000.zip", "manual.zip", "uploaded.zip"}, "auto backup created"},
		{"tie broken by key", 3, nil, false,
			[]string{newKey, "@auto_sb_backup_20261123154000.zip", "@auto_sb_backup_20261123155000.zip", "manual.zip", "uploaded.zip"}, "auto backup pruned"},
		{"keeps 1: only the new one", 1, nil, false,
			[]string{newKey, "manual.zip", "uploaded.zip"}, "auto backup pruned"},
		{"keep more than there are", 10, nil, false,
			[]string{newKey, "@auto_b.zip", "@auto_sb_backup_20261123153000.zip", "@auto_sb_backup_20261123154000.zip", "@auto_sb_backup_20261123155000.zip", "manual.zip", "uploaded.zip"}, "auto backup created"},
		{"failed create deletes nothing", 1, errors.New("disk on fire"), false,
			[]string{"@auto_b.zip", "@auto_sb_backup_20261123153000.zip", "@auto_sb_backup_20261123154000.zip", "@auto_sb_backup_20261123155000.zip", "manual.zip", "uploaded.zip"}, "disk on fire"},
		{"busy lock skips", 1, nil, true,
			[]string{"@auto_b.zip", "@auto_sb_backup_20261123153000.zip", "@auto_sb_backup_20261123154000.zip", "@auto_sb_backup_20261123155000.zip", "manual.zip", "uploaded.zip"}, "auto backup skipped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dataDir := t.TempDir()
			d := openBackupDir(t, dataDir)
			base := time.Now()
			for _, e := range existing {
				fc := &fakeCreate{d: d}
				if _, err := fc.create(t.Context(), e.key); err != nil {
					t.Fatal(err)
				}
				// Older than the archive the run creates, which is
				// modified now.
				mt := base.Add(-time.Duration(e.age) * time.Minute)
				if err := os.Chtimes(filepath.Join(dataDir, "backups", e.key), mt, mt); err != nil {
					t.Fatal(err)
				}
			}
			var logBuf bytes.Buffer
			var lock backup.Lock
			fc := &fakeCreate{d: d, err: tt.createErr}
			a := newSchedule(slog.New(slog.NewTextHandler(&logBuf, nil)), fixedNow, func() backup.Storage { return d.Storage() }, &lock, fc.create)
			a.reload(settings.Settings{Backups: settings.Backups{Cron: "* * * * *", CronMaxKeep: tt.keep}})
			if tt.busy {
				release, _ := lock.TryLock(backup.KindRestore, "manual.zip")
				defer release()
			}

			a.run(captureTime)

			if got, want := keys(t, d), slices.Sorted(slices.Values(tt.want)); !slices.Equal(got, want) {
				t.Errorf("after the run: %q, want %q", got, want)
			}
			if tt.busy && len(fc.created()) != 0 {
				t.Errorf("created %q while the lock was held", fc.created())
			}
			if !strings.Contains(logBuf.String(), tt.wantLog) {
				t.Errorf("log %q does not mention %q", logBuf.String(), tt.wantLog)
			}
			if _, _, held := lock.Held(); held != tt.busy {
				t.Errorf("lock held after the run: %v, want %v", held, tt.busy)
			}
		})
	}
}

// TestAutoBackupSchedule: the schedule follows the settings, runs at the
// matching UTC minutes only, and stops when cron is emptied. Time is the
// fake clock of a synctest bubble (starting 2000-01-01 00:00 UTC), which
// the scheduler reads and sleeps on.
func TestAutoBackupSchedule(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dataDir := t.TempDir()
		d := openBackupDir(t, dataDir)
		st, err := settings.Open(filepath.Join(dataDir, "settings.journal"), settings.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		var lock backup.Lock
		fc := &fakeCreate{d: d}
		a := newSchedule(slog.New(slog.DiscardHandler), time.Now, func() backup.Storage { return d.Storage() }, &lock, fc.create)
		defer st.Subscribe(a.reload)()
		a.start()
		defer a.stop()

		set := func(cron string, keep int) {
			t.Helper()
			if _, err := st.Update(func(v *settings.Settings) error {
				v.Backups.Cron, v.Backups.CronMaxKeep = cron, keep
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		// advance lets the fake time run for d and every run end. In
		// the bubble, time.Sleep waits on the fake clock: it returns as
		// soon as every goroutine of the bubble is blocked, not after d.
		advance := func(d time.Duration) {
			time.Sleep(d)
			synctest.Wait()
		}
		steps := []struct {
			cron    string // "" turns it off; "-" leaves it as it is
			keep    int
			advance time.Duration
			want    []string // the keys created during the step
		}{
			{"-", 0, 10 * time.Minute, nil}, // no cron at start
			{"*/4 * * * *", 2, 10*time.Minute + 30*time.Second, []string{
				"@auto_sb_backup_20000101001200.zip", "@auto_sb_backup_20000101001600.zip", "@auto_sb_backup_20000101002000.zip"}},
			{"", 2, 30 * time.Minute, nil}, // off
			{"5 * * * *", 2, time.Hour, []string{"@auto_sb_backup_20000101010500.zip"}},
			{"@hourly", 5, 2 * time.Hour, []string{"@auto_sb_backup_20000101020000.zip", "@auto_sb_backup_20000101030000.zip"}},
		}
		seen := 0
		for i, s := range steps {
			if s.cron != "-" {
				set(s.cron, s.keep)
			}
			advance(s.advance)
			got := fc.created()[seen:]
			seen += len(got)
			if !slices.Equal(got, s.want) {
				t.Errorf("step %d (cron %q, now %s): created %q, want %q", i, s.cron, time.Now().UTC().Format(time.TimeOnly), got, s.want)
			}
		}
		// With cronMaxKeep 2 then 5, the last step kept the newest 4 of 5
		// after pruning to 2 at 01:05: 00:20, 01:05, 02:00, 03:00.
		want := []string{"@auto_sb_backup_20000101002000.zip", "@auto_sb_backup_20000101010500.zip",
			"@auto_sb_backup_20000101020000.zip", "@auto_sb_backup_20000101030000.zip"}
		if got := keys(t, d); !slices.Equal(got, want) {
			t.Errorf("archives at the end: %q, want %q", got, want)
		}
	})
}

// TestAutoBackupFollowsSettings: the running server's schedule follows
// PATCH /api/settings, at start and after a restart in place (which
// subscribes it to the reopened settings store).
func TestAutoBackupFollowsSettings(t *testing.T) {
	t.Parallel()
	ts := startServer(t, t.TempDir(), nil, nil)
	token := ts.login(t)
	keep := func() backup.Retention {
		ts.auto.mu.Lock()
		defer ts.auto.mu.Unlock()
		return ts.auto.keep
	}
	for round, restart := range []bool{false, true} {
		if restart {
			if err := ts.Restart(t.Context(), nil); err != nil {
				t.Fatal(err)
			}
		}
		want := backup.Retention{Last: 5 + round, Daily: 7, Weekly: 4 + round, Monthly: 12}
		body := `{"backups":{"cron":"@daily","cronMaxKeep":` + strconv.Itoa(want.Last) + `,"cronKeepDaily":7,"cronKeepWeekly":` + strconv.Itoa(want.Weekly) + `,"cronKeepMonthly":12}}`
		if code, b, err := ts.do(t, "PATCH", "/api/settings", token, body); err != nil || code != 200 {
			t.Fatalf("PATCH /api/settings: %d %s %v", code, b, err)
		}
		if got := keep(); got != want {
			t.Errorf("round %d: the schedule keeps %+v, want %+v", round, got, want)
		}
	}
}

// TestAutoBackupRetention: a run prunes by the whole retention of the
// settings (cronMaxKeep and the daily keep), in the folder and in a bucket,
// and never a manual archive, however old.
func TestAutoBackupRetention(t *testing.T) {
	t.Parallel()
	for _, onS3 := range []bool{false, true} {
		t.Run(map[bool]string{false: "folder", true: "bucket"}[onS3], func(t *testing.T) {
			dataDir := t.TempDir()
			d := openBackupDir(t, dataDir)
			// The run's archive is modified now (the folder's clock, or
			// the bucket's); the others on the UTC days before, at 12:00
			// and 11:00 yesterday, and 12:00 2, 9 and 40 days ago.
			now := time.Now().UTC()
			if onS3 {
				now = captureTime
			}
			today := now.Truncate(24 * time.Hour)
			day := func(n, h int) time.Time { return today.AddDate(0, 0, -n).Add(time.Duration(h) * time.Hour) }
			existing := []struct {
				key string
				mt  time.Time
			}{
				{"@auto_sb_backup_1.zip", day(1, 12)}, {"@auto_sb_backup_2.zip", day(1, 11)}, {"@auto_sb_backup_3.zip", day(2, 12)},
				{"@auto_sb_backup_4.zip", day(9, 12)}, {"@auto_sb_backup_5.zip", day(40, 12)}, {"manual.zip", day(400, 12)},
			}
			var st backup.Storage = d.Storage()
			list := func() []string { return keys(t, d) }
			if onS3 {
				clock := now
				bucket := &backuptest.Bucket{Now: func() time.Time { return clock }}
				for _, e := range existing {
					clock = e.mt
					bucket.Set(e.key, []byte("x"))
				}
				clock = now
				st, list = backup.NewS3Storage(bucket, d), bucket.Keys
			} else {
				for _, e := range existing {
					if _, err := (&fakeCreate{d: d}).create(t.Context(), e.key); err != nil {
						t.Fatal(err)
					}
					if err := os.Chtimes(filepath.Join(dataDir, "backups", e.key), e.mt, e.mt); err != nil {
						t.Fatal(err)
					}
				}
			}
			var lock backup.Lock
			fc := &fakeCreate{d: d, st: st}
			a := newSchedule(slog.New(slog.DiscardHandler), fixedNow, func() backup.Storage { return st }, &lock, fc.create)
			a.reload(settings.Settings{Backups: settings.Backups{Cron: "* * * * *", CronMaxKeep: 1, BackupsKeep: settings.BackupsKeep{CronKeepDaily: 3}}})
			a.run(captureTime)
			want := []string{"@auto_sb_backup_1.zip", "@auto_sb_backup_20261123160000.zip", "@auto_sb_backup_3.zip", "manual.zip"}
			if got := list(); !slices.Equal(got, want) {
				t.Errorf("after the run: %q, want %q", got, want)
			}
		})
	}
}
