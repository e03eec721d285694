package logstore

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"strongbox/filterlang"
)

// queryFixture builds a store with request logs and other logs whose
// attributes collide with request keys, spread over many small segments
// (so many chunks: the parallel scans run), and returns the store and the
// entries in insertion order.
func queryFixture(t *testing.T) (*Store, []Entry) { return queryFixtureOf(t, true) }

// queryFixtureOf is queryFixture, with other logs or with request logs only.
func queryFixtureOf(t *testing.T, withOthers bool) (*Store, []Entry) {
	t.Helper()
	c, h := newClock(), &logRecorder{}
	opts := testOptions(c, h)
	opts.segmentSize = 16 << 10
	opts.tune = tuning{chunkRows: 7, minChunksPerWorker: 1}
	s := mustOpen(t, t.TempDir(), opts)
	r := rand.New(rand.NewPCG(1, 2))
	methods := []string{"GET", "POST", "PATCH", "DELETE"}
	urls := []string{"/api/health", "/api/logs?filter=x", "/api/backups", "/api/collections/users/records", "/_%x",
		"/a%20b?q=%C3%A9", "/%FF%FEz", "/a%2fb"}
	statuses := []int{200, 204, 400, 401, 404, 500}
	others := []map[string]any{
		nil,
		{"status": "abc", "url": 5.0},
		{"status": 404.0, "method": "GET", "type": "job"},
		{"n": 3.0, "flag": true, "list": []any{1.0, "a"}, "obj": map[string]any{"k": 1.0}},
		{"error": "failed to restore", "key": "x.zip", "details": nil},
		{"status": nil, "execTime": 12.5, "auth": []any{}},
	}
	for i := range 300 {
		var e Entry
		// Other logs only in the first half: the chunks of the second half
		// hold request logs only (the scans' fast paths).
		if withOthers && i%7 == 3 && i < 150 {
			a := others[r.IntN(len(others))]
			e = Entry{Level: []int{-4, 0, 4, 8}[r.IntN(4)], Message: fmt.Sprint("job ", i%11), Attrs: a}
			if i == 52 {
				e.Level = 1000 // outside the memo table
			}
		} else {
			e = req(methods[r.IntN(4)], urls[r.IntN(len(urls))], statuses[r.IntN(len(statuses))])
			e.Request.ExecTime = float64(r.IntN(1000)) / 7
			e.Request.UserAgent = []string{"curl/8.5.0", "Mozilla/5.0", "b", ""}[i%4]
			if i%3 == 0 {
				e.Request.Referer = fmt.Sprintf("https://example.com/%d", i%5)
			}
			switch r.IntN(4) {
			case 0:
				e.Request.RemoteIP, e.Request.UserIP = "", "" // logIP off
			case 1:
				e.Request.UserIP = "10.0.0.1"
			}
			if r.IntN(3) == 0 {
				e.Request.Auth, e.Request.AuthID = "users", fmt.Sprintf("user%010d", r.IntN(5))
			}
			if e.Request.Error != "" && r.IntN(2) == 0 {
				e.Request.Details = map[string]any{"x": "y", "n": float64(i % 3)}
			}
			if i%2 == 0 {
				// The request logger's message: the url unescaped.
				if u, err := url.PathUnescape(e.Request.URL); err == nil {
					e.Message = e.Request.Method + " " + strings.ToValidUTF8(u, "\uFFFD")
				}
			}
			if i%13 == 0 {
				e.Message = "custom " + e.Message
			}
			if i == 200 {
				e.Request.Status = 2000 // outside the memo table
			}
		}
		s.Add(e)
		c.Add(time.Duration(r.IntN(20)) * time.Minute)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := len(s.idx.chunks); n < 10 {
		t.Fatalf("fixture has only %d chunks", n)
	}
	return s, all(t, s)
}

// genericResolver binds the fields to Entry values the slow, obvious way:
// data.* through Entry.Data() as generic JSON. List must agree with it.
func genericResolver(name string) (filterlang.Field[Entry], bool) {
	switch name {
	case "id":
		return filterlang.Field[Entry]{Type: filterlang.TypeString, Str: func(e Entry) (string, bool) { return e.ID, true }}, true
	case "created", "updated":
		return filterlang.Field[Entry]{Type: filterlang.TypeString, Str: func(e Entry) (string, bool) {
			return e.Created.Format(TimeLayout), true
		}}, true
	case "level":
		return filterlang.Field[Entry]{Type: filterlang.TypeNumber, Num: func(e Entry) (float64, bool) { return float64(e.Level), true }}, true
	case "message":
		return filterlang.Field[Entry]{Type: filterlang.TypeString, Str: func(e Entry) (string, bool) { return e.Message, true }}, true
	case "data":
		return filterlang.Field[Entry]{Type: filterlang.TypeString, Str: func(e Entry) (string, bool) {
			b, _ := e.appendData(nil)
			return string(b), true
		}}, true
	}
	path, ok := strings.CutPrefix(name, "data.")
	if !ok {
		return filterlang.Field[Entry]{}, false
	}
	keys := strings.Split(path, ".")
	return filterlang.Field[Entry]{Type: filterlang.TypeDynamic, JSON: true, Dyn: func(e Entry) filterlang.Value {
		v, _ := lookupPath(dataOf(e), keys)
		return toValue(v)
	}}, true
}

var dataCache sync.Map // *Request → its data as generic JSON

// dataOf returns e.Data() as encoding/json decodes it, cached for a
// request log by its Request (which alone makes its data, and which no
// other entry of any test shares, whatever the ids).
func dataOf(e Entry) any {
	if e.Request == nil {
		return jsonRoundTrip(e.Data())
	}
	if v, ok := dataCache.Load(e.Request); ok {
		return v
	}
	v := jsonRoundTrip(e.Data())
	dataCache.Store(e.Request, v)
	return v
}

func jsonRoundTrip(v any) any {
	b, _ := json.Marshal(v)
	var out any
	json.Unmarshal(b, &out)
	return out
}

var testFilters = []string{
	`data.status >= 400`, `data.status = 200`, `data.status = "200"`, `data.status != 404`,
	`data.status = null`, `data.status != null`, `data.status = "abc"`, `data.status > "a"`,
	`data.method = "GET"`, `data.method ~ "po"`, `data.method != "GET"`, `data.url ~ "api"`,
	`data.url !~ "%x"`, `data.url ~ "_%"`, `data.url = 5`, `data.url > 4`,
	`data.remoteIP = null`, `data.remoteIP = ""`, `data.userIP != "127.0.0.1"`, `data.userIP ~ "10."`,
	`data.authId = null`, `data.authId != null`, `data.authId ~ "user"`,
	`data.error ~ "fail"`, `data.error = null`, `data.details = null`, `data.details.x = "y"`, `data.details.n >= 1`,
	`data.type = "request"`, `data.type != "request"`, `data.type = null`,
	`data.n > 1`, `data.list ?= "a"`, `data.list = '[1,"a"]'`, `data.list.1 = "a"`, `data.obj.k = 1`, `data.obj ~ "k"`,
	`data.flag = true`, `data.auth = ""`, `data.auth = null`, `data.auth ?= "users"`, `data.execTime > 100`,
	`data.status > data.execTime`, `data.missing = null`, `data.status.x = null`,
	`level > 0`, `level = "8"`, `level = false`, `message ~ "GET"`, `message = ""`, `message ~ "job 1%"`,
	`message ~ "a b"`, `message ~ "%x"`, `message ~ "\uFFFD"`, `message = "GET /a/b"`, `message > "PATCH"`,
	`message ~ "custom"`, `message ~ "api" && level > 0`, `message ~ data.url`, `message != data.method`,
	`id != ""`, `id > "000000004"`, `created > "2026-11-22 12"`, `created <= @now`, `updated >= created`,
	`created ~ "2026-11-23"`, `created = "2026-11-22 09:40:31.376Z"`, `created != "2026-11-22 09:40:31.376Z"`,
	`data ~ "request"`, `data ~ "x.zip"`,
	`data.status >= 400 && data.method = "GET" || level < 0`, `(level = 4 || level = 8) && data.n != 3`,
	// Split into terms memoised each (see filter).
	`data.url ~ "health" && data.status = 200`, `data.method = "POST" || data.url ~ "logs"`,
	`level > 0 && message ~ "api" && data.status >= 400`, `data.userIP ~ "10." && data.status != 404`,
	`(data.status = 200 && data.method = "GET") || data.url ~ "x"`, `data.status = 2000 || data.n = 3`,
	`data.referer ~ "1" && data.userAgent != "b" && level <= 8`, `1 = 1 && data.status = 204`, `1 = 2 || level = 1000`,
}

func TestListFilters(t *testing.T) {
	t.Parallel()
	for _, withOthers := range []bool{true, false} {
		t.Run(fmt.Sprint("others=", withOthers), func(t *testing.T) {
			t.Parallel()
			testListFilters(t, withOthers)
		})
	}
}

func testListFilters(t *testing.T, withOthers bool) {
	s, entries := queryFixtureOf(t, withOthers)
	now := s.now()
	for _, f := range testFilters {
		t.Run(f, func(t *testing.T) {
			e, err := filterlang.Parse(f)
			if err != nil {
				t.Fatal(err)
			}
			pred, err := filterlang.Compile(e, genericResolver, filterlang.Options{Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, e := range entries {
				if pred(e) {
					want = append(want, e.ID)
				}
			}
			p, err := s.List(Query{Filter: f, PerPage: MaxPerPage})
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			var got []string
			for _, e := range p.Items {
				got = append(got, e.ID)
			}
			if diff := gocmp.Diff(want, got); diff != "" {
				t.Errorf("List(%q) ids (-want +got):\n%s", f, diff)
			}
			if p.TotalItems != len(want) {
				t.Errorf("TotalItems = %d, want %d", p.TotalItems, len(want))
			}
		})
	}
}

// sortValue is the naive sort value of a field of an entry.
func sortValue(e Entry, name string, seq int64) sval {
	switch name {
	case "id":
		return sval{class: 2, str: e.ID}
	case "created", "updated":
		return sval{class: 1, num: float64(e.Created.UnixMilli())}
	case "level":
		return sval{class: 1, num: float64(e.Level)}
	case "message":
		return sval{class: 2, str: e.Message}
	case "rowid", "@rowid":
		return sval{class: 1, num: float64(seq)}
	}
	v, _ := lookupPath(dataOf(e), strings.Split(strings.TrimPrefix(name, "data."), "."))
	switch t := v.(type) {
	case float64:
		return sval{class: 1, num: t}
	case bool:
		return sval{class: 1, num: boolNum(t)}
	case string:
		return sval{class: 2, str: t}
	case nil:
		return sval{}
	default:
		b, _ := json.Marshal(t)
		return sval{class: 2, str: string(b)}
	}
}

// sortFilters are the filters TestListSortAndPages combines with every
// sort: matched by whole chunks, counted from chunk summaries, split at
// && or ||.
var sortFilters = []string{"", "level >= 0", "level > 0", "data.status >= 400",
	`data.url ~ "api" && data.status = 200`, `data.status = 200 || level < 0`}

// matches evaluates filter on e with the naive resolver (its data cached
// in dataCache).
func matches(t *testing.T, filter string, e Entry) bool {
	if filter == "" {
		return true
	}
	x, err := filterlang.Parse(filter)
	if err != nil {
		t.Fatal(err)
	}
	pred, err := filterlang.Compile(x, genericResolver, filterlang.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return pred(e)
}

func TestListSortAndPages(t *testing.T) {
	t.Parallel()
	for _, withOthers := range []bool{true, false} {
		t.Run(fmt.Sprint("others=", withOthers), func(t *testing.T) {
			t.Parallel()
			testListSortAndPages(t, withOthers)
		})
	}
}

func testListSortAndPages(t *testing.T, withOthers bool) {
	s, entries := queryFixtureOf(t, withOthers)
	seqOf := map[string]int64{}
	for i, e := range entries {
		seqOf[e.ID] = int64(i)
	}
	sorts := []string{
		"", "created", "-created", "updated", "-level", "level,-created", "message", "-message,id",
		"id", "-id", "data.status", "-data.status", "data.url,-rowid", "-data.execTime",
		"data.method,data.status,-created", "data.n", "-data.list", "data.obj", "data.missing,-id",
		"rowid", "-rowid", "@rowid", "-@rowid", " +level , data.authId ", "-data.details.n,level",
		"-data.url", "data.url", "-data.method,-created", "data.auth,-data.status", "-data.userAgent", "data.referer",
		"-data.remoteIP", "data.userIP,rowid", "-message", "data.error", "-data.type,-id",
	}
	for _, sortExpr := range sorts {
		for _, filter := range sortFilters {
			fields, _ := filterlang.ParseSort(sortExpr, nil)
			want := slices.DeleteFunc(slices.Clone(entries), func(e Entry) bool { return !matches(t, filter, e) })
			slices.SortStableFunc(want, func(a, b Entry) int {
				for _, f := range fields {
					c := sortValue(a, f.Name, seqOf[a.ID]).compare(sortValue(b, f.Name, seqOf[b.ID]))
					if f.Desc {
						c = -c
					}
					if c != 0 {
						return c
					}
				}
				return 0
			})
			for _, perPage := range []int{7, 1000} {
				var got []Entry
				for page := 1; page <= 3; page++ {
					p, err := s.List(Query{Sort: sortExpr, Filter: filter, Page: page, PerPage: perPage, SkipTotal: page%2 == 0})
					if err != nil {
						t.Fatalf("List(sort %q): %v", sortExpr, err)
					}
					if page%2 == 0 && (p.TotalItems != -1 || p.TotalPages != -1) {
						t.Fatalf("skipTotal: totals %d, %d", p.TotalItems, p.TotalPages)
					}
					if page%2 == 1 && (p.TotalItems != len(want) || p.TotalPages != (len(want)+perPage-1)/perPage) {
						t.Fatalf("totals %d, %d for %d items, perPage %d", p.TotalItems, p.TotalPages, len(want), perPage)
					}
					got = append(got, p.Items...)
				}
				w := want[:min(len(want), 3*perPage)]
				if diff := gocmp.Diff(ids(w), ids(got)); diff != "" {
					t.Fatalf("sort %q filter %q perPage %d (-want +got):\n%s", sortExpr, filter, perPage, diff)
				}
			}
		}
	}
	// @random: a permutation, and not the insertion order.
	p, err := s.List(Query{Sort: "@random", PerPage: 1000})
	if err != nil {
		t.Fatal(err)
	}
	got, want := ids(p.Items), ids(entries)
	if slices.Equal(got, want) {
		t.Errorf("@random returned insertion order")
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("@random is not a permutation")
	}
}

func ids(es []Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

func TestListPaging(t *testing.T) {
	t.Parallel()
	s, entries := queryFixture(t)
	n := len(entries)
	tests := []struct {
		q                       Query
		page, perPage, first, k int
	}{
		{Query{}, 1, 30, 0, 30},
		{Query{Page: 0, PerPage: 0}, 1, 30, 0, 30},
		{Query{Page: -1, PerPage: -1}, 1, 30, 0, 30},
		{Query{Page: 2, PerPage: 10}, 2, 10, 10, 10},
		{Query{PerPage: 5000}, 1, 1000, 0, n},
		{Query{Page: 999, PerPage: 2}, 999, 2, 0, 0},
		{Query{Page: 1 << 60, PerPage: 1000}, 1 << 60, 1000, 0, 0},
		{Query{Page: (n + 6) / 7, PerPage: 7}, (n + 6) / 7, 7, (n - 1) / 7 * 7, n - (n-1)/7*7},
	}
	for _, tt := range tests {
		p, err := s.List(tt.q)
		if err != nil {
			t.Fatal(err)
		}
		if p.Page != tt.page || p.PerPage != tt.perPage || p.TotalItems != n ||
			p.TotalPages != (n+tt.perPage-1)/tt.perPage || len(p.Items) != tt.k {
			t.Errorf("List(%+v) = page %d perPage %d total %d/%d items %d; want page %d perPage %d items %d",
				tt.q, p.Page, p.PerPage, p.TotalItems, p.TotalPages, len(p.Items), tt.page, tt.perPage, tt.k)
			continue
		}
		if tt.k > 0 && p.Items[0].ID != entries[tt.first].ID {
			t.Errorf("List(%+v) starts at %s, want entry %d", tt.q, p.Items[0].ID, tt.first)
		}
	}
	if p, _ := s.List(Query{Filter: `id = "nope"`}); p.Items == nil || p.TotalItems != 0 || p.TotalPages != 0 {
		t.Errorf("empty result = %+v, want items [] and zero totals", p)
	}
}

func TestListErrors(t *testing.T) {
	t.Parallel()
	s, _ := queryFixture(t)
	for _, f := range []string{"unknown = 1", "level =", "(level=0", "// only a comment", "rowid > 1",
		"data.a-b = 1", "@request.auth.id != ''", "level=0 ||", "a (b=1)"} {
		if _, err := s.List(Query{Filter: f}); !errors.Is(err, ErrInvalidFilter) {
			t.Errorf("List(filter %q) error = %v, want ErrInvalidFilter", f, err)
		}
	}
	for _, so := range []string{"unknown", "created,", ",created", "--created", "@now", "a,b,c,d,e,f,g,h,i",
		"data.", "null", "data", "-data", "created,data"} {
		if _, err := s.List(Query{Sort: so}); !errors.Is(err, ErrInvalidSort) {
			t.Errorf("List(sort %q) error = %v, want ErrInvalidSort", so, err)
		}
	}
	if _, err := s.Stats("level >"); !errors.Is(err, ErrInvalidFilter) {
		t.Errorf("Stats(bad filter) error = %v, want ErrInvalidFilter", err)
	}
}

func TestStats(t *testing.T) {
	t.Parallel()
	s, entries := queryFixture(t)
	for _, f := range []string{"", "data.status >= 400", "rowid > 100 && rowid <= 200", "level < 0", `id = "x"`} {
		var pred filterlang.Predicate[Entry]
		if f != "" {
			// rowid is the insertion index + 1 in the fixture.
			g := strings.ReplaceAll(f, "rowid", "data.rowid")
			e, err := filterlang.Parse(g)
			if err != nil {
				t.Fatal(err)
			}
			if pred, err = filterlang.Compile(e, genericResolver, filterlang.Options{}); err != nil {
				t.Fatal(err)
			}
		}
		counts := map[time.Time]int{}
		for i, e := range entries {
			// The same entry with its rowid as a data attribute.
			attrs := jsonRoundTrip(e.Data()).(map[string]any)
			attrs["rowid"] = float64(i + 1)
			e.Request, e.Attrs = nil, attrs
			if pred == nil || pred(e) {
				counts[e.Created.Truncate(time.Hour)]++
			}
		}
		var want []HourStat
		for h, n := range counts {
			want = append(want, HourStat{Date: h, Total: n})
		}
		slices.SortFunc(want, func(a, b HourStat) int { return a.Date.Compare(b.Date) })
		got, err := s.Stats(f)
		if err != nil {
			t.Fatalf("Stats(%q): %v", f, err)
		}
		if diff := gocmp.Diff(want, got, cmpopts.EquateEmpty(), gocmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
			t.Errorf("Stats(%q) (-want +got):\n%s", f, diff)
		}
		if got == nil {
			t.Errorf("Stats(%q) = nil, want []", f)
		}
	}
}

// TestRewriteTimes checks that comparisons of created with strings and
// macros select the same rows with and without the rewrite to the
// millisecond column.
func TestRewriteTimes(t *testing.T) {
	s, _ := queryFixture(t)
	lits := []string{`""`, `"2026"`, `"2026-11-22"`, `"2026-11-22 12"`, `"2026-11-22 12:00:00.000Z"`,
		`"2026-11-22 09:40:31.376Z"`, `"2026-11-22 09:40:31.376"`, `"2026-11-22 09:40:31.3765Z"`, `"2026-11-23 0"`,
		`"2026-11-22T10:00:00Z"`, `"z"`, `"0"`, `"9999-12-31 23:59:59.999Z"`, `"0001-01-01 00:00:00.000Z"`,
		"@now", "@yesterday", "@todayStart", "@todayEnd", "@monthStart", "@monthEnd", "@yearStart", "@yearEnd", "@tomorrow",
		"5", "null", "level"}
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 40; i++ {
		ms := t0.UnixMilli() + r.Int64N(4*24*3600*1000)
		lits = append(lits, `"`+formatMs(ms)[:5+r.IntN(20)]+`"`)
	}
	for _, lit := range lits {
		for _, op := range []string{"=", "!=", "<", "<=", ">", ">=", "?=", "?>", "~"} {
			for _, f := range []string{"created " + op + " " + lit, lit + " " + op + " updated"} {
				match := func(rewrite bool) ([]int64, error) {
					rewriteTimesOn = rewrite
					defer func() { rewriteTimesOn = true }()
					pred, err := compileFilter(s.idx, f, false, s.now())
					if err != nil {
						return nil, err
					}
					var seqs []int64
					each(s.idx.chunks, false, func(r row) bool {
						if pred.match(r) {
							seqs = append(seqs, r.seq())
						}
						return true
					})
					return seqs, nil
				}
				want, err1 := match(false)
				got, err2 := match(true)
				if (err1 == nil) != (err2 == nil) {
					t.Fatalf("%s: errors %v / %v", f, err1, err2)
				}
				if diff := gocmp.Diff(want, got); diff != "" {
					t.Errorf("%s: rewritten filter differs (-plain +rewritten):\n%s", f, diff)
				}
			}
		}
	}
}

// TestTopK checks the heap against a full sort on random data.
func TestTopK(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	c := &chunk{n: chunkSize, created: timeCol{wide: make([]int64, chunkSize)}}
	for i := range chunkSize {
		c.created.wide[i] = r.Int64N(100)
	}
	less := func(a, b row) int {
		if x := cmp.Compare(a.c.createdAt(a.i), b.c.createdAt(b.i)); x != 0 {
			return x
		}
		return cmp.Compare(a.i, b.i)
	}
	for _, k := range []int{0, 1, 2, 3, 10, 100, chunkSize, chunkSize + 1} {
		h := topK{k: k, cmp: less}
		var rows []row
		for i := range c.n {
			h.offer(row{c, i})
			rows = append(rows, row{c, i})
		}
		slices.SortFunc(rows, less)
		slices.SortFunc(h.rows, less)
		want := rows[:min(k, len(rows))]
		if !slices.EqualFunc(want, h.rows, func(a, b row) bool { return a.i == b.i }) {
			t.Errorf("top %d differs from the full sort", k)
		}
	}
}

// TestQueryEmptyStore: a store with no entries (new, or emptied by
// maxDays 0) answers every query with an empty result, never a panic.
func TestQueryEmptyStore(t *testing.T) {
	t.Parallel()
	s := mustOpen(t, t.TempDir(), testOptions(newClock(), &logRecorder{}))
	check := func(when string) {
		t.Helper()
		for _, q := range []Query{{}, {Filter: "level > 0"}, {Sort: "-created"}, {Sort: "rowid", Filter: `message ~ "x"`}, {Sort: "-data.status", SkipTotal: true}} {
			p, err := s.List(q)
			if err != nil || len(p.Items) != 0 || (p.TotalItems != 0 && !q.SkipTotal) {
				t.Errorf("%s: List(%+v) = %+v, %v", when, q, p, err)
			}
		}
		for _, f := range []string{"", "level > 0"} {
			if st, err := s.Stats(f); err != nil || len(st) != 0 {
				t.Errorf("%s: Stats(%q) = %v, %v", when, f, st, err)
			}
		}
	}
	check("new store")
	s.Add(Entry{Message: "x", Request: &Request{Method: "GET", Status: 200}})
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.SetRetention(0, 0); err != nil {
		t.Fatal(err)
	}
	check("after maxDays 0")
}
