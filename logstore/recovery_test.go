package logstore

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"strongbox/logstore/journal"
)

// fixture writes a store holding a mix of entries in one segment and
// returns the segment's path, the entries (as List returns them) and the
// frame offset of each.
func fixture(t *testing.T, n int) (dir, seg string, entries []Entry, offs []int64) {
	t.Helper()
	c, h := newClock(), &logRecorder{}
	dir = t.TempDir()
	s := mustOpen(t, dir, testOptions(c, h))
	for i := range n {
		switch i % 3 {
		case 0:
			s.Add(req("GET", fmt.Sprintf("/api/%d", i), 200))
		case 1:
			s.Add(req("POST", fmt.Sprintf("/api/%d", i), 400))
		default:
			s.Add(Entry{Level: 4, Message: fmt.Sprint("other ", i), Attrs: map[string]any{"i": float64(i)}})
		}
		c.Add(time.Millisecond)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	entries = all(t, s)
	s.mu.RLock()
	for _, c := range s.idx.chunks {
		for i := range c.n {
			offs = append(offs, int64(c.offAt(i)))
		}
	}
	seg = s.segs[0].path
	s.mu.RUnlock()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, seg, entries, offs
}

// withFile copies the segment file data into a new store directory.
func withFile(t *testing.T, seg string, data []byte) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, filepath.Base(seg)), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestTruncation cuts the segment at every byte (every byte of the last
// frame included) and checks that Open keeps exactly the entries whose
// frames are whole, truncates the torn rest, and goes on appending.
func TestTruncation(t *testing.T) {
	t.Parallel()
	_, seg, want, offs := fixture(t, 6)
	data, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	ends := append(offs[1:], int64(len(data)))
	c := newClock()
	// The cuts of each frame run in parallel, those of the first frame
	// starting right after the file header, those of the last one ending
	// with the whole file.
	for k := range ends {
		lo, hi := int(offs[k]), int(ends[k]) // cuts lo … hi-1
		if k == 0 {
			lo = journal.HeaderSize
		}
		if k == len(ends)-1 {
			hi++
		}
		t.Run(fmt.Sprint("frame", k), func(t *testing.T) {
			t.Parallel()
			testTruncation(t, c, seg, data, want, ends, lo, hi)
		})
	}
}

// testTruncation is TestTruncation for the cuts lo … hi-1 of data.
func testTruncation(t *testing.T, c *clock, seg string, data []byte, want []Entry, ends []int64, lo, hi int) {
	for cut := lo; cut < hi; cut++ {
		h := &logRecorder{}
		dir := withFile(t, seg, data[:cut])
		s, err := Open(dir, testOptions(c, h))
		if err != nil {
			t.Fatalf("cut at %d: Open: %v", cut, err)
		}
		whole := 0
		for whole < len(ends) && ends[whole] <= int64(cut) {
			whole++
		}
		got := all(t, s)
		if diff := cmp.Diff(want[:whole], got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("cut at %d: entries (-want +got):\n%s", cut, diff)
		}
		valid := int64(journal.HeaderSize)
		if whole > 0 {
			valid = ends[whole-1]
		}
		if fi, _ := os.Stat(filepath.Join(dir, filepath.Base(seg))); fi.Size() != valid {
			t.Errorf("cut at %d: file is %d bytes after Open, want the valid prefix %d", cut, fi.Size(), valid)
		}
		if torn := int64(cut) > valid; torn != (len(h.messages()) > 0) {
			t.Errorf("cut at %d: warnings %q", cut, h.messages())
		}
		// The store goes on: a new entry follows the kept ones.
		s.Add(req("GET", "/after", 200))
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = mustOpen(t, dir, testOptions(c, h))
		got = all(t, s)
		if len(got) != whole+1 || got[whole].Message != "GET /after" {
			t.Fatalf("cut at %d: after append and reopen: %q", cut, messages(got))
		}
		s.Close()
	}
}

// TestBitFlips flips every bit of a frame in the middle of the segment:
// Open must skip that frame with a warning and keep all the others.
func TestBitFlips(t *testing.T) {
	t.Parallel()
	_, seg, want, offs := fixture(t, 5)
	data, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	const victim = 2
	start, end := offs[victim], offs[victim+1]
	keep := slices.Delete(slices.Clone(want), victim, victim+1)
	c := newClock()
	// The frame's bytes in four parts, flipped in parallel.
	const parts = 4
	for p := range int64(parts) {
		lo, hi := start+(end-start)*p/parts, start+(end-start)*(p+1)/parts
		t.Run(fmt.Sprintf("bytes%d-%d", lo, hi-1), func(t *testing.T) {
			t.Parallel()
			testBitFlips(t, c, seg, data, want, keep, victim, start, lo, hi)
		})
	}
}

// testBitFlips is TestBitFlips for the bits of the bytes lo … hi-1 of the
// victim frame, which starts at start.
func testBitFlips(t *testing.T, c *clock, seg string, data []byte, want, keep []Entry, victim int, start, lo, hi int64) {
	for bit := lo * 8; bit < hi*8; bit++ {
		d := slices.Clone(data)
		d[bit/8] ^= 1 << (bit % 8)
		h := &logRecorder{}
		s, err := Open(withFile(t, seg, d), testOptions(c, h))
		if err != nil {
			t.Fatalf("bit %d: Open: %v", bit, err)
		}
		got := all(t, s)
		if diff := cmp.Diff(keep, got); diff != "" {
			t.Fatalf("bit %d: entries (-want +got):\n%s", bit, diff)
		}
		msgs := h.messages()
		if len(msgs) != 1 || !strings.Contains(msgs[0], "damaged") ||
			!strings.Contains(msgs[0], fmt.Sprintf("offset=%d", start)) {
			t.Fatalf("bit %d: warnings %q, want one about the damaged frame at %d", bit, msgs, start)
		}
		for _, e := range keep {
			if _, err := s.Get(e.ID); err != nil {
				t.Fatalf("bit %d: Get(%s): %v", bit, e.ID, err)
			}
		}
		if _, err := s.Get(want[victim].ID); err == nil {
			t.Fatalf("bit %d: the damaged entry is still found", bit)
		}
		s.Close()
	}
}

// TestDamagedHeader: a segment whose file header is damaged is set aside
// (renamed *.broken) and the other segments are served.
func TestDamagedHeader(t *testing.T) {
	t.Parallel()
	c, h := newClock(), &logRecorder{}
	dir := t.TempDir()
	opts := testOptions(c, h)
	s := mustOpen(t, dir, opts)
	s.Add(req("GET", "/first", 200))
	s.Flush()
	c.Add(24 * time.Hour) // the next entry goes to a new segment
	s.Add(req("GET", "/second", 200))
	s.Flush()
	s.Close()
	segs, _ := filepath.Glob(filepath.Join(dir, "*.seg"))
	if len(segs) != 2 {
		t.Fatalf("%d segments, want 2", len(segs))
	}
	data, _ := os.ReadFile(segs[0])
	data[0] ^= 0xff
	os.WriteFile(segs[0], data, 0o600)
	s = mustOpen(t, dir, opts)
	if got := messages(all(t, s)); !slices.Equal(got, []string{"GET /second"}) {
		t.Errorf("entries %q, want only the second segment's", got)
	}
	if _, err := os.Stat(segs[0] + ".broken"); err != nil {
		t.Errorf("damaged segment not set aside: %v", err)
	}
}

// TestMalformedRecord: a frame whose checksum holds but whose payload is
// not a record (or repeats a sequence number) is skipped with a warning.
func TestMalformedRecord(t *testing.T) {
	t.Parallel()
	_, seg, want, _ := fixture(t, 3)
	f, err := journal.Open(seg, journal.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.Append([]byte("not a record"))
	f.Append(encodeTest(t, req("GET", "/dup", 200), 2, "")) // seq 2 again
	f.Close()
	h := &logRecorder{}
	s := mustOpen(t, filepath.Dir(seg), testOptions(newClock(), h))
	if diff := cmp.Diff(want, all(t, s)); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if n := len(h.messages()); n != 2 {
		t.Errorf("warnings %q, want 2", h.messages())
	}
}

// TestCrash re-runs the test binary as a child that adds entries as fast as
// it can and reports which are durable (Flush returned), kills it with
// SIGKILL mid-ingest, reopens the store and checks that every reported
// entry is there, that what is there is an unbroken prefix of what was
// added, and that the store goes on.
func TestCrash(t *testing.T) {
	if os.Getenv("LOGSTORE_CRASH_DIR") != "" {
		t.Skip("in the child")
	}
	t.Parallel()
	for round := range 3 {
		t.Run(fmt.Sprint("round", round), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.v")
			cmd.Env = append(os.Environ(), "LOGSTORE_CRASH_DIR="+dir)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Read the child's reports on the side, so that the kill happens
			// on time even when the child is slow to report.
			reports := make(chan int, 1024)
			go func() {
				defer close(reports)
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					if n, ok := strings.CutPrefix(sc.Text(), "durable "); ok {
						v, _ := strconv.Atoi(n)
						reports <- v
					}
				}
			}()
			durable, seen := 0, 0
			kill := time.After(time.Duration(200+150*round) * time.Millisecond)
			giveUp := time.After(30 * time.Second)
		read:
			for {
				select {
				case n, ok := <-reports:
					if !ok {
						break read
					}
					durable, seen = n, seen+1
				case <-kill:
					if seen >= 2 {
						break read
					}
					kill = time.After(10 * time.Millisecond)
				case <-giveUp:
					break read
				}
			}
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			if durable == 0 {
				t.Fatal("the child reported nothing durable")
			}
			h := &logRecorder{}
			s := mustOpen(t, dir, testOptions(newClock(), h))
			got := all(t, s)
			if len(got) < durable {
				t.Fatalf("%d entries after the crash, but %d were reported durable", len(got), durable)
			}
			for i, e := range got {
				if e.Message != fmt.Sprint("GET /", i) {
					t.Fatalf("entry %d is %q: not an unbroken prefix", i, e.Message)
				}
			}
			for _, m := range h.messages() {
				if !strings.Contains(m, "tornTail=true") {
					t.Errorf("unexpected warning %q (only a torn tail is expected)", m)
				}
			}
			t.Logf("%d reported durable, %d recovered, warnings %q", durable, len(got), h.messages())
			s.Add(req("GET", "/after", 200))
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Get(all(t, s)[len(got)].ID); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestCrashChild is the child process of TestCrash.
func TestCrashChild(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("LOGSTORE_CRASH_DIR")
	if dir == "" {
		t.Skip("only run by TestCrash")
	}
	s, err := Open(dir, Options{MaxDays: 5, FlushInterval: 10 * time.Millisecond, segmentSize: 256 << 10})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	var added atomic.Int64
	parent := os.Getppid()
	go func() {
		for {
			n := added.Load()
			if err := s.Flush(); err != nil {
				fmt.Println("flush:", err)
				os.Exit(1)
			}
			fmt.Printf("durable %d\n", n)
			if os.Getppid() != parent {
				os.Exit(1) // orphaned: the test is gone
			}
			// Not a wait for a condition: it spaces the reports, like
			// a group commit's interval, so the writer runs between them.
			time.Sleep(5 * time.Millisecond)
		}
	}()
	for i := 0; ; i++ {
		e := req("GET", fmt.Sprint("/", i), 200)
		s.Add(e)
		added.Store(int64(i + 1))
		if i%100 == 99 {
			// About 100,000 entries a second at most (not a wait for a
			// condition: it sets the rate of the load), and never so far
			// ahead of the writer that the queue bound could drop any:
			// past 50,000 queued entries, wait for them to be written.
			time.Sleep(time.Millisecond)
			s.qmu.Lock()
			n := len(s.queue)
			s.qmu.Unlock()
			if n >= 50000 {
				if err := s.Flush(); err != nil {
					fmt.Println("flush:", err)
					os.Exit(1)
				}
			}
		}
	}
}
