package conformance

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The violations of the logs API (logs_*.go), committed by mutations in
// front of the real strongbox.

var (
	logsAny   = under(http.MethodGet, "/api/logs")
	logsList  = route(http.MethodGet, "/api/logs")
	logsStats = route(http.MethodGet, "/api/logs/stats")
)

func logsView(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/logs/") && r.URL.Path != "/api/logs/stats"
}

// has selects the requests whose query parameter key contains sub.
func has(key, sub string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		return r.URL.Query().Has(key) && strings.Contains(r.URL.Query().Get(key), sub)
	}
}

// eachEntry calls fn with every log entry of a list or view answer.
func eachEntry(r *http.Request, res *answered, fn func(e map[string]any)) {
	m := res.object()
	if m == nil {
		return
	}
	if logsView(r) {
		fn(m)
	} else if items, ok := m["items"].([]any); ok {
		for _, it := range items {
			if e, ok := it.(map[string]any); ok {
				fn(e)
			}
		}
	}
	res.setJSON(m)
}

// editEntries rewrites every log entry strongbox lists or shows.
func editEntries(fn func(e map[string]any)) mutation {
	return edit(func(r *http.Request) bool { return logsList(r) || logsView(r) }, func(r *http.Request, res *answered) {
		eachEntry(r, res, fn)
	})
}

// editData rewrites the data of every log entry.
func editData(fn func(d map[string]any)) mutation {
	return editEntries(func(e map[string]any) {
		if d, ok := e["data"].(map[string]any); ok {
			fn(d)
		}
	})
}

// editObject rewrites the JSON object strongbox answers to the requests
// match selects.
func editObject(match func(*http.Request) bool, fn func(r *http.Request, m map[string]any)) mutation {
	return edit(match, func(r *http.Request, res *answered) {
		if m := res.object(); m != nil {
			fn(r, m)
			res.setJSON(m)
		}
	})
}

// editFilterError rewrites the data of strongbox's 400s to the logs
// routes (a malformed filter's).
func editFilterError(fn func(data map[string]any)) mutation {
	return editErrors(logsAny, func(res *answered) {
		if m := res.object(); m != nil && res.status == 400 {
			if d, ok := m["data"].(map[string]any); ok {
				fn(d)
			}
			res.setJSON(m)
		}
	})
}

// refuse answers 400 with the generic message to the requests match
// selects.
func refuse(match func(*http.Request) bool) mutation {
	return answer(match, envelopeAnswer(400, msgGenericBad))
}

// refuseSort refuses the logs lists sorted by a field pred selects.
func refuseSort(pred func(field string) bool) mutation {
	return refuse(func(r *http.Request) bool {
		if !logsAny(r) {
			return false
		}
		for _, p := range strings.Split(r.URL.Query().Get("sort"), ",") {
			if pred(strings.TrimLeft(strings.TrimSpace(p), "+-")) {
				return true
			}
		}
		return false
	})
}

// editParam rewrites the query parameter key of the logs requests that
// carry it.
func editParam(match func(*http.Request) bool, key string, fn func(v string) string) mutation {
	return editQuery(both(match, func(r *http.Request) bool { return r.URL.Query().Has(key) }), func(q url.Values) {
		q.Set(key, fn(q.Get(key)))
	})
}

// filterSub replaces old by new in the filters of logs requests.
func filterSub(oldnew ...string) mutation {
	return editParam(logsAny, "filter", strings.NewReplacer(oldnew...).Replace)
}

// filterRe replaces the matches of re by repl in the filters of logs
// requests.
func filterRe(re, repl string) mutation {
	rx := regexp.MustCompile(re)
	return editParam(logsAny, "filter", func(v string) string { return rx.ReplaceAllString(v, repl) })
}

// retryWithout sends a logs request that strongbox refused with 400 again
// without the query parameter key.
func retryWithout(key string) mutation {
	return when(both(logsAny, func(r *http.Request) bool { return r.URL.Query().Has(key) }),
		func(x *front, w http.ResponseWriter, r *http.Request) {
			res := x.forward(r)
			if res.status == 400 {
				q := r.URL.Query()
				q.Del(key)
				r.URL.RawQuery = q.Encode()
				res = x.forward(r)
			}
			res.write(w)
		})
}

// asSuperuser sends the requests match selects that strongbox refused
// with one of statuses again as the superuser.
func asSuperuser(match func(*http.Request) bool, statuses ...int) mutation {
	return when(match, func(x *front, w http.ResponseWriter, r *http.Request) {
		res := x.forward(r)
		if slices.Contains(statuses, res.status) {
			res = x.forwardAs(r, x.superuser())
		}
		res.write(w)
	})
}

// anyOfNegated reads each any-of operator as the negation of its plain
// operator.
var anyOfNegated = regexp.MustCompile(`\?(!=|>=|<=|!~|=|>|<|~)`)

var negatedOp = map[string]string{"=": "!=", "!=": "=", ">": "<=", ">=": "<", "<": ">=", "<=": ">", "~": "!~", "!~": "~"}

// pageOffByOne starts every page after the first one entry early.
func pageOffByOne(x *front, w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	page, _ := strconv.Atoi(q.Get("page"))
	perPage, err := strconv.Atoi(q.Get("perPage"))
	if page < 2 || err != nil {
		x.pass(w, r)
		return
	}
	q.Set("page", "1")
	q.Set("perPage", strconv.Itoa(page*perPage))
	r.URL.RawQuery = q.Encode()
	res := x.forward(r)
	if m := res.object(); m != nil {
		items, _ := m["items"].([]any)
		from, to := min(len(items), (page-1)*perPage-1), min(len(items), page*perPage-1)
		m["items"], m["page"], m["perPage"] = items[from:to], page, perPage
		res.setJSON(m)
	}
	res.write(w)
}

// unredact puts back into the logged URLs the values strongbox redacted,
// from the request URIs the front saw: all of them, or all but the token
// parameter when keepToken is set.
func unredact(keepToken bool) mutation {
	return func(x *front, w http.ResponseWriter, r *http.Request) {
		if !logsList(r) && !logsView(r) {
			x.pass(w, r)
			return
		}
		res := x.forward(r)
		x.mu.Lock()
		seen := slices.Clone(x.seen)
		x.mu.Unlock()
		eachEntry(r, res, func(e map[string]any) {
			d, _ := e["data"].(map[string]any)
			logged, _ := d["url"].(string)
			if !strings.Contains(logged, "REDACTED") {
				return
			}
			for _, uri := range seen {
				if clear, ok := unredactURI(logged, uri, keepToken); ok {
					d["url"] = clear
					msg, _ := e["message"].(string)
					e["message"] = strings.Replace(msg, logged, clear, 1)
					return
				}
			}
		})
		res.write(w)
	}
}

// unredactURI returns sent with the values logged redacted put back (but
// for a parameter named token in any spelling when keepToken is set), if
// logged is sent redacted.
func unredactURI(logged, sent string, keepToken bool) (string, bool) {
	lp, lq, _ := strings.Cut(logged, "?")
	sp, sq, _ := strings.Cut(sent, "?")
	lparts, sparts := strings.Split(lq, "&"), strings.Split(sq, "&")
	if lp != sp || len(lparts) != len(sparts) {
		return "", false
	}
	for i := range lparts {
		lk, lv, _ := strings.Cut(lparts[i], "=")
		sk, _, _ := strings.Cut(sparts[i], "=")
		if lk != sk || lv != "REDACTED" && lparts[i] != sparts[i] {
			return "", false
		}
		name, _ := url.QueryUnescape(lk)
		if keepToken && strings.Trim(strings.ToLower(name), "[]") == "token" {
			sparts[i] = lparts[i]
		}
	}
	return sp + "?" + strings.Join(sparts, "&"), true
}

// logsMutators are the violations of the logs checks.
var logsMutators = []mutator{
	{"405", []string{"ERR-003"}, answer(func(r *http.Request) bool {
		return r.Method != http.MethodGet && under("", "/api/logs")(r)
	}, envelopeAnswer(405, "Method Not Allowed."))},
	{"logs-guest-403", []string{"LOG-AUTH-001", "LOG-AUTH-003", "LOG-AUTH-005", "LOG-AUTH-007"},
		edit(under("", "/api/logs"), func(_ *http.Request, res *answered) {
			if res.status == 401 {
				*res = *envelopeAnswer(403, msgNotAllowed)
			}
		})},
	{"users-read-logs", []string{"LOG-AUTH-002", "LOG-AUTH-004", "LOG-AUTH-006"}, asSuperuser(logsAny, 403)},
	{"filter-before-auth", []string{"LOG-AUTH-008"},
		when(both(logsAny, both(guest, has("filter", ""))), func(x *front, w http.ResponseWriter, r *http.Request) {
			if res := x.forwardAs(r, x.superuser()); res.status == 400 {
				res.write(w)
				return
			}
			x.forward(r).write(w)
		})},
	{"entry-without-useragent", []string{"LOG-ENTRY-001"}, editData(func(d map[string]any) { delete(d, "userAgent") })},
	{"log-auth-id", []string{"LOG-ENTRY-002"}, editData(func(d map[string]any) {
		if d["auth"] != "" {
			d["auth"] = "a1b2c3d4e5f6g7h"
		}
	})},
	{"errors-level-0", []string{"LOG-ENTRY-003", "LOG-ENTRY-004"}, editEntries(func(e map[string]any) { e["level"] = 0 })},
	{"log-log-reads", []string{"LOG-ENTRY-005"}, when(both(logsList, func(r *http.Request) bool { return !guest(r) }),
		func(x *front, w http.ResponseWriter, r *http.Request) {
			res := x.forward(r)
			if res.status == 200 {
				x.forwardAs(r, "") // logged, as a refusal
			}
			res.write(w)
		})},
	{"view-drops-level", []string{"LOG-VIEW-001"}, editObject(logsView, func(_ *http.Request, m map[string]any) { delete(m, "level") })},
	{"view-unknown-400", []string{"LOG-VIEW-002"}, edit(logsView, func(_ *http.Request, res *answered) {
		if res.status == 404 {
			*res = *envelopeAnswer(400, msgGenericBad)
		}
	})},
	{"view-ignores-fields", []string{"LOG-VIEW-003", "LOG-VIEW-004"}, editQuery(logsView, func(q url.Values) { q.Del("fields") })},
	{"no-ellipsis", []string{"LOG-VIEW-004", "LOG-FIELDS-002"}, editParam(logsAny, "fields", strings.NewReplacer(",true)", ")", ", true)", ")").Replace)},
	{"list-extra-key", []string{"LOG-LIST-001", "LOG-FIELDS-001"}, editObject(logsList, func(_ *http.Request, m map[string]any) {
		items, _ := m["items"].([]any)
		m["count"] = len(items)
	})},
	{"default-perpage-50", []string{"LOG-LIST-002", "LOG-LIST-004"}, editQuery(logsList, func(q url.Values) {
		if n, _ := strconv.Atoi(q.Get("perPage")); n < 1 {
			q.Set("perPage", "50")
		}
	})},
	{"no-perpage-cap", []string{"LOG-LIST-003"}, editObject(logsList, func(r *http.Request, m map[string]any) {
		if n, _ := strconv.Atoi(r.URL.Query().Get("perPage")); n > 1000 {
			m["perPage"] = n
		}
	})},
	{"page-below-1-kept", []string{"LOG-LIST-005"}, editObject(logsList, func(r *http.Request, m map[string]any) {
		if n, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && n < 1 {
			m["page"] = n
		}
	})},
	{"lax-page-number", []string{"LOG-LIST-006", "LOG-LIST-007"}, editQuery(logsList, func(q url.Values) {
		for _, k := range []string{"page", "perPage"} {
			if _, err := strconv.Atoi(q.Get(k)); err != nil {
				q.Del(k)
			}
		}
	})},
	{"ignore-skiptotal", []string{"LOG-LIST-008"}, editQuery(logsList, func(q url.Values) { q.Del("skipTotal") })},
	{"page-offset-off-by-one", []string{"LOG-LIST-009"}, when(logsList, pageOffByOne)},
	{"default-newest-first", []string{"LOG-LIST-010"}, editObject(both(logsList, func(r *http.Request) bool {
		return r.URL.Query().Get("sort") == ""
	}), func(_ *http.Request, m map[string]any) {
		items, _ := m["items"].([]any)
		slices.Reverse(items)
	})},
	{"plus-prefix-refused", []string{"LOG-SORT-001"}, refuse(both(logsAny, has("sort", "+")))},
	{"ignore-descending", []string{"LOG-SORT-002", "LOG-SORT-006", "LOG-SORT-007"},
		editParam(logsAny, "sort", func(v string) string { return strings.ReplaceAll(v, "-", "") })},
	{"unknown-sort-ignored", []string{"LOG-SORT-003"}, retryWithout("sort")},
	{"random-refused", []string{"LOG-SORT-004"}, refuseSort(func(f string) bool { return f == "@random" })},
	{"rowid-sort-refused", []string{"LOG-SORT-008"}, refuseSort(func(f string) bool { return f == "rowid" })},
	{"updated-sort-refused", []string{"LOG-SORT-009"}, refuseSort(func(f string) bool { return f == "updated" })},
	{"data-sort-refused", []string{"LOG-SORT-005"}, refuseSort(func(f string) bool { return strings.HasPrefix(f, "data.") })},
	{"message-sort-refused", []string{"LOG-SORT-010"}, refuseSort(func(f string) bool { return f == "message" })},
	{"eq-as-ge", []string{"LOG-FILTER-001"}, filterSub("data.status = 401", "data.status >= 401")},
	{"ne-as-eq", []string{"LOG-FILTER-002"}, filterSub("data.status != 401", "data.status = 401")},
	{"gt-as-ge", []string{"LOG-FILTER-003"}, filterSub("data.status > 401", "data.status >= 401")},
	{"ge-as-gt", []string{"LOG-FILTER-004", "LOG-FILTER-022"}, filterSub("data.status >= 401", "data.status > 401", "created >= ", "created > ")},
	{"lt-as-le", []string{"LOG-FILTER-005"}, filterSub("data.status < 401", "data.status <= 401")},
	{"le-as-lt", []string{"LOG-FILTER-006"}, filterSub("data.status <= 401", "data.status < 401")},
	{"like-whole-value", []string{"LOG-FILTER-007"}, filterSub(`message ~ "/api/logs"`, `message = "/api/logs"`)},
	{"not-like-as-like", []string{"LOG-FILTER-008"}, filterSub(`message !~ "/api/health"`, `message ~ "/api/health"`)},
	{"any-of-negated", []string{"LOG-FILTER-009", "LOG-FILTER-010", "LOG-FILTER-011", "LOG-FILTER-012", "LOG-FILTER-013",
		"LOG-FILTER-014", "LOG-FILTER-015", "LOG-FILTER-016"}, editParam(logsAny, "filter", func(v string) string {
		return anyOfNegated.ReplaceAllStringFunc(v, func(op string) string { return negatedOp[op[1:]] })
	})},
	{"and-as-or", []string{"LOG-FILTER-017"}, filterSub(`data.method = "GET" && data.status > 200`, `data.method = "GET" || data.status > 200`)},
	{"or-as-and", []string{"LOG-FILTER-018"}, filterSub(`data.status = 404 || data.auth = "_superusers"`, `data.status = 404 && data.auth = "_superusers"`)},
	{"groups-ignored", []string{"LOG-FILTER-019"}, filterSub(
		`((data.status > 200 && data.method = 'GET') || (level = 0 && data.auth = '_superusers'))`,
		`((data.status > 200 && data.method = 'GET' || level = 0) && data.auth = '_superusers')`)},
	{"comment-to-end", []string{"LOG-FILTER-020"}, filterRe(`//[^\n]*\n[^)]*`, "")},
	{"null-never-equal", []string{"LOG-FILTER-021"}, filterSub("data.cfabsent = null", "data.cfabsent != null")},
	{"false-as-true", []string{"LOG-FILTER-026"}, filterSub("false = true", "true = true")},
	{"fraction-refused", []string{"LOG-FILTER-027"}, filterSub("100000.5", "0.0")},
	{"filter-error-without-data", []string{"LOG-FILTER-035"}, editFilterError(func(data map[string]any) { delete(data, "filter") })},
	{"filter-error-offset-off-by-one", []string{"LOG-FILTER-035"}, editFilterError(func(data map[string]any) {
		if fe, ok := data["filter"].(map[string]any); ok {
			if p, ok := fe["params"].(map[string]any); ok {
				p["offset"] = p["offset"].(float64) + 1
			}
		}
	})},
	{"id-filter-ignored", []string{"LOG-FILTER-022"}, filterRe(`(^|[ (])id = "[^"]*"`, `${1}id != ""`)},
	{"updated-filter-ignored", []string{"LOG-FILTER-025"}, filterRe(`updated >= "[^"]*"`, `updated != ""`)},
	{"empty-filter-drops-errors", []string{"LOG-FILTER-023"}, editParam(logsAny, "filter", func(v string) string {
		if v == "" {
			return "level = 0"
		}
		return v
	})},
	{"percent-literal", []string{"LOG-FILTER-024"}, filterSub(`"GET /api/health%"`, `"GET /api/health%cf"`, `"%k=missing"`, `"cf%k=missing"`)},
	{"lenient-filter", []string{"LOG-FILTER-030", "LOG-FILTER-031", "LOG-FILTER-032", "LOG-FILTER-033", "LOG-FILTER-034",
		"LOG-STATS-010", "LOG-STATS-011", "LOG-STATS-012", "LOG-STATS-013", "LOG-STATS-014"}, retryWithout("filter")},
	{"reference-filter-message", []string{"LOG-FILTER-030", "LOG-FILTER-033", "LOG-STATS-010", "LOG-STATS-014"},
		edit(both(logsAny, has("filter", "")), func(_ *http.Request, res *answered) {
			if res.status == 400 {
				*res = *envelopeAnswer(400, msgGenericBad)
			}
		})},
	{"stats-without-z", []string{"LOG-STATS-501"}, editStatsDates(func(d string) string { return strings.TrimSuffix(d, "Z") })},
	{"stats-date-iso", []string{"LOG-STATS-001", "LOG-STATS-002"}, editStatsDates(func(d string) string { return strings.Replace(d, " ", "T", 1) })},
	{"stats-empty-null", []string{"LOG-STATS-003"}, edit(logsStats, func(_ *http.Request, res *answered) {
		if strings.TrimSpace(string(res.body)) == "[]" {
			res.body = []byte("null")
		}
	})},
	{"stats-ignore-fields", []string{"LOG-STATS-004"}, editQuery(logsStats, func(q url.Values) { q.Del("fields") })},
	{"stats-refuse-rowid", []string{"LOG-STATS-005"}, refuse(both(logsStats, has("filter", "rowid")))},
	{"stats-fields-refused", []string{"LOG-STATS-006"}, refuse(both(logsStats, has("filter", `message != ""`)))},
	{"stats-updated-refused", []string{"LOG-STATS-007"}, refuse(both(logsStats, has("filter", "updated")))},
	{"fields-drop-envelope", []string{"LOG-FIELDS-001"}, editObject(both(logsList, has("fields", "")), func(_ *http.Request, m map[string]any) {
		for k := range m {
			if k != "items" {
				delete(m, k)
			}
		}
	})},
	{"excerpt-always-ellipsis", []string{"LOG-FIELDS-003"}, filterExcerpt(regexp.MustCompile(`excerpt\((\d+)(,\s*false)?\)`), "excerpt($1,true)")},
	{"fields-no-nesting", []string{"LOG-FIELDS-004"}, filterExcerpt(regexp.MustCompile(`\b(data)\.[\w.]+`), "$1")},
	{"fields-no-star", []string{"LOG-FIELDS-005"}, filterExcerpt(regexp.MustCompile(`\*,?`), "")},
	{"log-token", []string{"LOG-SECRET-001", "LOG-SECRET-002"}, unredact(false)},
	{"log-secret-names", []string{"LOG-SECRET-002"}, unredact(true)},
	// With no events at all, LOG-EVENT-002 and -003 are absent (TestEventsAbsent).
	{"events-not-stored", []string{"LOG-EVENT-001"}, dropEvents()},
	{"events-as-info", []string{"LOG-EVENT-001"}, editEntries(func(e map[string]any) {
		if d, _ := e["data"].(map[string]any); d["type"] != "request" {
			e["level"] = 0.0
		}
	})},
	{"audit-anonymous", []string{"LOG-EVENT-002"}, editData(func(d map[string]any) {
		for k, v := range d {
			if s, _ := v.(string); s == testEmail || throwawayEmail.MatchString(s) { // the run's superuser
				delete(d, k)
			}
		}
	})},
	{"event-leaks-secret", []string{"LOG-EVENT-003"}, leakClientSecret()},
	{"message-crlf", []string{"LOG-TEXT-001"}, editEntries(func(e map[string]any) {
		if msg, ok := e["message"].(string); ok {
			e["message"] = strings.NewReplacer("%0D", "\r", "%0A", "\n", "%0d", "\r", "%0a", "\n").Replace(msg)
		}
	})},
}

// dropEvents lists only the request logs: the server's own events vanish
// from every list answer.
func dropEvents() mutation {
	return editObject(logsList, func(_ *http.Request, m map[string]any) {
		items, _ := m["items"].([]any)
		m["items"] = slices.DeleteFunc(slices.Clone(items), func(it any) bool {
			e, _ := it.(map[string]any)
			d, _ := e["data"].(map[string]any)
			return d["type"] != "request"
		})
	})
}

// reClientSecret finds a clientSecret in a request body.
var reClientSecret = regexp.MustCompile(`"clientSecret"\s*:\s*"([^"]+)"`)

// leakClientSecret remembers the clientSecret a collection update sends
// and shows it in the data of the first entry of every list answer.
func leakClientSecret() mutation {
	var mu sync.Mutex
	var secret string
	return func(x *front, w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPatch && strings.HasPrefix(r.URL.Path, "/api/collections/") {
			rewind(r)
			b, _ := io.ReadAll(r.Body)
			if m := reClientSecret.FindSubmatch(b); m != nil {
				mu.Lock()
				secret = string(m[1])
				mu.Unlock()
			}
		}
		if !logsList(r) {
			x.pass(w, r)
			return
		}
		mu.Lock()
		leak := secret
		mu.Unlock()
		res := x.forward(r)
		if m := res.object(); m != nil && leak != "" {
			if items, _ := m["items"].([]any); len(items) > 0 {
				if e, _ := items[0].(map[string]any); e != nil {
					if d, _ := e["data"].(map[string]any); d != nil {
						d["cfLeak"] = leak
					}
				}
			}
			res.setJSON(m)
		}
		res.write(w)
	}
}

// filterExcerpt rewrites the fields parameter of logs requests.
func filterExcerpt(re *regexp.Regexp, repl string) mutation {
	return editParam(logsAny, "fields", func(v string) string { return re.ReplaceAllString(v, repl) })
}

// editStatsDates rewrites the date of every stats entry.
func editStatsDates(fn func(string) string) mutation {
	return edit(logsStats, func(_ *http.Request, res *answered) { statsDates(res, fn) })
}

// statsDates rewrites the date of every entry of a stats answer.
func statsDates(res *answered, fn func(string) string) {
	points, ok := res.json().([]any)
	if !ok {
		return
	}
	for _, p := range points {
		if m, ok := p.(map[string]any); ok {
			if d, ok := m["date"].(string); ok {
				m["date"] = fn(d)
			}
		}
	}
	res.setJSON(points)
}

// TestEventsAbsent: on a server that keeps no events of its own, the
// check that it keeps them fails, and the checks of what they hold, which
// would otherwise fail for the same reason, are skipped as absent with the
// probe's answer; on strongbox all three pass.
func TestEventsAbsent(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the events' wait")
	}
	t.Parallel()
	for _, tt := range []struct {
		name string
		m    mutation
		wait time.Duration // the suite's WaitTimeout: short where no event comes
		want map[string]Outcome
	}{
		{"present", nil, mutatorWait, map[string]Outcome{"LOG-EVENT-001": Pass, "LOG-EVENT-002": Pass, "LOG-EVENT-003": Pass}},
		{"absent", dropEvents(), time.Second, map[string]Outcome{"LOG-EVENT-001": Fail, "LOG-EVENT-002": Skip, "LOG-EVENT-003": Skip}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := startStrongbox(t)
			if tt.m != nil {
				base = startFront(t, base, tt.m)
			}
			rep := Run(t.Context(), Config{BaseURL: base, Email: testEmail, Password: testPassword,
				Profile: SourceStrongbox, Only: "LOG-EVENT-", WaitTimeout: tt.wait})
			if len(rep.Results) != len(tt.want) {
				t.Fatalf("%d results, want %d", len(rep.Results), len(tt.want))
			}
			for _, res := range rep.Results {
				if res.Outcome != tt.want[res.Req.ID] {
					t.Errorf("%s: %s (%s), want %s", res.Req.ID, res.Outcome, res.Detail, tt.want[res.Req.ID])
				}
				if res.Outcome == Skip && !strings.Contains(res.Detail, "absent: the server keeps no events of its own (probe: POST /api/backups/cf_") {
					t.Errorf("%s: skipped without the probe's answer: %s", res.Req.ID, res.Detail)
				}
			}
		})
	}
}
