package logstore

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// jsonEntries is a varied set of entries for the JSON tests: the Seed mix,
// and every kind of text, number, time and data an entry can hold.
func jsonEntries() []Entry {
	var all strings.Builder
	for c := range 128 {
		all.WriteByte(byte(c))
	}
	texts := []string{
		"", "plain", all.String(), `"quoted" \back\slash`, "<script>&amp;</script>",
		"tab\tnl\ncr\rbs\bff\f\x00\x1f\x7f", "é ü 日本 🙂", "line\u2028para\u2029end",
		"bad \xff\xfe utf-8 \xe2\x80", "\xed\xa0\x80 surrogate", "/api/x?a=1&b=<2>&c=%0D%0A",
	}
	ms := []int64{minCreatedMs, maxCreatedMs, -1, 0, 1, 999, 1_700_000_000_123, 951_782_400_000} // 2000-02-29
	execs := []float64{0, 0.001, 1.5, 1e-7, 1e21, 123456.789, math.NaN(), math.Inf(1), -2.5}
	details := []any{nil, "cause <b>", map[string]any{"email": "must be <valid> & set", "n": 1.5, "nested": []any{true, nil}}}
	var es []Entry
	for i, text := range texts {
		r := &Request{
			Auth: text, ExecTime: execs[i%len(execs)], Method: "GET", Referer: text, Status: 200 + i,
			URL: text, UserAgent: text,
		}
		if i%2 == 0 {
			r.RemoteIP, r.UserIP = "127.0.0.1", text
		}
		if i%3 == 0 {
			r.AuthID = text + "id"
		}
		if i%4 != 1 {
			r.Error, r.Details = text+"error", details[i%len(details)]
		}
		es = append(es,
			Entry{ID: "abc" + text, Created: time.UnixMilli(ms[i%len(ms)]), Level: i*4 - 8, Message: text, Request: r},
			Entry{ID: text, Created: time.UnixMilli(ms[(i+3)%len(ms)]).Add(123456 * time.Nanosecond), Message: text,
				Attrs: map[string]any{"k": text, text: 1.0, "list": []any{text, 2.5, false}, "obj": map[string]any{"<": nil}}})
	}
	es = append(es, Entry{}, Entry{Attrs: map[string]any{}}, Entry{Created: time.Date(20000, 1, 1, 0, 0, 0, 0, time.UTC)},
		Entry{Created: time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC), Request: &Request{}})
	g := newGenerator(rand.New(rand.NewPCG(3, 4)))
	for range 500 {
		es = append(es, g.entry(time.UnixMilli(1_700_000_000_000+rand.Int64N(1e11))))
	}
	return es
}

// TestAppendJSONMatchesEncodingJSON checks that Page.AppendJSON and
// Entry.AppendJSON, which the API writes without encoding/json, give
// byte for byte what encoding/json gives for the same values.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	es := jsonEntries()
	for i, e := range es {
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.AppendJSON([]byte("prefix"))
		if err != nil || !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Errorf("entry %d: AppendJSON\n%s (%v), encoding/json\n%s", i, got, err, want)
		}
	}
	pages := []Page{
		{Items: es, Page: 1, PerPage: 1000, TotalItems: len(es), TotalPages: 1},
		{Items: []Entry{}, Page: 3, PerPage: 50, TotalItems: -1, TotalPages: -1},
		{Items: es[:1], Page: 1 << 40, PerPage: 1, TotalItems: math.MaxInt, TotalPages: math.MinInt},
		{},
	}
	for i, p := range pages {
		want, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.AppendJSON(nil)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("page %d: AppendJSON differs from encoding/json (%v):\n%s\n%s", i, err, got, want)
		}
	}
}

// TestAppendStringMatchesEncodingJSON compares appendString with
// encoding/json over random strings of bytes (ASCII, every control and
// HTML character, multi-byte characters cut or whole, U+2028).
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "<", ">", "&", `"`, `\`, "\u2028", "\u2029", "é", "日", "🙂", "\xff", "\xe2\x80", "\xf0\x9f", "\x00", "\n", "\x7f"}
	for range 20000 {
		var b []byte
		for range r.IntN(12) {
			if r.IntN(3) == 0 {
				b = append(b, byte(r.IntN(256)))
			} else {
				b = append(b, pieces[r.IntN(len(pieces))]...)
			}
		}
		s := string(b)
		want, _ := json.Marshal(s)
		if got := appendString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendString(%q) = %s, encoding/json %s", s, got, want)
		}
	}
}

// TestAppendTimeMatchesFormat compares appendTime with time's
// AppendFormat of TimeLayout over the storable range.
func TestAppendTimeMatchesFormat(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	ms := []int64{minCreatedMs, maxCreatedMs, 0, -1, 1, 951_868_799_999}
	for range 20000 {
		ms = append(ms, minCreatedMs+r.Int64N(maxCreatedMs-minCreatedMs+1))
	}
	for _, m := range ms {
		want := fromMs(m).Format(TimeLayout)
		if got := string(appendTime(nil, m)); got != want || !utf8.ValidString(got) {
			t.Fatalf("appendTime(%d) = %s, want %s", m, got, want)
		}
	}
}
