package stream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"strongbox/backup/backuptest"
	"strongbox/logstore/journal"
)

// dataDir is a data dir of journals for the tests, captured as the
// server's stores capture theirs.
type dataDir struct {
	t     testing.TB
	dir   string
	files map[string]*journal.File
}

func newDataDir(t testing.TB) *dataDir {
	d := &dataDir{t: t, dir: t.TempDir(), files: map[string]*journal.File{}}
	t.Cleanup(func() {
		for _, f := range d.files {
			f.Close()
		}
	})
	return d
}

// write appends payloads to the journal name (opening it first) and
// syncs, as a store acknowledges a change.
func (d *dataDir) write(name string, payloads ...string) {
	d.t.Helper()
	f := d.files[name]
	if f == nil {
		path := filepath.Join(d.dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(path), 0o700)
		var err error
		if f, err = journal.Open(path, journal.Options{}, nil); err != nil {
			d.t.Fatal(err)
		}
		d.files[name] = f
	}
	for _, p := range payloads {
		if _, err := f.Append([]byte(p)); err != nil {
			d.t.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		d.t.Fatal(err)
	}
}

func (d *dataDir) compact(name string, payloads ...string) {
	d.t.Helper()
	err := d.files[name].Compact(func(w *journal.Writer) error {
		for _, p := range payloads {
			if _, err := w.Append([]byte(p)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		d.t.Fatal(err)
	}
}

func (d *dataDir) remove(name string) {
	d.t.Helper()
	d.files[name].Discard()
	delete(d.files, name)
	if err := os.Remove(filepath.Join(d.dir, filepath.FromSlash(name))); err != nil {
		d.t.Fatal(err)
	}
}

// capture is the stores' Capture for the shipper.
func (d *dataDir) capture() (*Capture, error) {
	c := &Capture{Time: time.Now()}
	var secs []*journal.Section
	for _, name := range slices.Sorted(maps.Keys(d.files)) {
		sec, err := d.files[name].Capture()
		if err != nil {
			return nil, err
		}
		secs = append(secs, sec)
		c.Files = append(c.Files, FromSection(name, sec))
	}
	c.Close = func() error {
		for _, s := range secs {
			s.Close()
		}
		return nil
	}
	return c, nil
}

// state returns the committed bytes of every file, by name.
func (d *dataDir) state() map[string]string {
	out := map[string]string{}
	for name, f := range d.files {
		b, err := os.ReadFile(f.Path())
		if err != nil {
			d.t.Fatal(err)
		}
		out[name] = string(b[:f.Committed()])
	}
	return out
}

// readTree returns the files under dir, by slash name.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	return out
}

func sameState(a, b map[string]string) string {
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if v, ok := b[k]; !ok {
			return fmt.Sprintf("%s missing", k)
		} else if v != a[k] {
			return fmt.Sprintf("%s: %d bytes, want %d", k, len(v), len(a[k]))
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			return fmt.Sprintf("%s should not be there", k)
		}
	}
	return ""
}

// point is the state of the data dir at an instant.
type point struct {
	at    time.Time
	state map[string]string
}

// history writes a history of changes, shipping now and then, and
// returns the state after each write: appends to two journals, a new
// log segment, a compaction between two captures (whose tail only the
// capture's Prior holds), and a segment deleted.
func history(t *testing.T, d *dataDir, s *Shipper) []point {
	var pts []point
	ctx := context.Background()
	mark := func() { pts = append(pts, point{time.Now(), d.state()}) }
	step := func() {
		t.Helper()
		if err := s.step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	d.write("auth.journal", "u1")
	d.write("logs/0001", "l1", "l2")
	step() // the base
	mark()
	for i := range 3 {
		d.write("auth.journal", fmt.Sprintf("u%d", i+2))
		mark()
	}
	d.write("logs/0001", "l3")
	mark()
	step()
	d.write("auth.journal", "tail")
	mark()
	d.compact("auth.journal", "compacted")
	mark()
	d.write("auth.journal", "after")
	mark()
	d.write("logs/0002", "m1")
	mark()
	step()
	// A deletion is restored from the capture that saw it: retention
	// acknowledges nothing to anyone.
	d.remove("logs/0001")
	step()
	d.write("auth.journal", "last")
	mark()
	step()
	return pts
}

// TestShipRestore ships a history of changes and restores the latest
// state and the state at every instant of it: exactly the writes
// acknowledged by then.
func TestShipRestore(t *testing.T) {
	d := newDataDir(t)
	b := &backuptest.Bucket{}
	s := newShipper(Options{Bucket: b, Capture: d.capture})
	pts := history(t, d, s)
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "latest")
	res, err := Restore(ctx, RestoreOptions{Bucket: b}, out)
	if err != nil {
		t.Fatal(err)
	}
	if diff := sameState(pts[len(pts)-1].state, readTree(t, out)); diff != "" {
		t.Fatalf("latest: %s", diff)
	}
	if res.Objects != 5 || res.Damage != "" {
		t.Fatalf("result %+v, want 5 objects and no damage", res)
	}
	for i, p := range pts {
		out := filepath.Join(t.TempDir(), fmt.Sprint(i))
		res, err := Restore(ctx, RestoreOptions{Bucket: b, At: p.at}, out)
		if err != nil {
			t.Fatalf("point %d: %v", i, err)
		}
		if diff := sameState(p.state, readTree(t, out)); diff != "" {
			t.Errorf("point %d (%s): %s", i, p.at.Format(TimeLayout), diff)
		}
		if !res.Exact {
			t.Errorf("point %d: not exact", i)
		}
	}
	if _, err := Restore(ctx, RestoreOptions{Bucket: b, At: pts[0].at.Add(-time.Hour)}, filepath.Join(t.TempDir(), "x")); !errors.Is(err, ErrNothing) {
		t.Fatalf("restore before the range: %v, want ErrNothing", err)
	}
	spans, err := List(ctx, RestoreOptions{Bucket: b})
	if err != nil || len(spans) != 1 || spans[0].Objects != 5 {
		t.Fatalf("List = %+v, %v; want one generation of 5 objects", spans, err)
	}
}

// TestRestoreDamage alters and deletes objects of a shipped stream: the
// restore stops at the last object that checks out and says so, and a
// damaged base falls back to the generation before.
func TestRestoreDamage(t *testing.T) {
	tests := []struct {
		name   string
		damage func(b *backuptest.Bucket, keys []string)
		want   int    // the point restored, an index of the history
		msg    string // in Result.Damage
	}{
		{"object deleted", func(b *backuptest.Bucket, keys []string) { b.Delete(context.Background(), keys[2]) }, 4, "object 2 is missing"},
		{"byte flipped", func(b *backuptest.Bucket, keys []string) {
			data, _ := b.Data(keys[2])
			data = bytes.Clone(data)
			data[len(data)/2] ^= 1
			b.Set(keys[2], data)
		}, 4, "object 2"},
		{"truncated", func(b *backuptest.Bucket, keys []string) {
			data, _ := b.Data(keys[3])
			b.Set(keys[3], data[:len(data)-5])
		}, 8, "object 3"},
		{"replaced by an earlier one", func(b *backuptest.Bucket, keys []string) {
			data, _ := b.Data(keys[1])
			b.Set(keys[2], data)
		}, 4, "does not follow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDataDir(t)
			b := &backuptest.Bucket{}
			s := newShipper(Options{Bucket: b, Capture: d.capture})
			pts := history(t, d, s)
			var keys []string
			for _, k := range b.Keys() {
				if strings.Contains(k, "/data/") {
					keys = append(keys, k)
				}
			}
			tt.damage(b, keys)
			out := filepath.Join(t.TempDir(), "r")
			res, err := Restore(context.Background(), RestoreOptions{Bucket: b}, out)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Damage, tt.msg) {
				t.Fatalf("Damage = %q, want it to say %q", res.Damage, tt.msg)
			}
			if diff := sameState(pts[tt.want].state, readTree(t, out)); diff != "" {
				t.Fatalf("restored: %s, want the state of point %d", diff, tt.want)
			}
		})
	}
}

// TestRestoreTarget checks that a restore refuses a target that holds
// files and leaves nothing behind when there is nothing to restore.
func TestRestoreTarget(t *testing.T) {
	b := &backuptest.Bucket{}
	parent := t.TempDir()
	full := filepath.Join(parent, "full")
	os.Mkdir(full, 0o700)
	os.WriteFile(filepath.Join(full, "x"), nil, 0o600)
	if _, err := Restore(context.Background(), RestoreOptions{Bucket: b}, full); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("restore into a full dir: %v", err)
	}
	if _, err := Restore(context.Background(), RestoreOptions{Bucket: b}, filepath.Join(parent, "new")); !errors.Is(err, ErrNothing) {
		t.Fatalf("restore of an empty bucket: %v, want ErrNothing", err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 1 {
		t.Fatalf("left behind: %v", ents)
	}
}

// slowBucket answers each Get after a delay, as a far bucket does, and
// counts the Gets in flight at once; lose, if set, makes the first Get of
// that key fail (a fetch ahead that fails must be retried in its turn).
type slowBucket struct {
	*backuptest.Bucket
	delay               time.Duration
	lose                string
	lost                atomic.Bool
	inFlight, maxFlight atomic.Int64
}

func (b *slowBucket) Get(ctx context.Context, key string, off, n int64) (io.ReadCloser, Object, error) {
	if k := b.inFlight.Add(1); k > b.maxFlight.Load() {
		b.maxFlight.Store(k)
	}
	defer b.inFlight.Add(-1)
	time.Sleep(b.delay)
	if key == b.lose && b.lost.CompareAndSwap(false, true) {
		return nil, Object{}, errors.New("connection reset")
	}
	return b.Bucket.Get(ctx, key, off, n)
}

// TestRestoreReadsAhead: a restore fetches the increments ahead of the
// one it applies, several at once, and restores the same state as one at
// a time would, at every point; a fetch ahead that failed is read again
// in its turn.
func TestRestoreReadsAhead(t *testing.T) {
	d := newDataDir(t)
	b := &slowBucket{Bucket: &backuptest.Bucket{}, delay: 5 * time.Millisecond}
	s := newShipper(Options{Bucket: b, Capture: d.capture})
	pts := history(t, d, s)
	ctx := context.Background()
	for i := range 20 {
		d.write("auth.journal", fmt.Sprintf("more %d", i))
		if err := s.step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	latest := d.state()
	b.lose = objectKey(DefaultPrefix, s.gen.id, 7)
	out := filepath.Join(t.TempDir(), "latest")
	res, err := Restore(ctx, RestoreOptions{Bucket: b}, out)
	if err != nil {
		t.Fatal(err)
	}
	if diff := sameState(latest, readTree(t, out)); diff != "" || res.Damage != "" {
		t.Fatalf("latest: %s (damage %q)", diff, res.Damage)
	}
	if !b.lost.Load() || b.maxFlight.Load() < 2 {
		t.Errorf("lost a fetch %v, at most %d Gets at once; want one lost and several at once", b.lost.Load(), b.maxFlight.Load())
	}
	for i, p := range pts {
		out := filepath.Join(t.TempDir(), fmt.Sprint(i))
		if _, err := Restore(ctx, RestoreOptions{Bucket: b, At: p.at}, out); err != nil {
			t.Fatalf("point %d: %v", i, err)
		}
		if diff := sameState(p.state, readTree(t, out)); diff != "" {
			t.Errorf("point %d: %s", i, diff)
		}
	}
}
