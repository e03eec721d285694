package logstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"strongbox/logstore/journal"
)

// sidecarMix adds the Seed mix and the odd cases to s: foreign ids, other
// logs with data of every JSON kind, errors with details, auth ids,
// execution times the compact column cannot hold, times far apart (a chunk
// whose times do not fit 24 bits, or 32), and urls that all differ (a
// chunk with more than 256 values).
func sidecarMix(t *testing.T, s *Store, c *clock, n int, seed uint64) {
	t.Helper()
	g := newGenerator(rand.New(rand.NewPCG(seed, 9)))
	odd := []Entry{
		{ID: fmt.Sprintf("imported%07d", seed), Message: "imported", Level: 4, Request: &Request{Method: "GET", URL: "/x", Status: 200}},
		{Message: "GET /api/zz%0D%0Ay", Request: &Request{Method: "GET", URL: "/api/zz%0d%0ay", Status: 404, Error: "not found", Details: map[string]any{"a": []any{1.5, "b", nil, true}}}},
		{Message: "POST /é?q=ü", Request: &Request{Method: "POST", URL: "/é?q=ü", Status: 400, Error: "bad", Details: "plain text", AuthID: "u1", Auth: "users"}},
		{Message: "custom message", Level: 8, Request: &Request{Method: "PATCH", URL: "/p", Status: 500, Error: "boom", ExecTime: 1e-9, RemoteIP: "10.0.0.1", UserIP: "203.0.113.9", Referer: "https://r.example/"}},
		{Message: "DELETE /d", Request: &Request{Method: "DELETE", URL: "/d", Status: 204, ExecTime: 123456.789123, AuthID: "only-id", Auth: "_superusers"}},
		{Message: "backup created", Level: 0, Attrs: map[string]any{"key": "a.zip", "size": 12.0, "list": []any{1.0, "x"}, "obj": map[string]any{"k": true}}},
		{Message: "job failed", Level: 8, Attrs: map[string]any{"status": "abc", "error": "e"}},
		{Message: "empty data", Level: -4},
	}
	for i := range n {
		var e Entry
		switch {
		case i%97 < len(odd):
			e = odd[i%97]
			if e.ID != "" {
				e.ID = fmt.Sprintf("imp%06d%06d", seed%1e6, i)
			}
		case i%5 == 0:
			e = req("GET", fmt.Sprintf("/u/%d/%d", seed, i), 200+i%3)
		default:
			e = g.entry(c.Now())
		}
		e.Created = c.Now()
		s.Add(e)
		switch {
		case i == n/2:
			c.Add(25 * 24 * time.Hour) // a chunk whose times do not fit 32 bits of ms
		case i%1000 == 999:
			c.Add(30 * 24 * time.Hour / 1000) // a chunk spanning more than 24 bits of ms
		default:
			c.Add(time.Duration(i%7) * time.Millisecond)
		}
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
}

// sidecarQueries are the filters and sorts the answers are compared over.
var (
	sidecarFilters = []string{"", "data.status >= 400", "level > 0", `data.type = "request"`, `data.type != "request"`,
		`message ~ "GET"`, `data.url ~ "/api"`, `data.auth = "users"`, `data.userAgent ~ "curl"`, `data.error != ""`,
		`data.execTime > 10`, `data.authId = "u1"`, `data.size = 12`, `data.status = "abc"`, `data.details ~ "plain"`,
		`data.referer != ""`, `data.userIp = "203.0.113.9"`, "rowid > 100 && rowid < 2000"}
	sidecarSorts = []string{"", "-created", "data.url,-rowid", "-data.execTime", "level,-data.status", "-rowid", "message"}
)

// answers returns every answer of s the comparison covers, as JSON: List
// over every filter and sort (two pages), Stats over every filter, Get of
// every entry, After from the start, Len and the id key.
func answers(t *testing.T, s *Store) []string {
	t.Helper()
	var out []string
	add := func(what string, v any, err error) {
		var b []byte
		var jerr error
		switch v := v.(type) {
		case Page:
			b, jerr = v.AppendJSON(nil)
		case Entry:
			b, jerr = v.AppendJSON(nil)
		default:
			b, jerr = json.Marshal(v)
		}
		if jerr != nil {
			t.Fatal(jerr)
		}
		out = append(out, fmt.Sprintf("%s → %s (error %v)", what, b, err))
	}
	for _, f := range sidecarFilters {
		for _, so := range sidecarSorts {
			for _, q := range []Query{{Filter: f, Sort: so, PerPage: 40}, {Filter: f, Sort: so, Page: 3, PerPage: 7}} {
				p, err := s.List(q)
				add(fmt.Sprintf("List(%+v)", q), p, err)
			}
		}
		st, err := s.Stats(f)
		add(fmt.Sprintf("Stats(%q)", f), st, err)
	}
	for i, e := range all(t, s) {
		if i%5 == 0 || e.Request == nil || e.Request.Error != "" {
			got, err := s.Get(e.ID)
			add("Get "+e.ID, got, err)
		}
	}
	tail, err := s.After(0, 1_000_000)
	out = append(out, tailAnswers(t, "After(0)", tail, err)...)
	add("Len", s.Len(), nil)
	return out
}

// quickFilters are the filters quickAnswers lists by: one for each kind of
// column (none, a number, the row kind, a message, an extra, an event's
// data, an address).
var quickFilters = []string{"", "data.status >= 400", `data.type != "request"`, `message ~ "GET"`,
	`data.authId = "u1"`, `data.size = 12`, `data.userIp = "203.0.113.9"`}

// quickAnswers is answers over fewer queries, for the tests that compare
// many stores: every entry whole (After), Len, Stats and the first page of
// List over quickFilters in two orders. TestSidecarSameAnswers compares
// all of answers.
func quickAnswers(t *testing.T, s *Store) []string {
	t.Helper()
	var out []string
	add := func(what string, v any, err error) {
		var b []byte
		var jerr error
		switch v := v.(type) {
		case Page:
			b, jerr = v.AppendJSON(nil)
		default:
			b, jerr = json.Marshal(v)
		}
		if jerr != nil {
			t.Fatal(jerr)
		}
		out = append(out, fmt.Sprintf("%s → %s (error %v)", what, b, err))
	}
	for _, f := range quickFilters {
		for _, so := range []string{"", "data.url,-rowid"} {
			q := Query{Filter: f, Sort: so, PerPage: 40}
			p, err := s.List(q)
			add(fmt.Sprintf("List(%+v)", q), p, err)
		}
		st, err := s.Stats(f)
		add(fmt.Sprintf("Stats(%q)", f), st, err)
	}
	tail, err := s.After(0, 1_000_000)
	out = append(out, tailAnswers(t, "After(0)", tail, err)...)
	add("Len", s.Len(), nil)
	return out
}

// tailAnswers is what answers and quickAnswers record of the tail tl (and
// err): its fields but the entries, as JSON, then a SHA-256 of each run of
// tailRun entries as Entry.AppendJSON writes them (what json.Marshal would
// call). The digests compare every byte of every entry without building
// and copying the whole tail as one string, and name the run that differs.
func tailAnswers(t *testing.T, what string, tl Tail, err error) []string {
	t.Helper()
	entries := tl.Entries
	tl.Entries = nil
	head, jerr := json.Marshal(tl)
	if jerr != nil {
		t.Fatal(jerr)
	}
	out := []string{fmt.Sprintf("%s → %s, %d entries (error %v)", what, head, len(entries), err)}
	var b []byte
	for i := 0; i < len(entries); i += tailRun {
		h := sha256.New()
		for _, e := range entries[i:min(i+tailRun, len(entries))] {
			if b, jerr = e.AppendJSON(b[:0]); jerr != nil {
				t.Fatal(jerr)
			}
			h.Write(b)
			h.Write([]byte{'\n'})
		}
		out = append(out, fmt.Sprintf("%s entries %d to %d (ids %s…): sha256 %x", what, i,
			min(i+tailRun, len(entries))-1, entries[i].ID, h.Sum(nil)))
	}
	return out
}

// tailRun is the number of entries a digest of tailAnswers covers.
const tailRun = 500

// sameAnswers fails t at the first answer of got that differs from want.
func sameAnswers(t *testing.T, what string, want, got []string) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%s: %d answers, want %d", what, len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("%s: answer %d differs:\n got %.600s\nwant %.600s", what, i, got[i], want[i])
		}
	}
}

// sidecarStore builds a store of several segments in dir: many small
// ones, then larger ones of several chunks, the last active, and closes it
// (every segment then has its sidecar). It returns the live store's
// answers when live is set.
func sidecarStore(t *testing.T, dir string, live bool) []string {
	t.Helper()
	c := newClock()
	opts := testOptions(c, &logRecorder{})
	opts.segmentSize = 16 << 10
	opts.MaxDays = 100
	s := mustOpen(t, dir, opts)
	sidecarMix(t, s, c, 400, 1)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	opts.segmentSize = 2 << 20
	s = mustOpen(t, dir, opts)
	sidecarMix(t, s, c, 20_000, 2)
	var want []string
	if live {
		want = answers(t, s)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return want
}

// openFrom opens dir and reports how many segments were loaded from their
// sidecars and how many decoded.
func openFrom(t *testing.T, dir string, h *logRecorder) (s *Store, fromSidecar, decoded int) {
	t.Helper()
	opts := testOptions(newClock(), h)
	opts.Now = func() time.Time { return t0.Add(40 * 24 * time.Hour) }
	opts.MaxDays = 100
	s = mustOpen(t, dir, opts)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	for _, seg := range s.segs {
		if seg.needSidecar {
			decoded++
		} else {
			fromSidecar++
		}
	}
	return s, fromSidecar, decoded
}

// sidecarFiles returns the paths of dir's sidecars.
func sidecarFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+sidecarExt))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func removeSidecars(t *testing.T, dir string) {
	t.Helper()
	for _, p := range sidecarFiles(t, dir) {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
}

// copyDir copies the files of dir into a new temporary directory.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range ents {
		b, err := os.ReadFile(filepath.Join(dir, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, de.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestSidecarSameAnswers: an index loaded from sidecars answers every
// query, entry and tail exactly as the store that wrote them and as one
// built by decoding the segments, for sidecars written at rotation and
// close by a live store and for those a decoding start writes; and a
// start after a clean close reads no frame.
func TestSidecarSameAnswers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	live := sidecarStore(t, dir, true)
	segs := len(segmentNames(t, dir))
	if n := len(sidecarFiles(t, dir)); n != segs || segs < 5 {
		t.Fatalf("%d sidecars for %d segments, want one each of 5 or more", n, segs)
	}

	s, side, dec := openFrom(t, dir, &logRecorder{})
	if side != segs || dec != 0 {
		t.Fatalf("from sidecars: %d segments, decoded %d; want %d and 0", side, dec, segs)
	}
	sameAnswers(t, "loaded from the live store's sidecars", live, answers(t, s))
	s.Close()

	removeSidecars(t, dir)
	s, side, dec = openFrom(t, dir, &logRecorder{})
	if side != 0 || dec != segs {
		t.Fatalf("without sidecars: %d segments from sidecars, decoded %d; want 0 and %d", side, dec, segs)
	}
	sameAnswers(t, "decoded", live, answers(t, s))
	s.Close() // writes the sidecars from the decoded index

	s, side, _ = openFrom(t, dir, &logRecorder{})
	if side != segs {
		t.Fatalf("%d of %d segments from the decoding start's sidecars", side, segs)
	}
	sameAnswers(t, "loaded from a decoding start's sidecars", live, answers(t, s))
}

// segmentNames returns the names of dir's segment files.
func segmentNames(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.seg"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSidecarFallsBack: a sidecar that is torn, empty, garbage, flipped,
// of another segment, of another format version, or stale (its segment
// grew, or its tail changed at the same size) is not used: that segment is
// decoded, the answers are those of a start without sidecars, a damaged
// one is reported, and the next clean close writes a good one.
func TestSidecarFallsBack(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	sidecarStore(t, base, false)
	first := func(dir string) string { return sidecarFiles(t, dir)[0] }
	cases := []struct {
		name    string
		damage  func(t *testing.T, dir string)
		warns   bool
		segment bool // it changes a segment, not only a sidecar
	}{
		{"torn", func(t *testing.T, dir string) {
			p := first(dir)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)/2], 0o600)
		}, true, false},
		{"empty", func(t *testing.T, dir string) { os.WriteFile(first(dir), nil, 0o600) }, true, false},
		{"garbage", func(t *testing.T, dir string) {
			os.WriteFile(first(dir), bytes.Repeat([]byte{0xA5}, 5000), 0o600)
		}, true, false},
		{"flipped body byte", func(t *testing.T, dir string) {
			p := first(dir)
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 0x10
			os.WriteFile(p, b, 0o600)
		}, true, false},
		{"another segment's", func(t *testing.T, dir string) {
			ps := sidecarFiles(t, dir)
			b, _ := os.ReadFile(ps[1])
			os.WriteFile(ps[0], b, 0o600)
		}, true, false},
		{"another format version", func(t *testing.T, dir string) {
			p := first(dir)
			b, _ := os.ReadFile(p)
			b[7] = sidecarFormat + 1
			os.WriteFile(p, b, 0o600)
		}, false, false},
		{"segment grew", func(t *testing.T, dir string) {
			segs := segmentNames(t, dir)
			last := segs[len(segs)-1]
			f, _ := os.OpenFile(last, os.O_WRONLY|os.O_APPEND, 0)
			f.Write(appendTestFrame(t, dir, last))
			f.Close()
		}, false, true},
		{"segment tail changed", func(t *testing.T, dir string) {
			segs := segmentNames(t, dir)
			f, _ := os.OpenFile(segs[0], os.O_WRONLY, 0)
			fi, _ := f.Stat()
			f.WriteAt([]byte("0123456789"), fi.Size()-10) // a torn last frame
			f.Close()
		}, false, true},
		{"segment changed at the same size", func(t *testing.T, dir string) {
			rewriteLastFrame(t, segmentNames(t, dir)[0])
		}, false, true},
		{"segment truncated", func(t *testing.T, dir string) {
			segs := segmentNames(t, dir)
			fi, _ := os.Stat(segs[2])
			os.Truncate(segs[2], fi.Size()-1)
		}, false, true},
	}
	// What a start without sidecars answers: the same for every case
	// that damages only a sidecar; a case that changes a segment decodes
	// its own.
	decodedAnswers := func(t *testing.T, dir string) []string {
		ref := copyDir(t, dir)
		removeSidecars(t, ref)
		rs, _, _ := openFrom(t, ref, &logRecorder{})
		defer rs.Close()
		return quickAnswers(t, rs)
	}
	baseWant := decodedAnswers(t, base)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := copyDir(t, base)
			tc.damage(t, dir)
			want := baseWant
			if tc.segment {
				want = decodedAnswers(t, dir)
			}

			h := &logRecorder{}
			s, side, dec := openFrom(t, dir, h)
			if dec != 1 || side != len(segmentNames(t, dir))-1 {
				t.Fatalf("decoded %d segments, %d from sidecars; want 1 and the rest", dec, side)
			}
			sameAnswers(t, tc.name, want, quickAnswers(t, s))
			warned := strings.Contains(strings.Join(h.messages(), "\n"), "index sidecar damaged")
			if warned != tc.warns {
				t.Errorf("damage warning %v, want %v: %q", warned, tc.warns, h.messages())
			}
			s.Close()
			s, side, dec = openFrom(t, dir, &logRecorder{})
			if dec != 0 {
				t.Fatalf("after the close: %d decoded, %d from sidecars", dec, side)
			}
			sameAnswers(t, tc.name+", rewritten", want, quickAnswers(t, s))
		})
	}
}

// appendTestFrame returns a frame holding a valid record that follows the
// last one of the segment at path.
func appendTestFrame(t *testing.T, dir, path string) []byte {
	t.Helper()
	s, _, _ := openFrom(t, copyDir(t, dir), &logRecorder{})
	next := s.nextSeq
	s.Close()
	e := req("GET", "/appended", 200)
	e.Created = t0
	rec := appendRecord(nil, &e, next, t0.UnixMilli(), "", nil, nil)
	return journal.AppendFrame(nil, rec)
}

// TestSidecarRetention: retention deletes a segment's sidecar with it, a
// sidecar is written in the background for each segment that stops
// growing, and Open deletes sidecars (and temporary ones) whose segment is
// gone.
func TestSidecarRetention(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := newClock()
	opts := testOptions(c, &logRecorder{})
	s := mustOpen(t, dir, opts)
	for range 4 {
		if err := addFlush(s, urls("day", 50)...); err != nil {
			t.Fatal(err)
		}
		c.Add(24 * time.Hour) // the next entries start a segment
	}
	if err := addFlush(s, urls("today", 5)...); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a sidecar for each of the 4 segments that stopped growing", func() bool {
		return len(sidecarFiles(t, dir)) == 4
	})
	for _, p := range sidecarFiles(t, dir) {
		if _, err := os.Stat(strings.TrimSuffix(p, sidecarExt) + ".seg"); err != nil {
			t.Fatalf("sidecar %s without its segment", p)
		}
	}
	if err := s.SetRetention(2, 0); err != nil {
		t.Fatal(err)
	}
	if segs, scs := len(segmentNames(t, dir)), len(sidecarFiles(t, dir)); segs != 3 || scs != 2 {
		t.Fatalf("after retention: %d segments and %d sidecars, want 3 and 2", segs, scs)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range sidecarFiles(t, dir) {
		if _, err := os.Stat(strings.TrimSuffix(p, sidecarExt) + ".seg"); err != nil {
			t.Fatalf("sidecar %s without its segment", p)
		}
	}
	orphans := []string{"00000000000000aa-0707070707070707" + sidecarExt, "00000000000000bb-0707070707070707" + sidecarTmp,
		strings.TrimSuffix(filepath.Base(segmentNames(t, dir)[0]), ".seg") + sidecarTmp}
	for _, name := range orphans {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s = mustOpen(t, dir, opts)
	for _, name := range orphans {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s kept", name)
		}
	}
	if n := s.Len(); n != 105 {
		t.Fatalf("%d entries, want 105", n)
	}
}

// TestSidecarFullDisk: a sidecar the disk has no room for is not written,
// leaves no temporary file, and costs nothing but a decoding start: the
// store goes on, and the next start's answers are the same.
func TestSidecarFullDisk(t *testing.T) {
	t.Parallel()
	built := t.TempDir()
	sidecarStore(t, built, false)
	removeSidecars(t, built)
	ref, _, _ := openFrom(t, copyDir(t, built), &logRecorder{})
	want := quickAnswers(t, ref)
	ref.Close()
	for _, fail := range []string{"write", "sync", "full"} {
		t.Run(fail, func(t *testing.T) {
			t.Parallel()
			base := copyDir(t, built)

			c, h := newClock(), &logRecorder{}
			opts, fsys := faultyOptions(c, h)
			opts.Now = func() time.Time { return t0.Add(40 * 24 * time.Hour) }
			opts.MaxDays = 100
			switch fail {
			case "write":
				fsys.FailWrites(syscall.ENOSPC)
			case "sync":
				fsys.FailSyncs(syscall.EIO)
			case "full":
				fsys.SetFree(0)
			}
			s := mustOpen(t, base, opts)
			waitFor(t, "the background sidecar writes to fail", func() bool {
				return strings.Count(strings.Join(h.messages(), "\n"), "index sidecar not written") >= len(segmentNames(t, base))-1
			})
			sameAnswers(t, "on a full disk", want, quickAnswers(t, s))
			s.Close()
			if m, _ := filepath.Glob(filepath.Join(base, "*"+sidecarTmp)); len(m) > 0 || len(sidecarFiles(t, base)) > 0 {
				t.Fatalf("files left: %q, sidecars %q", m, sidecarFiles(t, base))
			}
			s2, side, _ := openFrom(t, base, &logRecorder{})
			if side != 0 {
				t.Fatalf("%d segments from sidecars that should not exist", side)
			}
			sameAnswers(t, "after the full disk", want, quickAnswers(t, s2))
		})
	}
}

// rewriteLastFrame replaces the last frame of the segment at path by a
// valid frame of the same length whose url differs: the segment keeps its
// size, and only its tail tells it changed.
func rewriteLastFrame(t *testing.T, path string) {
	t.Helper()
	var off int64
	var payload []byte
	f, err := journal.Open(path, journal.Options{}, func(o int64, p []byte) error {
		off, payload = o, slices.Clone(p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	i := bytes.Index(payload, []byte("/u/"))
	if i < 0 {
		i = bytes.Index(payload, []byte("/api/"))
	}
	if i < 0 {
		t.Fatalf("no url in the last record: %q", payload)
	}
	payload[i+1] = 'Z'
	h, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.WriteAt(journal.AppendFrame(nil, payload), off); err != nil {
		t.Fatal(err)
	}
}
