package logstore

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestPackID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		id   string
		want packedID
	}{
		{"all zeros", "000000000000000", packedID{}},
		{"all z", "zzzzzzzzzzzzzzz", packedID{lo: 4738381338321616895, hi: 46655}}, // 36^12-1, 36^3-1
		{"one", "000000000000001", packedID{lo: 1}},
		{"hi one", "001000000000000", packedID{hi: 1}},
		{"last lo digit of hi", "00z000000000000", packedID{hi: 35}},
		{"mixed", "s5ewyljico6say8", packedID{lo: 4338391708231896176, hi: 36482}},
		{"pocketbase id", "0fw9f95em5p46kn", packedID{lo: 1240367001672927047, hi: 572}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := packID(tt.id)
			if !ok {
				t.Fatalf("packID(%q) not ok", tt.id)
			}
			if p != tt.want {
				t.Errorf("packID(%q) = %+v, want %+v", tt.id, p, tt.want)
			}
			if got := p.unpack(); string(got[:]) != tt.id {
				t.Errorf("unpack(packID(%q)) = %q", tt.id, got)
			}
		})
	}
	for _, bad := range []string{"", "00000000000000", "0000000000000000", "00000000000000A", "0000000-0000000"} {
		if p, ok := packID(bad); ok {
			t.Errorf("packID(%q) = %+v, want not ok", bad, p)
		}
	}
}

// TestPackIDOrder checks that packed ids order as their strings.
func TestPackIDOrder(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	g := &generator{r: r}
	for range 10_000 {
		a, b := g.randomID(), g.randomID()
		if r.IntN(4) == 0 { // a common prefix
			k := r.IntN(idLen)
			b = a[:k] + b[k:]
		}
		pa, _ := packID(a)
		pb, _ := packID(b)
		if got, want := sign(pa.compare(pb)), strings.Compare(a, b); got != want {
			t.Fatalf("compare(%q, %q) = %d, want %d", a, b, got, want)
		}
	}
}

func sign(c int) int { return min(max(c, -1), 1) }

// refIDs is the reference of FuzzForeignIDs: rows in sequence order,
// searched linearly.
type refIDs []struct {
	seq int64
	id  string
}

func (r refIDs) seqOf(id string) (int64, bool) {
	for _, row := range r {
		if row.id == id {
			return row.seq, true
		}
	}
	return 0, false
}

func (r refIDs) idOf(seq int64) (string, bool) {
	for _, row := range r {
		if row.seq == seq {
			return row.id, true
		}
	}
	return "", false
}

// fuzzID returns one of a few thousand ids, differing in their first and
// last characters, so that sequences repeat some.
func fuzzID(b, c byte) string {
	id := []byte("0a0000000000zz0")
	id[0], id[14] = digits36[b%36], digits36[c%36]
	id[13] = digits36[(b/36+c)%36]
	return string(id)
}

// FuzzForeignIDs applies random adds, lookups, drops and merges to a
// foreignIDs (with a tail of a few ids, so that it is merged often, and a
// directory from 8 ids on) and to a reference, and requires the same
// answers.
func FuzzForeignIDs(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Add([]byte{0, 8, 16, 24, 0, 8, 3, 11, 5, 13, 21, 6, 1, 9, 17, 7, 3, 4, 5})
	f.Add(slices.Repeat([]byte{1, 9, 17, 25, 33, 41, 49, 57, 65, 3, 14}, 20))
	f.Add(slices.Repeat([]byte{6, 1, 2, 7, 0, 5, 8, 14, 200, 250, 13}, 30))
	f.Fuzz(func(t *testing.T, ops []byte) {
		defer func(m, d int) { minTail, dirMin = m, d }(minTail, dirMin)
		minTail, dirMin = 3, 8
		var x, y foreignIDs
		var ref, yref refIDs
		seq, pending := int64(0), false
		flush := func() {
			if pending {
				x.appendAll([]*foreignIDs{&y})
				ref = append(ref, yref...)
				yref, pending = nil, false
			}
		}
		for k := 0; k+1 < len(ops); k += 2 {
			op, arg := ops[k]%8, ops[k+1]
			id := fuzzID(arg, ops[k]/8)
			switch op {
			case 0, 1, 2:
				seq += 1 + int64(arg%3)
				tx, tref := &x, &ref
				if pending {
					tx, tref = &y, &yref
				}
				_, dup := tref.seqOf(id)
				if got := tx.add(seq, []byte(id)); got != !dup {
					t.Fatalf("add(%d, %q) = %v, want %v", seq, id, got, !dup)
				}
				if !dup {
					*tref = append(*tref, struct {
						seq int64
						id  string
					}{seq, id})
				}
			case 3:
				checkSeqOf(t, &x, ref, id)
			case 4:
				checkIDOf(t, &x, ref, seq-int64(arg))
			case 5:
				flush()
				m := int64(arg%5) + 2
				live := func(s int64) bool { return s/4%m != 0 }
				x.keep(live)
				ref = slices.DeleteFunc(ref, func(r struct {
					seq int64
					id  string
				}) bool {
					return !live(r.seq)
				})
			case 6:
				pending = true
			case 7:
				flush()
			}
		}
		flush()
		checkAll(t, &x, ref)
	})
}

func checkSeqOf(t *testing.T, x *foreignIDs, ref refIDs, id string) {
	t.Helper()
	got, ok := x.seqOf(id)
	want, wok := ref.seqOf(id)
	if got != want || ok != wok {
		t.Fatalf("seqOf(%q) = %d, %v, want %d, %v", id, got, ok, want, wok)
	}
}

func checkIDOf(t *testing.T, x *foreignIDs, ref refIDs, seq int64) {
	t.Helper()
	got, ok := x.idOf(seq)
	want, wok := ref.idOf(seq)
	if !ok {
		got = [idLen]byte{}
	}
	if ok != wok || (ok && string(got[:]) != want) {
		t.Fatalf("idOf(%d) = %q, %v, want %q, %v", seq, got, ok, want, wok)
	}
}

func checkAll(t *testing.T, x *foreignIDs, ref refIDs) {
	t.Helper()
	if x.len() != len(ref) {
		t.Fatalf("len = %d, want %d", x.len(), len(ref))
	}
	for _, r := range ref {
		checkSeqOf(t, x, ref, r.id)
		checkIDOf(t, x, ref, r.seq)
	}
	if !slices.IsSortedFunc(x.byID, x.comparePos) {
		t.Fatalf("byID not sorted: %v", x.byID)
	}
	if x.dir != nil {
		dir := slices.Clone(x.dir)
		x.buildDir()
		if !slices.Equal(dir, x.dir) {
			t.Fatalf("dir differs from one built afresh")
		}
	}
}

// randomIDs returns n random valid ids.
func randomIDs(n int) []string {
	g := &generator{r: rand.New(rand.NewPCG(5, 6))}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = g.randomID()
	}
	return ids
}

// seedForeign adds n synthetic request logs of the Seed mix, each with a
// random caller-supplied id as `strongbox import pocketbase` gives them, to
// the store in dir, and returns the ids.
func seedForeign(t testing.TB, dir string, n int, opts Options) []string {
	t.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ids := randomIDs(n)
	g := newGenerator(rand.New(rand.NewPCG(1, 2)))
	start := s.now().Add(-24 * time.Hour)
	for i, id := range ids {
		e := g.entry(start.Add(time.Duration(i) * time.Millisecond))
		e.ID = id
		s.Add(e)
		if i%(MaxPending/4) == MaxPending/4-1 {
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestForeignIDsReopen stores 20,000 logs with caller-supplied ids over
// several segments, reopens the store and finds every one by its id, in
// Get and in the list.
func TestForeignIDsReopen(t *testing.T) {
	t.Parallel()
	c, h := newClock(), &logRecorder{}
	dir := t.TempDir()
	opts := testOptions(c, h)
	opts.segmentSize = 1 << 20
	ids := seedForeign(t, dir, 20_000, opts)
	s := mustOpen(t, dir, opts)
	if n := len(s.segs); n < 3 {
		t.Errorf("%d segments, want several", n)
	}
	for _, id := range ids {
		if e, err := s.Get(id); err != nil || e.ID != id {
			t.Fatalf("Get(%q) = %q, %v", id, e.ID, err)
		}
	}
	got := all(t, s)
	if len(got) != len(ids) {
		t.Fatalf("listed %d entries, want %d", len(got), len(ids))
	}
	for i, e := range got {
		if e.ID != ids[i] {
			t.Fatalf("entry %d listed with id %q, want %q", i, e.ID, ids[i])
		}
	}
	if p, err := s.List(Query{Sort: "id", PerPage: 1}); err != nil || p.Items[0].ID != slices.Min(ids) {
		t.Errorf("sort id: first %v, %v, want %q", p.Items, err, slices.Min(ids))
	}
	if msgs := h.messages(); len(msgs) != 0 {
		t.Errorf("unexpected warnings: %q", msgs)
	}
}

// TestHeapPerForeignEntry is TestHeapPerEntry for a million logs with
// caller-supplied ids (an imported PocketBase directory): the whole index,
// ids included, must stay within 55 bytes a log.
func TestHeapPerForeignEntry(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a million entries")
	}
	if raceEnabled {
		t.Skip("too slow with the race detector")
	}
	needMillion(t)
	dir := t.TempDir()
	seedForeign(t, dir, million, Options{MaxDays: 5})
	perEntry, s := heapPerEntry(t, dir, Options{MaxDays: 5})
	defer s.Close()
	t.Logf("heap per indexed request log with a caller-supplied id at %d entries: %.1f bytes", s.Len(), perEntry)
	if perEntry > 55 {
		t.Errorf("heap per entry %.1f bytes, want at most 55", perEntry)
	}
}

// BenchmarkForeignIDsAdd adds a million random ids; one op is the million.
func BenchmarkForeignIDsAdd(b *testing.B) {
	ids := packedBytes(randomIDs(million))
	for b.Loop() {
		var x foreignIDs
		for i, id := range ids {
			if !x.add(int64(i+1), id) {
				b.Fatal("add failed")
			}
		}
	}
}

// BenchmarkForeignIDsMerge merges four partial indexes of 250,000 ids, as
// the load does; one op is the merge.
func BenchmarkForeignIDsMerge(b *testing.B) {
	ids := packedBytes(randomIDs(million))
	for b.Loop() {
		b.StopTimer()
		parts := make([]*foreignIDs, 4)
		for k := range parts {
			parts[k] = new(foreignIDs)
			for i := k * million / 4; i < (k+1)*million/4; i++ {
				parts[k].add(int64(i+1), ids[i])
			}
		}
		b.StartTimer()
		parts[0].appendAll(parts[1:])
	}
}

// BenchmarkForeignIDsLookup looks ids up (id → seq, then seq → id) among a
// million.
func BenchmarkForeignIDsLookup(b *testing.B) {
	strs := randomIDs(million)
	ids := packedBytes(strs)
	var x foreignIDs
	for i, id := range ids {
		x.add(int64(i+1), id)
	}
	i := 0
	for b.Loop() {
		seq, ok := x.seqOf(strs[i%million])
		if !ok || seq != int64(i%million+1) {
			b.Fatal("not found")
		}
		if _, ok := x.idOf(seq); !ok {
			b.Fatal("no id")
		}
		i += 7919
	}
}

func packedBytes(ids []string) [][]byte {
	out := make([][]byte, len(ids))
	for i, id := range ids {
		out[i] = []byte(id)
	}
	return out
}
