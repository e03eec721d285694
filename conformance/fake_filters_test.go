package conformance

import (
	"regexp"
	"strings"
)

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
	{src: `updated >= %s`, match: func(e fakeRow, t string) bool { u, _ := e["updated"].(string); return u >= t },
		bug: "updated-filter-ignored", buggy: func(fakeRow, string) bool { return true }},
	{src: `created >= %s`, match: func(e fakeRow, t string) bool { c, _ := e["created"].(string); return c >= t },
		bug: "ge-as-gt", buggy: func(e fakeRow, t string) bool { c, _ := e["created"].(string); return c > t }},
	{src: `message ~ "GET /api/health%"`, match: func(e fakeRow, _ string) bool {
		return strings.HasPrefix(strings.ToLower(rowMessage(e)), "get /api/health")
	}, bug: "percent-literal", buggy: msgLike("GET /api/health%", true)},
	{src: `data.url ~ "%k=missing"`, match: func(e fakeRow, _ string) bool { return strings.HasSuffix(rowURL(e), "k=missing") },
		bug: "percent-literal", buggy: func(e fakeRow, _ string) bool { return like(rowURL(e), "%k=missing") }},
	{src: `data.url ~ "k=silent"`, match: func(e fakeRow, _ string) bool { return like(rowURL(e), "k=silent") }},
	{src: `(true = true && data.status = 401) || (false = true && data.status = 404)`, match: st(func(s float64) bool { return s == 401 }),
		// false read as true.
		bug: "false-as-true", buggy: st(func(s float64) bool { return s == 401 || s == 404 })},
	{src: `data.execTime >= 0.0 && data.execTime < 100000.5 && data.status = 404`,
		match: func(e fakeRow, _ string) bool {
			t, _ := rowData(e, "execTime").(float64)
			return t >= 0 && t < 100000.5 && rowStatus(e) == 404
		},
		// A number with a fraction misread, so that nothing matches.
		bug: "fraction-refused", buggy: func(fakeRow, string) bool { return false }},
	// The stats filter on the list's fields (LOG-STATS-006, -007).
	{src: `id != "" && created >= "2000-01-01 00:00:00.000Z" && level >= 0 && message != "" && data.status > 0`,
		match: func(fakeRow, string) bool { return true },
		bug:   "stats-fields-refused", buggy: func(fakeRow, string) bool { return false }},
	{src: `updated > "2000-01-01 00:00:00.000Z"`,
		match: func(e fakeRow, _ string) bool { u, _ := e["updated"].(string); return u > "2000-01-01 00:00:00.000Z" },
		bug:   "stats-updated-refused", buggy: func(fakeRow, string) bool { return false }},
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
