package logstore

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRequestEntryFromIndex: a request log built from the index's columns
// (what List and After answer) is the entry its frame decodes to (what
// Get answers), for the Seed mix and for the odd cases: foreign ids,
// errors with details of every JSON kind, an auth id, a proxy's client
// address, non-printable and non-ASCII text, exec times the compact
// column cannot hold, levels. In the filling chunk and, after a reopen,
// in sealed ones.
func TestRequestEntryFromIndex(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := newClock()
	s := mustOpen(t, dir, testOptions(c, &logRecorder{}))
	g := newGenerator(rand.New(rand.NewPCG(3, 4)))
	odd := []Entry{
		{ID: "abcdefghijklmno", Message: "imported", Level: 4, Request: &Request{Method: "GET", URL: "/x", Status: 200}},
		{Message: "GET /api/zz%0D%0Ay", Request: &Request{Method: "GET", URL: "/api/zz%0d%0ay", Status: 404, Error: "not found", Details: map[string]any{"a": []any{1.5, "b", nil, true}}}},
		{Message: "POST /é?q=ü", Request: &Request{Method: "POST", URL: "/é?q=ü", Status: 400, Error: "bad", Details: "plain text", AuthID: "u1", Auth: "users"}},
		{Message: "custom message", Level: 8, Request: &Request{Method: "PATCH", URL: "/p", Status: 500, Error: "boom", ExecTime: 1e-9, RemoteIP: "10.0.0.1", UserIP: "203.0.113.9", Referer: "https://r.example/"}},
		{Message: "DELETE /d", Request: &Request{Method: "DELETE", URL: "/d", Status: 204, ExecTime: 123456.789123, AuthID: "only-id", Auth: "_superusers"}},
		{Message: "GET /e", Request: &Request{Method: "GET", URL: "/e", Status: 500, Error: "no details"}},
	}
	for i := range 3000 {
		if i%500 < len(odd) {
			e := odd[i%500]
			if e.ID != "" {
				e.ID = e.ID[:14] + string(rune('a'+i/500))
			}
			s.Add(e)
			continue
		}
		s.Add(g.entry(c.Now().Add(time.Duration(i) * time.Millisecond)))
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	check := func(s *Store) {
		t.Helper()
		s.mu.RLock()
		defer s.mu.RUnlock()
		n := 0
		for _, ch := range s.idx.chunks {
			for i := range ch.n {
				r := row{ch, i}
				if ch.flagsAt(i)&rowOther != 0 {
					continue
				}
				want, _, err := s.readEntry(r, nil)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, s.idx.requestEntry(r)); diff != "" {
					t.Fatalf("row %d: the entry from the index differs from its frame's (-frame +index):\n%s", r.seq(), diff)
				}
				n++
			}
		}
		if n != 3000 {
			t.Fatalf("%d request logs compared, want 3000", n)
		}
	}
	check(s)
	s.Close()
	check(mustOpen(t, dir, testOptions(c, &logRecorder{})))
}
