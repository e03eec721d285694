package conformance

import (
	"fmt"
	"math"
	mrand "math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The fake's logs API: list, view and stats over the logged requests.

func (f *fakeServer) handleLogs(q *fakeReq) error {
	if f.bug("filter-before-auth") && q.r.URL.Query().Get("filter") != "" {
		if _, ok := f.knownFilter(q.r.URL.Query().Get("filter"), true); !ok {
			return ferr(400, msgInvalidFilter)
		}
	}
	if q.auth == nil && f.bug("logs-guest-403") {
		return ferr(403, msgNotAllowed)
	}
	if q.auth == nil {
		return ferr(401, msgNeedsToken)
	}
	if q.authColl.name != "_superusers" && !f.bug("users-read-logs") {
		return ferr(403, msgNotAllowed)
	}
	p, qs := q.r.URL.Path, q.r.URL.Query()
	rows := make([]map[string]any, len(f.logs))
	for i, l := range f.logs {
		rows[i] = map[string]any{"id": l.id, "created": l.created, "data": l.data, "message": l.message,
			"level": float64(l.level), "rowid": float64(i + 1)}
	}
	pub := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			if k != "rowid" {
				out[k] = v
			}
		}
		return out
	}
	filter := func(allowRowid bool) ([]map[string]any, error) {
		src := qs.Get("filter")
		if src == "" {
			if qs.Has("filter") && f.bug("empty-filter-drops-errors") {
				src = "level = 0"
			} else {
				return rows, nil
			}
		}
		ex, ok := f.knownFilter(src, allowRowid)
		if !ok {
			if f.bug("reference-filter-message") {
				return nil, ferr(400, msgGenericBad)
			}
			return nil, ferr(400, msgInvalidFilter)
		}
		var out []map[string]any
		for _, row := range rows {
			if ex(row) {
				out = append(out, row)
			}
		}
		return out, nil
	}
	switch {
	case p == "/api/logs":
		page, perPage := 1, 30
		if f.bug("default-perpage-50") {
			perPage = 50
		}
		for _, pp := range []struct {
			key string
			dst *int
			def int
		}{{"page", &page, 1}, {"perPage", &perPage, perPage}} {
			if v := qs.Get(pp.key); v != "" {
				n, err := strconv.Atoi(v)
				if err != nil && f.bug("lax-page-number") {
					n, err = pp.def, nil
				}
				if err != nil {
					return ferr(400, msgGenericBad)
				}
				if n < 1 && !(pp.key == "page" && f.bug("page-below-1-kept")) {
					n = pp.def
				}
				*pp.dst = n
			}
		}
		if !f.bug("no-perpage-cap") {
			perPage = min(perPage, 1000)
		}
		matched, err := filter(false)
		if err != nil {
			return err
		}
		if s := qs.Get("sort"); s == "" && f.bug("default-newest-first") {
			slices.Reverse(matched)
		} else if s != "" {
			if err := f.sortBugs(s); err != nil {
				return err
			}
			if f.bug("ignore-descending") {
				s = strings.ReplaceAll(s, "-", "")
			}
			if err := fakeSort(matched, s); err != nil && !f.bug("unknown-sort-ignored") {
				return ferr(400, msgGenericBad)
			}
		}
		total := len(matched)
		items := []map[string]any{}
		start := max(0, (page-1)*perPage)
		if page > 1 && f.bug("page-offset-off-by-one") {
			start--
		}
		for i := start; i < total && i < page*perPage; i++ {
			items = append(items, pub(matched[i]))
		}
		ti, tp := float64(total), math.Ceil(float64(total)/float64(perPage))
		if qs.Get("skipTotal") == "1" && !f.bug("ignore-skiptotal") {
			ti, tp = -1, -1
		}
		env := map[string]any{"items": items, "page": page, "perPage": perPage, "totalItems": ti, "totalPages": tp}
		if f.bug("list-extra-key") {
			env["count"] = len(items)
		}
		return q.json(200, env)
	case p == "/api/logs/stats":
		matched, err := filter(!f.bug("stats-refuse-rowid"))
		if err != nil {
			return err
		}
		counts := map[string]int{}
		for _, row := range matched {
			counts[row["created"].(string)[:13]+":00:00.000Z"]++
		}
		out := []map[string]any{}
		for _, d := range sortedKeys(counts) {
			out = append(out, map[string]any{"date": d, "total": counts[d]})
		}
		if f.bug("stats-without-z") {
			for _, o := range out {
				o["date"] = strings.TrimSuffix(o["date"].(string), "Z")
			}
		}
		if len(out) == 0 && f.bug("stats-empty-null") {
			return q.json(200, nil)
		}
		return q.json(200, out)
	default:
		id := strings.TrimPrefix(p, "/api/logs/")
		for _, row := range rows {
			if row["id"] == id {
				e := pub(row)
				if f.bug("view-drops-level") {
					delete(e, "level")
				}
				return q.json(200, e)
			}
		}
		if f.bug("view-unknown-400") {
			return ferr(400, msgGenericBad)
		}
		return ferr(404, msgNotFound)
	}
}

// sortBugs refuses the sort specs the sort bugs misread.
func (f *fakeServer) sortBugs(spec string) error {
	for _, p := range strings.Split(spec, ",") {
		p = strings.TrimSpace(p)
		switch {
		case strings.HasPrefix(p, "+") && f.bug("plus-prefix-refused"),
			p == "@random" && f.bug("random-refused"),
			strings.Contains(p, "data.") && f.bug("data-sort-refused"):
			return ferr(400, msgGenericBad)
		}
	}
	return nil
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func fakeField(row map[string]any, name string) (any, error) {
	switch {
	case name == "id" || name == "created" || name == "message" || name == "level" || name == "rowid":
		return row[name], nil
	case strings.HasPrefix(name, "data."):
		var cur any = row["data"]
		for _, p := range strings.Split(strings.TrimPrefix(name, "data."), ".") {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, nil
			}
			cur = m[p]
		}
		return cur, nil
	}
	return nil, fmt.Errorf("unknown field %q", name)
}

func fakeSort(rows []map[string]any, spec string) error {
	type key struct {
		field string
		desc  bool
	}
	var keys []key
	for _, p := range strings.Split(spec, ",") {
		p = strings.TrimSpace(p)
		k := key{field: strings.TrimPrefix(strings.TrimPrefix(p, "-"), "+"), desc: strings.HasPrefix(p, "-")}
		if k.field == "@random" {
			mrand.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
			return nil
		}
		if _, err := fakeField(map[string]any{}, k.field); err != nil || k.field == "rowid" {
			return fmt.Errorf("invalid sort field %q", k.field)
		}
		keys = append(keys, k)
	}
	sort.SliceStable(rows, func(i, j int) bool {
		for _, k := range keys {
			a, _ := fakeField(rows[i], k.field)
			b, _ := fakeField(rows[j], k.field)
			c := fakeCompare(a, b)
			if c != 0 {
				return (c < 0) != k.desc
			}
		}
		return false
	})
	return nil
}

// fakeCompare orders nil < numbers < strings.
func fakeCompare(a, b any) int {
	rank := func(v any) int {
		switch v.(type) {
		case nil:
			return 0
		case float64:
			return 1
		}
		return 2
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra - rb
	}
	switch x := a.(type) {
	case float64:
		y := b.(float64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case string:
		return strings.Compare(x, b.(string))
	}
	return 0
}

// ---- filters -------------------------------------------------------------------

// The fake has no filter language. It knows the filters the suite sends by
// heart, each answered by a Go predicate, and refuses every other filter as
// malformed. Most are sent as "<scope> && (<filter>)", where the scope
// `data.url ~ "cf=<nonce>"` selects the suite's own requests; knownFilter
// takes the scope off, then looks the rest up in fakeFilters.

// fakeRow is a log entry as the logs handler sees it (rowid included).
type fakeRow = map[string]any

func rowData(e fakeRow, key string) any {
	d, _ := e["data"].(map[string]any)
	return d[key]
}

func rowStatus(e fakeRow) float64 { s, _ := rowData(e, "status").(float64); return s }
func rowLevel(e fakeRow) float64  { l, _ := e["level"].(float64); return l }
func rowMethod(e fakeRow) string  { m, _ := rowData(e, "method").(string); return m }
func rowAuth(e fakeRow) string    { a, _ := rowData(e, "auth").(string); return a }
func rowURL(e fakeRow) string     { u, _ := rowData(e, "url").(string); return u }
func rowMessage(e fakeRow) string { m, _ := e["message"].(string); return m }

// like is the ~ operator on plain text: case-insensitive containment.
func like(s, sub string) bool { return strings.Contains(strings.ToLower(s), strings.ToLower(sub)) }

// fakeFilter is one filter the fake understands. In src, "%s" stands for a
// double-quoted value the suite fills in (an id, a created time), handed to
// match as arg. When bug is turned on, buggy answers instead of match: a
// plausible misreading of the construct the filter exercises.
type fakeFilter struct {
	src          string
	match, buggy func(e fakeRow, arg string) bool
	bug          string
}

func st(f func(float64) bool) func(fakeRow, string) bool {
	return func(e fakeRow, _ string) bool { return f(rowStatus(e)) }
}

func msgLike(sub string, want bool) func(fakeRow, string) bool {
	return func(e fakeRow, _ string) bool { return like(rowMessage(e), sub) == want }
}

var fakeFilters = []fakeFilter{
	{src: "data.status = 401", match: st(func(s float64) bool { return s == 401 }),
		bug: "eq-as-ge", buggy: st(func(s float64) bool { return s >= 401 })},
	{src: "data.status != 401", match: st(func(s float64) bool { return s != 401 }),
		bug: "ne-as-eq", buggy: st(func(s float64) bool { return s == 401 })},
	{src: "data.status > 401", match: st(func(s float64) bool { return s > 401 }),
		bug: "gt-as-ge", buggy: st(func(s float64) bool { return s >= 401 })},
	{src: "data.status >= 401", match: st(func(s float64) bool { return s >= 401 }),
		bug: "ge-as-gt", buggy: st(func(s float64) bool { return s > 401 })},
	{src: "data.status < 401", match: st(func(s float64) bool { return s < 401 }),
		bug: "lt-as-le", buggy: st(func(s float64) bool { return s <= 401 })},
	{src: "data.status <= 401", match: st(func(s float64) bool { return s <= 401 }),
		bug: "le-as-lt", buggy: st(func(s float64) bool { return s < 401 })},
	{src: `message ~ "/api/logs"`, match: msgLike("/api/logs", true),
		bug: "like-whole-value", buggy: func(e fakeRow, _ string) bool { return rowMessage(e) == "/api/logs" }},
	{src: `message !~ "/api/health"`, match: msgLike("/api/health", false),
		bug: "not-like-as-like", buggy: msgLike("/api/health", true)},
	// The any-of operators: on a single value they mean what the plain
	// ones do. The bug negates all of them.
	{src: "data.status ?= 401", match: st(func(s float64) bool { return s == 401 }),
		bug: "any-of-negated", buggy: st(func(s float64) bool { return s != 401 })},
	{src: "data.status ?!= 401", match: st(func(s float64) bool { return s != 401 }),
		bug: "any-of-negated", buggy: st(func(s float64) bool { return s == 401 })},
	{src: "data.status ?> 401", match: st(func(s float64) bool { return s > 401 }),
		bug: "any-of-negated", buggy: st(func(s float64) bool { return s <= 401 })},
	{src: "data.status ?>= 401", match: st(func(s float64) bool { return s >= 401 }),
		bug: "any-of-negated", buggy: st(func(s float64) bool { return s < 401 })},
	{src: "data.status ?< 401", match: st(func(s float64) bool { return s < 401 }),
		bug: "any-of-negated", buggy: st(func(s float64) bool { return s >= 401 })},
	{src: "data.status ?<= 401", match: st(func(s float64) bool { return s <= 401 }),
		bug: "any-of-negated", buggy: st(func(s float64) bool { return s > 401 })},
	{src: `message ?~ "/api/logs"`, match: msgLike("/api/logs", true),
		bug: "any-of-negated", buggy: msgLike("/api/logs", false)},
	{src: `message ?!~ "/api/health"`, match: msgLike("/api/health", false),
		bug: "any-of-negated", buggy: msgLike("/api/health", true)},
	{src: `data.method = "GET" && level > 0`,
		match: func(e fakeRow, _ string) bool { return rowMethod(e) == "GET" && rowLevel(e) > 0 },
		bug:   "and-as-or", buggy: func(e fakeRow, _ string) bool { return rowMethod(e) == "GET" || rowLevel(e) > 0 }},
	{src: `(data.status = 404 || data.auth = "_superusers")`,
		match: func(e fakeRow, _ string) bool { return rowStatus(e) == 404 || rowAuth(e) == "_superusers" },
		bug:   "or-as-and", buggy: func(e fakeRow, _ string) bool { return rowStatus(e) == 404 && rowAuth(e) == "_superusers" }},
	{src: `((level > 0 && data.method = 'GET') || (level = 0 && data.auth = '_superusers'))`,
		match: func(e fakeRow, _ string) bool {
			return rowLevel(e) > 0 && rowMethod(e) == "GET" || rowLevel(e) == 0 && rowAuth(e) == "_superusers"
		},
		// Parentheses ignored, evaluated left to right.
		bug: "groups-ignored", buggy: func(e fakeRow, _ string) bool {
			return (rowLevel(e) > 0 && rowMethod(e) == "GET" || rowLevel(e) == 0) && rowAuth(e) == "_superusers"
		}},
	{src: "data.status = 401 // only the refused request\n|| data.method = 'POST'",
		match: func(e fakeRow, _ string) bool { return rowStatus(e) == 401 || rowMethod(e) == "POST" },
		// The comment swallows the rest of the input, not just its line.
		bug: "comment-to-end", buggy: st(func(s float64) bool { return s == 401 })},
	{src: `data.method = 'POST' || (level = 0 && data.cfabsent = null && data.auth = "_superusers")`,
		match: func(e fakeRow, _ string) bool {
			return rowMethod(e) == "POST" || rowLevel(e) == 0 && rowData(e, "cfabsent") == nil && rowAuth(e) == "_superusers"
		},
		bug: "null-never-equal", buggy: func(e fakeRow, _ string) bool { return rowMethod(e) == "POST" }},
	{src: `id = %s`, match: func(e fakeRow, id string) bool { return e["id"] == id },
		bug: "id-filter-ignored", buggy: func(fakeRow, string) bool { return true }},
	{src: `created >= %s`, match: func(e fakeRow, t string) bool { c, _ := e["created"].(string); return c >= t },
		bug: "ge-as-gt", buggy: func(e fakeRow, t string) bool { c, _ := e["created"].(string); return c > t }},
	{src: `message ~ "GET /api/health%"`, match: func(e fakeRow, _ string) bool {
		return strings.HasPrefix(strings.ToLower(rowMessage(e)), "get /api/health")
	}, bug: "percent-literal", buggy: msgLike("GET /api/health%", true)},
	{src: `data.url ~ "%k=missing"`, match: func(e fakeRow, _ string) bool { return strings.HasSuffix(rowURL(e), "k=missing") },
		bug: "percent-literal", buggy: func(e fakeRow, _ string) bool { return like(rowURL(e), "%k=missing") }},
	{src: `data.url ~ "k=silent"`, match: func(e fakeRow, _ string) bool { return like(rowURL(e), "k=silent") }},
	{src: "data.status = 999", match: st(func(s float64) bool { return s == 999 })},
	{src: "level = 0", match: func(e fakeRow, _ string) bool { return rowLevel(e) == 0 }},
}

// reScoped matches a filter the suite scoped to its own requests: the scope,
// optionally preceded by a rowid condition and followed by more.
var reScoped = regexp.MustCompile(`(?s)^(rowid > 0 && )?data\.url ~ "cf=([a-z0-9]+)"(?: && (.*))?$`)

// knownFilter returns the predicate of a filter the suite sends, and false
// for any other filter. rowid is a field only where allowRowid says so (the
// stats endpoint).
func (f *fakeServer) knownFilter(src string, allowRowid bool) (func(fakeRow) bool, bool) {
	scope := func(fakeRow) bool { return true }
	if m := reScoped.FindStringSubmatch(src); m != nil {
		if m[1] != "" && !allowRowid {
			return nil, false
		}
		nonce := m[2]
		scope = func(e fakeRow) bool { return like(rowURL(e), "cf="+nonce) }
		if m[3] == "" {
			return scope, true
		}
		src = m[3]
		if strings.HasPrefix(src, "(") && strings.HasSuffix(src, ")") {
			src = src[1 : len(src)-1]
		}
	}
	for _, ff := range fakeFilters {
		re := "^" + strings.ReplaceAll(regexp.QuoteMeta(ff.src), "%s", `"([^"]*)"`) + "$"
		m := regexp.MustCompile(re).FindStringSubmatch(src)
		if m == nil {
			continue
		}
		arg := ""
		if len(m) > 1 {
			arg = m[1]
		}
		match := ff.match
		if ff.bug != "" && f.bug(ff.bug) {
			match = ff.buggy
		}
		return func(e fakeRow) bool { return scope(e) && match(e, arg) }, true
	}
	if f.bug("lenient-filter") {
		return scope, true
	}
	return nil, false
}
