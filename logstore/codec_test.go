package logstore

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 11, 22, 9, 40, 31, 376e6, time.UTC)

// codecTests are entries that must survive encoding and decoding; they also
// seed FuzzDecode.
var codecTests = []struct {
	name    string
	e       Entry
	foreign string
}{
	{"request", Entry{Created: t0, Message: "GET /api/health", Request: &Request{
		ExecTime: 0.140419, Method: "GET", RemoteIP: "127.0.0.1", Status: 200, URL: "/api/health",
		UserAgent: "curl/7.88.1", UserIP: "127.0.0.1"}}, ""},
	{"failed request", Entry{Created: t0, Level: 8, Message: "GET /api/backups", Request: &Request{
		Auth: "users", AuthID: "abcdefghij12345", ExecTime: 0.05, Method: "GET", Status: 401, URL: "/api/backups",
		Error: "The request requires valid record authorization token.", Details: nil}}, ""},
	{"details map", Entry{Created: t0, Level: 8, Message: "POST /x", Request: &Request{
		Method: "POST", Status: 400, URL: "/x", Error: "Failed.",
		Details: map[string]any{"title": map[string]any{"code": "validation_required"}}}}, ""},
	{"own message", Entry{Created: t0, Message: "GET /a?b=%20", Request: &Request{Method: "GET", URL: "/a?b= ", Status: 200}}, ""},
	{"no IPs", Entry{Created: t0, Message: "GET /", Request: &Request{Method: "GET", URL: "/", Status: 200}}, ""},
	{"other log", Entry{Created: t0, Level: 8, Message: "Failed to restore backup",
		Attrs: map[string]any{"error": "data.db file is missing", "key": "real_upload.zip"}}, ""},
	{"other, no attrs", Entry{Created: t0, Level: -4, Message: "debug"}, ""},
	{"foreign id", Entry{Created: t0, Message: "x", Attrs: map[string]any{"n": 1.5, "ok": true, "list": []any{1.0, "a"}}}, "s5ewyljico6say8"},
	{"extremes", Entry{Created: fromMs(maxCreatedMs), Level: math.MaxInt32, Message: "", Request: &Request{
		Status: math.MinInt32, ExecTime: -0.0}}, ""},
	{"min time", Entry{Created: fromMs(minCreatedMs), Level: math.MinInt32}, ""},
	{"unicode", Entry{Created: t0, Message: "GET /çüé", Request: &Request{Method: "GET", URL: "/çüé", Status: 200,
		Referer: "https://example.com/<&>", UserAgent: "\u2028\x00"}}, ""},
	{"unescaped message", Entry{Created: t0, Message: "GET /a b/é?x=\uFFFD", Request: &Request{Method: "GET",
		URL: "/a%20b/%C3%A9?x=%FF", Status: 200}}, ""},
	{"bad escape", Entry{Created: t0, Message: "GET /%zz", Request: &Request{Method: "GET", URL: "/%zz", Status: 200}}, ""},
	{"invalid UTF-8", Entry{Created: t0, Level: 8, Message: "GET /\xff", Request: &Request{Method: "G\xf5T", URL: "/\xff",
		UserAgent: "\xf5\x1a\xb0\x5e", Referer: "a\xc3", Status: 500, Error: "\xe2\x82", Details: "\xff"}}, ""},
	{"invalid UTF-8, other log", Entry{Created: t0, Message: "\xf5", Attrs: map[string]any{"k\xff": "\xf5"}}, ""},
}

func encodeTest(t testing.TB, e Entry, seq int64, foreign string) []byte {
	t.Helper()
	s := &Store{nextSeq: seq}
	return s.encode(nil, &e, foreign)
}

// normalise returns e as it comes back from the store: times in UTC with ms
// precision, details and attributes through JSON.
func normalise(t testing.TB, e Entry) Entry {
	t.Helper()
	e.validUTF8()
	e.Created = fromMs(clampMs(e.Created))
	e.Level = int(clampInt32(e.Level))
	if r := e.Request; r != nil {
		c := *r
		c.Status = int(clampInt32(r.Status))
		if c.Error != "" {
			c.Details = decodeDetails(string(new(Store).marshalJSON(r.Details)))
		} else {
			c.Details = nil
		}
		e.Request = &c
		e.Attrs = nil
	} else if len(e.Attrs) > 0 {
		var m map[string]any
		if err := json.Unmarshal(new(Store).marshalAttrs(e.Attrs), &m); err != nil {
			t.Fatal(err)
		}
		e.Attrs = m
	} else {
		e.Attrs = nil
	}
	return e
}

func TestCodecRoundTrip(t *testing.T) {
	t.Parallel()
	for i, tt := range codecTests {
		t.Run(tt.name, func(t *testing.T) {
			seq := int64(1 + i*1000)
			p := encodeTest(t, tt.e, seq, tt.foreign)
			var rec record
			if err := decodeRecord(p, &rec); err != nil {
				t.Fatalf("decodeRecord: %v", err)
			}
			if rec.seq != seq {
				t.Errorf("seq = %d, want %d", rec.seq, seq)
			}
			got := rec.entry(42)
			want := normalise(t, tt.e)
			want.ID = tt.foreign
			if want.ID == "" {
				id := makeID(seq, 42)
				want.ID = string(id[:])
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	t.Parallel()
	good := encodeTest(t, codecTests[1].e, 7, "")
	other := encodeTest(t, codecTests[5].e, 7, "")
	uv := func(v uint64) []byte { return binary.AppendUvarint(nil, v) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	tests := []struct {
		name string
		p    []byte
	}{
		{"empty", nil},
		{"unknown kind", cat([]byte{3}, good[1:])},
		{"kind 0", cat([]byte{0}, good[1:])},
		{"seq 0", cat([]byte{1}, uv(0), good[2:])},
		{"seq too large", cat([]byte{1}, uv(maxSeq+1), good[2:])},
		{"trailing byte", cat(good, []byte{0})},
		{"truncated", good[:len(good)-1]},
		{"unknown flag", func() []byte {
			var r record
			_ = decodeRecord(good, &r)
			b := bytes.Clone(good)
			// flags follow kind, seq, created and level
			i := 1 + len(uv(7)) + len(binary.AppendVarint(nil, r.created)) + len(binary.AppendVarint(nil, int64(r.level)))
			b[i] |= 1 << 6
			return b
		}()},
		{"request flags on other log", func() []byte {
			b := bytes.Clone(other)
			var r record
			_ = decodeRecord(other, &r)
			i := 1 + len(uv(7)) + len(binary.AppendVarint(nil, r.created)) + len(binary.AppendVarint(nil, int64(r.level)))
			b[i] |= flagError
			return b
		}()},
		{"huge length", cat([]byte{2}, uv(1), binary.AppendVarint(nil, 0), binary.AppendVarint(nil, 0), []byte{0}, uv(1<<62))},
		{"level beyond int32", cat([]byte{2}, uv(1), binary.AppendVarint(nil, 0), binary.AppendVarint(nil, math.MaxInt32+1), []byte{0}, uv(0), uv(0))},
		{"time beyond 9999", cat([]byte{2}, uv(1), binary.AppendVarint(nil, maxCreatedMs+1), binary.AppendVarint(nil, 0), []byte{0}, uv(0), uv(0))},
		{"two message derivations", func() []byte {
			b := encodeTest(t, codecTests[0].e, 7, "")
			b[flagsAt(t, b)] |= flagUnescMsg
			return b
		}()},
		{"unescaped message of a bad escape", func() []byte {
			b := encodeTest(t, codecTests[12].e, 7, "")
			i := flagsAt(t, b)
			if b[i]&flagDerivedMsg == 0 {
				t.Fatal("codecTests[12] has no derived message")
			}
			b[i] ^= flagDerivedMsg | flagUnescMsg
			return b
		}()},
		{"bad foreign id", cat([]byte{2}, uv(1), binary.AppendVarint(nil, 0), binary.AppendVarint(nil, 0), []byte{flagForeignID}, uv(3), []byte("ABC"), uv(0), uv(0))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r record
			if err := decodeRecord(tt.p, &r); err == nil {
				t.Errorf("decodeRecord(%x) = nil, want an error", tt.p)
			}
		})
	}
}

// flagsAt returns the offset of the flags byte of a valid payload.
func flagsAt(t testing.TB, p []byte) int {
	t.Helper()
	var r record
	if err := decodeRecord(p, &r); err != nil {
		t.Fatal(err)
	}
	return 1 + len(binary.AppendUvarint(nil, uint64(r.seq))) + len(binary.AppendVarint(nil, r.created)) +
		len(binary.AppendVarint(nil, int64(r.level)))
}

// TestMessageDerivation checks which messages are stored.
func TestMessageDerivation(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		msg, method, url string
		want             byte
	}{
		{"GET /a", "GET", "/a", flagDerivedMsg},
		{"GET /a%20b", "GET", "/a%20b", flagDerivedMsg},
		{"GET /a b", "GET", "/a%20b", flagUnescMsg},
		{"GET /a%20b ", "GET", "/a%20b", 0},
		{"GET /a b", "GET", "/a b", flagDerivedMsg},
		{"GET /\uFFFD", "GET", "/%ff", flagUnescMsg},
		{"GET /\xff", "GET", "/%ff", 0},
		{"GET /%zz", "GET", "/%zz", flagDerivedMsg},
		{"GET /a+b", "GET", "/a+b", flagDerivedMsg},
		{"GET  A", "GET", "%20A", flagUnescMsg},
		{"GET /a", "POST", "/a", 0},
		{"", "", "", 0},
		{" ", "", "", flagDerivedMsg},
	} {
		if got := derivation(tt.msg, tt.method, tt.url); got != tt.want {
			t.Errorf("derivation(%q, %q, %q) = %d, want %d", tt.msg, tt.method, tt.url, got, tt.want)
		}
		if tt.want != 0 {
			if got := deriveMessage(tt.want, tt.method, tt.url); got != tt.msg {
				t.Errorf("deriveMessage(%d, %q, %q) = %q, want %q", tt.want, tt.method, tt.url, got, tt.msg)
			}
		}
	}
	for _, u := range unescapeTests {
		checkUnescape(t, u)
	}
}

var unescapeTests = []string{"", "%", "%1", "%1g", "%20", "a%20%", "%%20", "%2x", "%AFz", "/a%2Fb+c",
	"%C3%A9", "%c3%a9%C3", "%ff%FE%fd/x", "%e2%82%ac", "%e2%82", "\xff%41", "%00", "%F5%1A%B0%5E"}

// checkUnescape checks validEscapes and appendMessage against net/url.
func checkUnescape(t *testing.T, u string) {
	t.Helper()
	un, err := url.PathUnescape(u)
	if got := validEscapes(u); got != (err == nil) {
		t.Errorf("validEscapes(%q) = %v, PathUnescape error %v", u, got, err)
	}
	want := "M " + u
	if err == nil && strings.Contains(u, "%") {
		want = "M " + strings.ToValidUTF8(un, "\uFFFD")
	}
	if got := string(appendMessage([]byte("x"), flagUnescMsg, "M", u)); got != "x"+want {
		t.Errorf("appendMessage(%q) = %q, want %q", u, got, "x"+want)
	}
	if got := deriveMessage(flagUnescMsg, "M", u); got != want {
		t.Errorf("deriveMessage(%q) = %q, want %q", u, got, want)
	}
	if got := deriveMessage(flagDerivedMsg, "M", u); got != "M "+u {
		t.Errorf("deriveMessage(plain, %q) = %q", u, got)
	}
}

func FuzzUnescape(f *testing.F) {
	for _, u := range unescapeTests {
		f.Add(u)
	}
	f.Fuzz(checkUnescape)
}

// FuzzDecode checks that decodeRecord never panics, that every slice it
// returns lies inside the payload (the length bound), and that a decoded
// record re-encodes to a payload that decodes to the same entry.
func FuzzDecode(f *testing.F) {
	for i, tt := range codecTests {
		f.Add(encodeTest(f, tt.e, int64(1+i), tt.foreign))
	}
	f.Add([]byte{})
	f.Add([]byte{1, 0x80})
	f.Fuzz(func(t *testing.T, p []byte) {
		var rec record
		if err := decodeRecord(p, &rec); err != nil {
			return
		}
		total := 0
		for _, b := range [][]byte{rec.id, rec.method, rec.url, rec.auth, rec.referer, rec.remoteIP, rec.userIP,
			rec.userAgent, rec.authID, rec.errMsg, rec.details, rec.message, rec.attrs} {
			if len(b) > 0 && !inside(b, p) {
				t.Fatalf("field %q not inside the payload", b)
			}
			total += len(b)
		}
		if total > len(p) {
			t.Fatalf("fields hold %d bytes, payload only %d", total, len(p))
		}
		e := rec.entry(1)
		foreign := ""
		if rec.flags&flagForeignID != 0 {
			foreign = e.ID
		}
		if e.Request == nil && len(rec.attrs) > 0 && e.Attrs == nil {
			return // attributes that are not a JSON object: the index rejects them
		}
		p2 := encodeTest(t, e, rec.seq, foreign)
		var rec2 record
		if err := decodeRecord(p2, &rec2); err != nil {
			t.Fatalf("re-encoded payload does not decode: %v", err)
		}
		if diff := cmp.Diff(normalise(t, e), rec2.entry(1)); diff != "" {
			t.Fatalf("re-encoded entry differs (-first +second):\n%s", diff)
		}
	})
}

// inside reports whether b is a subslice of p.
func inside(b, p []byte) bool {
	for i := range p {
		if &p[i] == &b[0] {
			return i+len(b) <= len(p)
		}
	}
	return false
}

func TestIDs(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, seq := range []int64{1, 2, 35, 36, 1295, 1296, 1 << 32, maxSeq} {
		for _, key := range []uint64{0, 1, 0xdeadbeef} {
			b := makeID(seq, key)
			id := string(b[:])
			if !validID(id) {
				t.Errorf("makeID(%d, %d) = %q, not 15 chars of [a-z0-9]", seq, key, id)
			}
			if got, ok := idSeq(id); !ok || got != seq {
				t.Errorf("idSeq(%q) = %d, %v; want %d", id, got, ok, seq)
			}
			if key == 1 {
				if seen[id] {
					t.Errorf("duplicate id %q", id)
				}
				seen[id] = true
			}
		}
	}
	for _, bad := range []string{"", "abc", "ABCDEFGHIJKLMNO", "abcdefghijklmn-", "abcdefghijklmnop"} {
		if _, ok := idSeq(bad); ok {
			t.Errorf("idSeq(%q) accepted", bad)
		}
	}
	a, b := makeID(5, 1), makeID(5, 2)
	if a == b {
		t.Errorf("ids of different keys are equal: %s", a[:])
	}
}
