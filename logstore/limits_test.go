package logstore

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"strongbox/logstore/journal"
)

// TestDerivedMessages: the messages a request log derives from its method
// and url ("METHOD URL", or with the url unescaped as the request logger
// writes it) are neither stored nor interned, and still read back, filter
// and sort as the messages they are.
func TestDerivedMessages(t *testing.T) {
	t.Parallel()
	c, h := newClock(), &logRecorder{}
	dir := t.TempDir()
	opts := testOptions(c, h)
	s := mustOpen(t, dir, opts)
	type tc struct{ method, url, msg string }
	cases := []tc{
		{"GET", "/plain/1", "GET /plain/1"},
		{"GET", "/a%20b?q=%C3%A9", "GET /a b?q=é"},
		{"POST", "/bad%zz", "POST /bad%zz"},         // invalid escape: the url itself
		{"GET", "/x%FF%FEy", "GET /x\uFFFDy"},       // invalid UTF-8 once unescaped
		{"GET", "/a%20b", "GET /a%20b"},             // derived without unescaping
		{"GET", "/own", "something else"},           // stored
		{"DELETE", "/a%2Fb", "custom DELETE /a/b"},  // stored
		{"", "%41", " A"},                           // empty method
		{"GET", "/%e2%82", "GET /\uFFFD"},           // a truncated character
		{"GET", "/plain/1", "GET /plain/1 "},        // stored: not quite derived
		{"PATCH", "/d%C3%A9j%C3%A0", "PATCH /déjà"}, // unicode
		{"PATCH", "/d%C3%A9j%C3%A0", "PATCH /d%C3%A9j%C3%A0"},
	}
	for i := range 1000 {
		tt := cases[i%len(cases)]
		if i >= len(cases) {
			tt = tc{"GET", fmt.Sprintf("/unique/%d%%20x", i), fmt.Sprintf("GET /unique/%d x", i)}
		}
		e := req(tt.method, tt.url, 200)
		e.Message = tt.msg
		s.Add(e)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	check := func(s *Store) {
		t.Helper()
		got := all(t, s)
		if len(got) != 1000 {
			t.Fatalf("%d entries", len(got))
		}
		for i, e := range got {
			want := fmt.Sprintf("GET /unique/%d x", i)
			if i < len(cases) {
				want = cases[i].msg
			}
			if e.Message != want {
				t.Errorf("entry %d: message %q, want %q", i, e.Message, want)
			}
		}
		s.mu.RLock()
		stored := slices.Sorted(func(yield func(string) bool) {
			for m := range s.idx.dict.dom[domMessage] {
				if !yield(m) {
					return
				}
			}
		})
		var mem []string
		each(s.idx.chunks, false, func(r row) bool {
			mem = append(mem, s.idx.memEntry(r).Message)
			return true
		})
		s.mu.RUnlock()
		if want := []string{"GET /plain/1 ", "custom DELETE /a/b", "something else"}; !slices.Equal(stored, want) {
			t.Errorf("interned messages %q, want only %q", stored, want)
		}
		if diff := gocmp.Diff(messages(got), mem); diff != "" {
			t.Errorf("index messages differ from the stored ones (-disk +index):\n%s", diff)
		}
		for _, q := range []struct {
			filter string
			n      int
		}{
			{`message = "GET /a b?q=é"`, 1},
			{`message ~ "unique/5"`, 110},
			{`message ~ "unique/5" && level = 0`, 110},
			{"message ~ \"\uFFFD\"", 2},
			{`message = "GET /a%20b"`, 1},
			{`message ~ "POST"`, 1},
			{`message = " A"`, 1},
			{`message ~ "déjà"`, 1},
		} {
			p, err := s.List(Query{Filter: q.filter})
			if err != nil || p.TotalItems != q.n {
				t.Errorf("List(%s): %d items, %v; want %d", q.filter, p.TotalItems, err, q.n)
			}
		}
		p, err := s.List(Query{Sort: "-message", PerPage: 3})
		if err != nil {
			t.Fatal(err)
		}
		if got := messages(p.Items); !slices.Equal(got, []string{"something else", "custom DELETE /a/b", "POST /bad%zz"}) {
			t.Errorf("sort -message: %q", got)
		}
	}
	check(s)
	s.Close()
	check(mustOpen(t, dir, opts)) // as indexed by Open
}

// TestCompareParts checks the piecewise comparison of derived messages.
func TestCompareParts(t *testing.T) {
	t.Parallel()
	parts := [][3]string{
		{"GET", " ", "/a"}, {"GET /a"}, {"GET /", "a", ""}, {"", "", ""}, {"GET", " ", ""},
		{"GE", "T /b", ""}, {"GET", " ", "/a/b"}, {"POST", " ", "/"}, {"G"}, {"", "GET", " /"},
	}
	for _, a := range parts {
		for _, b := range parts {
			want := strings.Compare(strings.Join(a[:], ""), strings.Join(b[:], ""))
			if got := compareParts(a, b); got != want {
				t.Errorf("compareParts(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
}

// TestSizeCap: past Options.MaxBytes the oldest segments are deleted after
// a commit (whole files, with an Info log), the newest entries stay, and
// the index drops the rows of the deleted segments.
func TestSizeCap(t *testing.T) {
	t.Parallel()
	c, h := newClock(), &logRecorder{}
	dir := t.TempDir()
	opts := testOptions(c, h)
	opts.MaxBytes = 16 << 10 // segments rotate at 2 KiB
	s := mustOpen(t, dir, opts)
	segBytes := func() (total int64) {
		paths, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
		for _, p := range paths {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() > 2048 {
				t.Errorf("segment %s is %d bytes, over MaxBytes/8", p, fi.Size())
			}
			total += fi.Size()
		}
		return total
	}
	const n = 3000
	for i := range n {
		s.Add(req("GET", fmt.Sprintf("/api/collections/posts/records/%d", i), 200))
		if i%100 == 99 {
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
			if total := segBytes(); total > opts.MaxBytes {
				t.Fatalf("after %d entries the segments hold %d bytes, over the %d cap", i+1, total, opts.MaxBytes)
			}
		}
	}
	got := all(t, s)
	if len(got) == 0 || len(got) >= n || len(got) != s.Len() {
		t.Fatalf("%d entries kept of %d (Len %d)", len(got), n, s.Len())
	}
	// The kept entries are the newest ones, in order.
	for i, e := range got {
		if want := fmt.Sprintf("/api/collections/posts/records/%d", n-len(got)+i); e.Request.URL != want {
			t.Fatalf("entry %d of the kept ones has url %s, want %s", i, e.Request.URL, want)
		}
	}
	// Roughly the cap's worth: at most a segment less.
	if total := segBytes(); total < opts.MaxBytes-2048 {
		t.Errorf("only %d entries (%d bytes) kept under a %d-byte cap", len(got), total, opts.MaxBytes)
	}
	if !slices.ContainsFunc(h.messages(), func(m string) bool { return strings.Contains(m, "size cap reached") }) {
		t.Errorf("no log of the dropped segments: %q", h.messages())
	}
	s.mu.RLock()
	rows := 0
	for _, seg := range s.segs {
		rows += seg.rows
	}
	for _, ch := range s.idx.chunks {
		if !slices.Contains(s.segs, ch.seg) {
			t.Errorf("index chunk of a deleted segment %s", ch.seg.path)
		}
	}
	s.mu.RUnlock()
	if rows != len(got) {
		t.Errorf("segments hold %d rows, index %d", rows, len(got))
	}
	// The same after reopening, and a smaller cap applies at Open.
	s.Close()
	s2 := mustOpen(t, dir, opts)
	if diff := gocmp.Diff(got, all(t, s2)); diff != "" {
		t.Errorf("after reopening (-before +after):\n%s", diff)
	}
	s2.Close()
	opts.MaxBytes = 4 << 10
	s3 := mustOpen(t, dir, opts)
	if total := segBytes(); total > opts.MaxBytes || s3.Len() >= len(got) || s3.Len() == 0 {
		t.Errorf("Open with a smaller cap: %d bytes, %d entries", total, s3.Len())
	}
	// Ids stay unique and sequence numbers go on.
	s3.Add(req("GET", "/after", 200))
	if err := s3.Flush(); err != nil {
		t.Fatal(err)
	}
	last := all(t, s3)
	if e := last[len(last)-1]; e.Request.URL != "/after" {
		t.Errorf("last entry %s", e.Request.URL)
	} else if _, err := s3.Get(e.ID); err != nil {
		t.Errorf("Get(%s): %v", e.ID, err)
	}
	if _, err := Open(t.TempDir(), Options{MaxDays: 1, MaxBytes: -1}); err == nil {
		t.Errorf("Open with a negative MaxBytes succeeded")
	}
}

// TestQueueBytesBound: the entries waiting for the writer are bounded in
// bytes of text as well as in number.
func TestQueueBytesBound(t *testing.T) {
	t.Parallel()
	c, h := newClock(), &logRecorder{}
	opts := testOptions(c, h)
	opts.maxPendingBytes = 20_000
	s := mustOpen(t, t.TempDir(), opts)
	// Hold the writer so that the queue only grows (it may take one batch
	// before it blocks).
	s.wmu.Lock()
	for i := range 100 {
		e := req("GET", fmt.Sprintf("/%d", i), 200)
		e.Request.UserAgent = strings.Repeat("u", 1000)
		s.Add(e)
	}
	s.qmu.Lock()
	queued, pending, dropped := len(s.queue), s.qbytes+s.wbytes, s.dropped
	s.qmu.Unlock()
	s.wmu.Unlock()
	if pending > opts.maxPendingBytes || dropped == 0 || queued >= 20 || queued < 15 {
		t.Errorf("queue %d entries, %d bytes (max %d), dropped %d", queued, pending, opts.maxPendingBytes, dropped)
	}
	if !slices.ContainsFunc(h.messages(), func(m string) bool { return strings.Contains(m, "dropped") }) {
		t.Errorf("no warning about dropped entries: %q", h.messages())
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := s.Len(); n != 100-int(dropped) {
		t.Errorf("%d entries stored, want %d", n, 100-dropped)
	}
	s.qmu.Lock()
	if s.qbytes != 0 || s.wbytes != 0 {
		t.Errorf("after Flush: %d bytes queued, %d in flight", s.qbytes, s.wbytes)
	}
	s.qmu.Unlock()
	// Room again.
	s.Add(req("GET", "/later", 200))
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := s.Len(); n != 101-int(dropped) {
		t.Errorf("%d entries stored after the queue emptied, want %d", n, 101-dropped)
	}
}

// TestInvalidUTF8: strings that are not valid UTF-8 are stored with their
// invalid bytes replaced, so a frame forged inside a logged string (here a
// User-Agent) never reaches the file, and recovery after damage to the real
// frame around it cannot take the forgery for a record.
func TestInvalidUTF8(t *testing.T) {
	t.Parallel()
	c, h := newClock(), &logRecorder{}
	dir := t.TempDir()
	opts := testOptions(c, h)
	s := mustOpen(t, dir, opts)

	// A whole valid frame holding a record that would take sequence
	// number 2, the one of the entry it hides in.
	forged := req("DELETE", "/forged", 200)
	forged.Created = c.Now()
	forgedFrame := journal.AppendFrame(nil, encodeTest(t, forged, 2, ""))
	marker := forgedFrame[:4]

	s.Add(req("GET", "/first", 200))
	e := req("GET", "/x\xff\xfe", 200)
	e.Message = "GET /x\xff\xfe"
	e.Request.UserAgent = "Mozilla/5.0 " + string(forgedFrame) + " end"
	e.Request.Referer = "\xf5\x1a\xb0\x5e"
	e.Request.Error, e.Level = "bad \xc3", 8
	ua := e.Request.UserAgent
	s.Add(e)
	s.Add(req("GET", "/third", 200))
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if e.Request.UserAgent != ua {
		t.Errorf("Add changed the caller's Request")
	}
	got := all(t, s)
	if len(got) != 3 {
		t.Fatalf("%d entries", len(got))
	}
	r := got[1].Request
	wantUA := strings.ToValidUTF8("Mozilla/5.0 "+string(forgedFrame)+" end", "\uFFFD")
	if r.UserAgent != wantUA || r.Referer != "\uFFFD\x1a\uFFFD^" || r.URL != "/x\uFFFD" ||
		got[1].Message != "GET /x\uFFFD" || r.Error != "bad \uFFFD" {
		t.Errorf("stored %q %q %q %q %q", r.UserAgent, r.Referer, r.URL, got[1].Message, r.Error)
	}
	s.Close()

	segs, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	if len(segs) != 1 {
		t.Fatalf("%d segments", len(segs))
	}
	data, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, marker); n != 3 {
		t.Fatalf("the segment holds %d frame markers, want 3 (one per entry)", n)
	}
	// Damage the second frame's payload: recovery skips it and must find
	// the third frame, not a forgery inside the second.
	second := bytes.Index(data[bytes.Index(data, marker)+1:], marker) + bytes.Index(data, marker) + 1
	data[second+journal.FrameOverhead+3] ^= 0x40
	h2 := &logRecorder{}
	s2 := mustOpen(t, withFile(t, segs[0], data), testOptions(c, h2))
	after := all(t, s2)
	if diff := gocmp.Diff([]string{"GET /first", "GET /third"}, messages(after)); diff != "" {
		t.Errorf("after damage (-want +got):\n%s", diff)
	}
}

// TestHeapUniqueStrings reports (with -v) and bounds the heap per request
// log when every request has its own long url, User-Agent and Referer (the
// worst case for the dictionary, which then holds every string once): the
// index holds the three strings and little more (the row, the dictionary's
// slot and map entry per string, and the allocator's rounding of each
// string to its size class, about 470 bytes here); the derived message is
// not a fourth copy.
func TestHeapUniqueStrings(t *testing.T) {
	if raceEnabled {
		t.Skip("slow with the race detector")
	}
	const n = 5000
	const urlLen, uaLen, refLen = 2900, 1900, 1900
	dir := t.TempDir()
	c, h := newClock(), &logRecorder{}
	opts := testOptions(c, h)
	s := mustOpen(t, dir, opts)
	pad := func(prefix string, i, size int) string {
		s := fmt.Sprintf("%s%d/", prefix, i)
		return s + strings.Repeat("x", size-len(s))
	}
	for i := range n {
		e := req("GET", pad("/api/", i, urlLen), 404)
		e.Request.Error = "The requested resource wasn't found."
		if i%2 == 1 {
			e.Request.URL = pad("/api/%41%42", i, urlLen)
			e.Message = "GET " + strings.Replace(e.Request.URL, "%41%42", "AB", 1)
		}
		e.Request.UserAgent = pad("agent ", i, uaLen)
		e.Request.Referer = pad("https://example.com/", i, refLen)
		e.Request.Auth = ""
		s.Add(e)
		if i%1000 == 999 {
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	s.Close()
	perEntry, s2 := heapPerEntry(t, dir, opts) // the test's clock: the entries are not past retention
	defer s2.Close()
	text := urlLen + uaLen + refLen
	t.Logf("heap per indexed request log with a unique %d-byte url, %d-byte User-Agent and %d-byte Referer, at %d entries: %.0f bytes (%.0f beyond the %d bytes of those strings)",
		urlLen, uaLen, refLen, s2.Len(), perEntry, perEntry-float64(text), text)
	if s2.Len() != n {
		t.Fatalf("%d entries", s2.Len())
	}
	if perEntry > float64(text)+1000 {
		t.Errorf("heap per entry %.0f bytes, want at most %d", perEntry, text+1000)
	}
}

func TestIDRanks(t *testing.T) {
	t.Parallel()
	var r idRanks
	ids := []uint32{0, 1, 7, 1 << 31, 1<<32 - 1}
	for i := range 2000 {
		ids = append(ids, uint32(i*7919+13))
	}
	for _, id := range ids {
		r.add(id)
	}
	for i, id := range ids {
		if got := r.rank(id); got != i {
			t.Fatalf("rank(%d) = %d, want %d", id, got, i)
		}
	}
}

// TestMessageMemoManyMethods: with more (method, derivation) pairs than the
// message memo has slots, the rest are evaluated row by row, correctly.
func TestMessageMemoManyMethods(t *testing.T) {
	c, h := newClock(), &logRecorder{}
	s := mustOpen(t, t.TempDir(), testOptions(c, h))
	want := 0
	for i := range 600 {
		method := fmt.Sprintf("M%d", i%20)
		e := req(method, fmt.Sprintf("/u%%20%d", i%30), 200)
		if i%2 == 0 {
			e.Message = fmt.Sprintf("%s /u %d", method, i%30) // unescaped
		}
		if strings.HasPrefix(e.Message, "M1") && strings.HasSuffix(e.Message, "7") {
			want++
		}
		s.Add(e)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, memo := range []bool{true, false} {
		memoOn = memo
		p, err := s.List(Query{Filter: `message ~ "M1%7"`})
		memoOn = true
		if err != nil || p.TotalItems != want {
			t.Errorf("memo %v: %d items, %v; want %d", memo, p.TotalItems, err, want)
		}
	}
}

// TestBufTopK checks the buffered top-k and quickselect against a full
// sort, on random, sorted and reversed input.
func TestBufTopK(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	c := &chunk{n: chunkSize, created: timeCol{wide: make([]int64, chunkSize)}}
	less := func(a, b row) int {
		if x := cmp.Compare(a.c.createdAt(a.i), b.c.createdAt(b.i)); x != 0 {
			return x
		}
		return cmp.Compare(a.i, b.i)
	}
	for _, order := range []string{"random", "sorted", "reversed", "few values"} {
		for i := range chunkSize {
			switch order {
			case "random":
				c.created.wide[i] = r.Int64N(1 << 40)
			case "sorted":
				c.created.wide[i] = int64(i)
			case "reversed":
				c.created.wide[i] = int64(-i)
			default:
				c.created.wide[i] = r.Int64N(3)
			}
		}
		for _, k := range []int{0, 1, 2, 3, 10, 100, 1500, chunkSize, chunkSize + 1} {
			h := bufTopK{k: k, cmp: less}
			var rows []row
			for i := range c.n {
				h.offer(row{c, i})
				rows = append(rows, row{c, i})
			}
			got := h.result()
			slices.SortFunc(rows, less)
			slices.SortFunc(got, less)
			want := rows[:min(k, len(rows))]
			if !slices.EqualFunc(want, got, func(a, b row) bool { return a.i == b.i }) {
				t.Errorf("%s input: top %d differs from the full sort", order, k)
			}
		}
	}
}
