package logstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
)

// indexEntries returns every row's entry as the index alone holds it
// (memEntry), next to the entry read back from its segment.
func indexEntries(t *testing.T, s *Store) (fromIndex, fromDisk []Entry) {
	t.Helper()
	s.mu.RLock()
	defer s.mu.RUnlock()
	each(s.idx.chunks, false, func(r row) bool {
		e, _, err := s.readEntry(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		e.ID = ""
		fromDisk = append(fromDisk, e)
		fromIndex = append(fromIndex, s.idx.memEntry(r))
		return true
	})
	return fromIndex, fromDisk
}

// TestColumnEdgeValues: the narrow columns give back exactly what was
// stored, for the values that do not fit their narrow forms too: execution
// times that are not whole nanoseconds or exceed 32 bits of them (and
// their sign), times years apart in one chunk, more than 256 and more than
// a chunk's worth of distinct strings, extreme levels and statuses, rows of
// other logs among request logs; while the chunk fills, once sealed, and
// after a reopen.
func TestColumnEdgeValues(t *testing.T) {
	t.Parallel()
	execs := []float64{0, math.Copysign(0, -1), 1e-7, 0.1 + 0.2, 1.5, 4294.967295, 4294.967296, 5000.123456789,
		-1.25, math.MaxFloat64, math.SmallestNonzeroFloat64, float64(123456789) / 1e6, 1.0000005}
	times := []time.Time{t0, time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC),
		t0.Add(-25 * 24 * time.Hour), t0.Add(25 * 24 * time.Hour), t0.Add(time.Millisecond)}
	levels := []int{0, 8, -4, math.MinInt32, math.MaxInt32, 4}
	statuses := []int{200, 404, math.MinInt32, math.MaxInt32, 0, 599}
	tests := []struct {
		name    string
		n       int
		entry   func(i int) Entry
		reopen  bool
		smallCh bool
	}{
		{name: "exec times", n: 3 * len(execs), entry: func(i int) Entry {
			e := req("GET", "/x", 200)
			e.Request.ExecTime = execs[i%len(execs)]
			return e
		}},
		{name: "times far apart", n: 40, entry: func(i int) Entry {
			e := req("GET", "/t", 200)
			e.Created = times[i%len(times)]
			return e
		}},
		{name: "times hours apart", n: 30, entry: func(i int) Entry {
			e := req("GET", "/h", 200)
			e.Created = t0.Add(time.Duration(i%3) * 5 * time.Hour)
			return e
		}},
		{name: "frames spanning more than 16 MiB", n: 12, entry: func(i int) Entry {
			return req("GET", "/"+strings.Repeat("x", 2<<20)+fmt.Sprint(i), 200)
		}},
		{name: "one value per column", n: 300, entry: func(int) Entry { return req("GET", "/same", 200) }},
		{name: "256 and 257 urls", n: 513, entry: func(i int) Entry {
			return req("GET", fmt.Sprintf("/u/%d", i%257), 200)
		}},
		{name: "a distinct string per row", n: chunkSize + 100, entry: func(i int) Entry {
			e := req("POST", fmt.Sprintf("/p/%d", i), 201)
			e.Request.UserAgent = fmt.Sprintf("agent %d", i)
			e.Request.UserIP = fmt.Sprintf("10.%d.%d.1", i/256, i%256)
			return e
		}},
		{name: "levels and statuses", n: 72, entry: func(i int) Entry {
			e := req("DELETE", "/s", statuses[i%len(statuses)])
			e.Level = levels[i/len(statuses)%len(levels)]
			return e
		}},
		{name: "other logs among requests", n: 90, smallCh: true, entry: func(i int) Entry {
			if i%3 == 0 {
				return Entry{Level: 4, Message: fmt.Sprintf("event %d", i%5), Attrs: map[string]any{"n": float64(i), "k": "v"}}
			}
			e := req("GET", fmt.Sprintf("/o/%d", i%4), 200+i%3)
			e.Request.AuthID = fmt.Sprintf("user%d", i%2)
			return e
		}},
	}
	for _, tt := range tests {
		for _, reopen := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/reopen=%v", tt.name, reopen), func(t *testing.T) {
				c, h := newClock(), &logRecorder{}
				dir := t.TempDir()
				opts := testOptions(c, h)
				if tt.smallCh {
					opts = smallChunks(opts, 7)
				}
				opts.MinLevel = math.MinInt32
				s := mustOpen(t, dir, opts)
				for i := range tt.n {
					e := tt.entry(i)
					if e.Created.IsZero() {
						e.Created = t0.Add(time.Duration(i) * time.Millisecond)
					}
					s.Add(e)
				}
				if err := s.Flush(); err != nil {
					t.Fatal(err)
				}
				if reopen {
					if err := s.Close(); err != nil {
						t.Fatal(err)
					}
					s = mustOpen(t, dir, opts)
				}
				got, want := indexEntries(t, s)
				if len(got) != tt.n {
					t.Fatalf("%d rows indexed, want %d", len(got), tt.n)
				}
				if diff := gocmp.Diff(want, got, gocmp.Comparer(sameFloat)); diff != "" {
					t.Errorf("index differs from the segments (-segment +index):\n%s", diff)
				}
			})
		}
	}
}

// sameFloat compares floats bit for bit (0 and -0 differ, as in JSON).
func sameFloat(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

// TestChunkSequenceGaps: rows whose sequence numbers skip some (records
// skipped at Open) are found by their sequence number, and the missing
// ones are not, in a chunk being filled and once it is sealed.
func TestChunkSequenceGaps(t *testing.T) {
	t.Parallel()
	x := newIndex(defaultTuning)
	seg := &segment{firstSeq: 1, lastSeq: 0}
	seqs := []int64{1, 2, 3, 5, 9, 10, 1000, 1 << 33}
	for i, seq := range seqs {
		r := &record{kind: kindRequest, seq: seq, created: int64(i), method: []byte("GET"), url: []byte("/")}
		if err := x.add(seg, int64(8+i*100), r); err != nil {
			t.Fatalf("add seq %d: %v", seq, err)
		}
	}
	for _, sealed := range []bool{false, true} {
		if sealed {
			x.sealAll()
		}
		for seq := int64(0); seq <= 1001; seq++ {
			r, ok := x.find(seq)
			want := false
			for _, s := range seqs {
				want = want || s == seq
			}
			if ok != want || (ok && r.seq() != seq) {
				t.Errorf("sealed %v: find(%d) = row %v, %v; want found %v", sealed, seq, r.i, ok, want)
			}
		}
		if r, ok := x.find(1 << 33); !ok || r.seq() != 1<<33 {
			t.Errorf("sealed %v: find(2^33) = %v, %v", sealed, r, ok)
		}
	}
}

// TestCompactDictActiveChunk: compacting the dictionary remaps the chunk
// being filled too, and rows added to it afterwards reuse its values.
func TestCompactDictActiveChunk(t *testing.T) {
	t.Parallel()
	c, h := newClock(), &logRecorder{}
	s := mustOpen(t, t.TempDir(), testOptions(c, h))
	for i := range 3000 { // dropped by retention below: 3000 urls
		s.Add(req("GET", fmt.Sprintf("/old/%d", i), 200))
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	c.Add(24 * time.Hour) // a new day: a new segment
	for i := range 10 {
		s.Add(req("GET", fmt.Sprintf("/new/%d", i%3), 200))
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	before := len(s.idx.dict.strs)
	c.Add(5 * 24 * time.Hour)
	if err := s.SetRetention(5, 0); err != nil {
		t.Fatal(err)
	}
	s.mu.RLock()
	after := len(s.idx.dict.strs)
	s.mu.RUnlock()
	if after*2 > before {
		t.Fatalf("dictionary not compacted: %d strings, then %d", before, after)
	}
	for i := range 10 {
		s.Add(req("GET", fmt.Sprintf("/new/%d", i%3), 200))
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	got, want := indexEntries(t, s)
	if diff := gocmp.Diff(want, got, gocmp.Comparer(sameFloat)); diff != "" {
		t.Errorf("index differs from the segments (-segment +index):\n%s", diff)
	}
	p, err := s.List(Query{Filter: `data.url = "/new/1"`})
	if err != nil || p.TotalItems != 6 {
		t.Errorf("data.url = /new/1: %d items, %v; want 6", p.TotalItems, err)
	}
}

// TestSortCreatedUnordered: a sort led by created skips the chunks whose
// times cannot enter the page (chunk summaries), also when times do not
// follow insertion order and tie across chunks.
func TestSortCreatedUnordered(t *testing.T) {
	t.Parallel()
	c, h := newClock(), &logRecorder{}
	s := mustOpen(t, t.TempDir(), smallChunks(testOptions(c, h), 5))
	var entries []Entry
	for i := range 200 {
		e := req("GET", fmt.Sprintf("/%d", i%9), []int{200, 404}[i%2])
		e.Created = t0.Add(time.Duration((i*37)%50) * time.Minute)
		if i%40 == 0 {
			e.Created = t0.Add(-time.Duration(i) * 24 * time.Hour)
		}
		entries = append(entries, e)
		s.Add(e)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, sortExpr := range []string{"-created", "created", "-updated,rowid"} {
		for _, filter := range []string{"", "data.status = 404", `data.url ~ "3" && data.status = 200`} {
			want := slices.Clone(entries)
			for i := range want {
				want[i].ID = fmt.Sprint("unordered-", i) // the key of the reference's data
			}
			want = slices.DeleteFunc(want, func(e Entry) bool { return !matches(t, filter, e) })
			slices.SortStableFunc(want, func(a, b Entry) int {
				if sortExpr == "created" {
					return a.Created.Compare(b.Created)
				}
				return b.Created.Compare(a.Created)
			})
			for _, perPage := range []int{1, 3, 7} {
				p, err := s.List(Query{Sort: sortExpr, Filter: filter, Page: 2, PerPage: perPage})
				if err != nil || p.TotalItems != len(want) {
					t.Fatalf("%s %q: %d items, %v; want %d", sortExpr, filter, p.TotalItems, err, len(want))
				}
				var got, exp []string
				for _, e := range p.Items {
					got = append(got, e.Message+" "+e.Created.String())
				}
				for _, e := range want[min(len(want), perPage):min(len(want), 2*perPage)] {
					exp = append(exp, e.Message+" "+e.Created.String())
				}
				if !slices.Equal(got, exp) {
					t.Errorf("%s %q page 2 of %d: %v, want %v", sortExpr, filter, perPage, got, exp)
				}
			}
		}
	}
}

// FuzzColumns: the narrow encodings give back every value put in, as the
// chunk fills and once it is sealed: times (offsets, 3 or 4 bytes, or
// wide), execution times (nanoseconds or the side table) and frame
// offsets.
func FuzzColumns(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Add(bytes.Repeat([]byte{0xff}, 64))
	f.Add([]byte("0123456789abcdef0123456789abcdef"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const stride = 17
		n := min(len(data)/stride, chunkSize)
		var b chunkBuilder
		c := &chunk{}
		b.start(c)
		times, execs, offs := make([]int64, n), make([]float64, n), make([]uint32, n)
		for i := range n {
			p := data[i*stride:]
			ms := int64(binary.LittleEndian.Uint64(p))
			switch p[16] % 4 { // mostly near the first time, as in a log
			case 0, 1:
				ms = int64(p[0]) << (p[1] % 40)
			case 2:
				ms = min(max(ms, minCreatedMs), maxCreatedMs)
			}
			times[i] = ms
			execs[i] = math.Float64frombits(binary.LittleEndian.Uint64(p[8:]))
			if p[16]%3 == 0 {
				execs[i] = float64(binary.LittleEndian.Uint32(p[8:])) / 1e6
			}
			offs[i] = uint32(i)*uint32(p[2]) + uint32(p[3])<<(p[4]%24)
			if i > 0 {
				offs[i] = max(offs[i], offs[i-1])
			}
			c.created.add(i, ms)
			c.exec.add(i, execs[i])
			c.off = append(c.off, offs[i])
			c.n++
		}
		check := func(when string) {
			for i := range n {
				if got := c.createdAt(i); got != times[i] {
					t.Fatalf("%s: time %d = %d, want %d", when, i, got, times[i])
				}
				if got := c.execAt(i); !sameFloat(got, execs[i]) && !(math.IsNaN(got) && math.IsNaN(execs[i])) {
					t.Fatalf("%s: execTime %d = %v, want %v", when, i, got, execs[i])
				}
				if got := c.offAt(i); got != offs[i] {
					t.Fatalf("%s: offset %d = %d, want %d", when, i, got, offs[i])
				}
			}
		}
		check("filling")
		if n > 0 {
			var vals [numDcols]uint32
			for range n {
				for g := range b.groups {
					b.groups[g].add(c, &vals)
				}
			}
			c.seal()
			check("sealed")
		}
	})
}

// TestCountsKept: the matches per chunk that a filter's scans keep give
// the same totals and pages as a fresh scan, as rows are added and after
// retention drops chunks.
func TestCountsKept(t *testing.T) {
	t.Parallel()
	c, h := newClock(), &logRecorder{}
	s := mustOpen(t, t.TempDir(), smallChunks(testOptions(c, h), 5))
	filters := []string{`data.url ~ "1" && data.status = 200`, `message ~ "GET /2"`, "data.status >= 400"}
	var live []Entry
	add := func(n int) {
		for i := range n {
			e := req([]string{"GET", "POST"}[i%2], fmt.Sprintf("/%d", i%13), []int{200, 404, 200}[i%3])
			e.Created = c.Now()
			s.Add(e)
			e.ID = fmt.Sprint("kept-", len(live)) // the key of the reference's data
			live = append(live, e)
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string) {
		t.Helper()
		for _, f := range filters {
			want := 0
			for _, e := range live {
				if matches(t, f, e) {
					want++
				}
			}
			for range 2 { // the second time from the counts kept
				for _, page := range []int{1, 3} {
					p, err := s.List(Query{Filter: f, Page: page, PerPage: 4})
					if err != nil || p.TotalItems != want {
						t.Errorf("%s: %q: %d items, %v; want %d", when, f, p.TotalItems, err, want)
					}
				}
			}
		}
	}
	add(103)
	check("first day")
	c.Add(24 * time.Hour)
	add(51)
	check("second day")
	c.Add(5 * 24 * time.Hour)
	if err := s.SetRetention(5, 0); err != nil {
		t.Fatal(err)
	}
	live = live[103:]
	check("after retention")
}
