package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"strongbox/backup/s3"
	"strongbox/backup/s3/s3test"
	"strongbox/backup/stream"
	"strongbox/logstore"
)

// simMarks gives the commit marks of the captures a simulated clock: a
// mark first seen by a capture takes the simulated instant of that
// capture (the journals' own marks have the wall clock's), and keeps it
// in every later capture. So a history of a simulated day ships as the
// shipper would ship it over a real one, its writes acknowledged at the
// simulated instants, and a restore --at one of them is checked exactly.
type simMarks struct {
	mu   sync.Mutex
	now  time.Time
	seen map[string]time.Time // "name ident end" → simulated instant
}

func (m *simMarks) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

func (m *simMarks) advance(d time.Duration) {
	m.mu.Lock()
	m.now = m.now.Add(d)
	m.mu.Unlock()
}

// rewrite sets the marks of f (and of its Prior) to simulated instants.
func (m *simMarks) rewrite(f *stream.File, at time.Time) {
	for i := range f.Marks {
		k := fmt.Sprint(f.Name, f.Ident, f.Marks[i].End)
		t, ok := m.seen[k]
		if !ok {
			t = at
			m.seen[k] = t
		}
		f.Marks[i].Time = t
	}
	if f.Prior != nil {
		m.rewrite(f.Prior, at)
	}
}

// TestStreamDayBackFigures measures the restore a day back of the
// issue's figure: a data dir of 1,000,000 logs and 100,000 users, then
// 26 simulated hours of writes (3 users and 20 logs every 30 s, each
// step shipped as an increment to versitygw, a new generation at 24 h,
// the shipper's MaxAge), restored latest, --at 24 h before the newest
// point, and --at just before the end of the first generation (its
// longest chain).
// Each restore --at must hold exactly the users acknowledged by then. It
// runs only with STRONGBOX_STREAM_FIGURES=1 and the gateway.
func TestStreamDayBackFigures(t *testing.T) {
	if os.Getenv("STRONGBOX_STREAM_FIGURES") == "" {
		t.Skip("set STRONGBOX_STREAM_FIGURES=1 to measure")
	}
	g := s3test.Start(t)
	st, users, addUsers := figureStores(t)
	n := 100_000
	add := func(k int) { addUsers(k); n += k }
	client, err := s3.New(s3.Config{Endpoint: g.Endpoint, Region: g.Region, Bucket: g.Bucket, AccessKey: g.AccessKey, Secret: g.Secret, ForcePathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	// The simulated day ends about now, so no instant is in the future.
	sim := &simMarks{now: time.Now().Add(-27 * time.Hour).UTC(), seen: map[string]time.Time{}}
	capture := func() (*stream.Capture, error) {
		c, err := st.Capture(sim.Now)
		if err != nil {
			return nil, err
		}
		out := &stream.Capture{Time: c.Created, Close: c.Close}
		sim.mu.Lock()
		for i, sec := range c.sections {
			out.Files = append(out.Files, stream.FromSection(c.Source[i].Name, sec))
			sim.rewrite(&out.Files[i], c.Created)
		}
		sim.mu.Unlock()
		return out, nil
	}
	sh := stream.Start(stream.Options{Bucket: client, Capture: capture, Interval: 2 * time.Millisecond, Now: sim.Now})
	waitShipped := func(want int64) {
		for sh.Status().Objects < want {
			time.Sleep(time.Millisecond)
		}
	}
	start := time.Now()
	waitShipped(1)
	t.Logf("base shipped in %s: %d bytes", time.Since(start).Round(time.Millisecond), sh.Status().Bytes)
	type point struct {
		at    time.Time
		users int
		gen   string
	}
	var pts []point
	start = time.Now()
	for range 26 * 120 { // every 30 s for 26 h
		sim.advance(30 * time.Second)
		want := sh.Status().Objects + 1
		add(3)
		for range 20 {
			st.Logs.Add(logstore.Entry{Level: 0, Message: "GET /api/health"})
		}
		if err := st.Logs.Flush(); err != nil {
			t.Fatal(err)
		}
		waitShipped(want)
		s := sh.Status()
		if s.Pending {
			waitShipped(s.Objects + 1)
			s = sh.Status()
		}
		pts = append(pts, point{at: s.LastShipped, users: n, gen: s.Generation})
	}
	sh.Stop()
	newest := pts[len(pts)-1]
	t.Logf("history: %d points over %s simulated, shipped in %s, %d objects, %d bytes",
		len(pts), newest.at.Sub(pts[0].at).Round(time.Minute), time.Since(start).Round(time.Second), sh.Status().Objects, sh.Status().Bytes)
	spans, err := stream.List(context.Background(), stream.RestoreOptions{Bucket: client})
	if err != nil || len(spans) < 2 {
		t.Fatalf("List = %v, %v; want 2 generations", spans, err)
	}
	for _, sp := range spans {
		t.Logf("generation %s: %s to %s, %d objects", sp.Generation, sp.From.Format(stream.TimeLayout), sp.To.Format(stream.TimeLayout), sp.Objects)
	}
	dayBack := newest.at.Add(-24 * time.Hour)
	// Just before the first generation's last capture, which the next
	// generation's base shares: its longest chain of increments.
	firstEnd := spans[0].To.Add(-time.Nanosecond)
	for _, tc := range []struct {
		name string
		at   time.Time
	}{{"latest", time.Time{}}, {"--at 24 h before the newest point", dayBack}, {"--at the end of the first generation", firstEnd}} {
		out := filepath.Join(t.TempDir(), "r")
		start := time.Now()
		res, err := stream.Restore(context.Background(), stream.RestoreOptions{Bucket: client, At: tc.at}, out)
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		want := newest
		for _, p := range pts {
			if !tc.at.IsZero() && !p.at.After(tc.at) {
				want = p
			}
		}
		got := restoredUserCount(t, out, users.ID)
		t.Logf("restore %s (%s): %s (generation %s, %d objects, %d bytes, exact %v); %d users, want %d",
			tc.name, tc.at.Format(stream.TimeLayout), took.Round(time.Millisecond), res.Generation, res.Objects, res.Bytes, res.Exact, got, want.users)
		if got != want.users || (!tc.at.IsZero() && !res.Exact) {
			t.Errorf("restore %s: %d users (exact %v), want %d: the users acknowledged by then, none after", tc.name, got, res.Exact, want.users)
		}
	}
}

// restoredUserCount opens the restored data dir and counts its users.
func restoredUserCount(t *testing.T, dir, collection string) int {
	t.Helper()
	st, err := Open(Options{Dir: dir, BcryptCost: 4}, false)
	if err != nil {
		t.Fatalf("open the restored dir: %v", err)
	}
	defer st.Close()
	c, ok := st.Auth.Collection(collection)
	if !ok {
		t.Fatal("no users collection in the restored dir")
	}
	return len(st.Auth.Records(c))
}
