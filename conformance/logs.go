package conformance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// The logs checks observe their own requests. Once per run the suite makes a
// few "marked" requests carrying a unique nonce in their query string and
// waits until the server's request log shows them (logging may be
// asynchronous: PocketBase flushes about 3 s after the last request). All
// list, filter, sort and stats checks then work on exactly those entries,
// selected by the filter data.url ~ "cf=<nonce>", so they are independent of
// whatever else the server has logged.
const (
	markGuest   = "guest"   // GET /api/health as guest: 200, level 0
	markSuper   = "super"   // GET /api/health as superuser: 200, level 0, auth _superusers
	markSilent  = "silent"  // GET /api/logs as superuser: 200, must not be logged
	markNoAuth  = "noauth"  // GET /api/logs without token: 401, level 8
	markMissing = "missing" // POST to an unknown path: 404, level 8
)

// loggedMarks are the marks expected in the log, in request order.
var loggedMarks = []string{markGuest, markSuper, markNoAuth, markMissing}

// logsWait bounds how long the suite waits for its requests to be logged.
const logsWait = 10 * time.Second

// markReferer is sent as Referer with the guest mark request.
const markReferer = "http://conformance.invalid/referer"

// logMarks is the shared logs fixture.
type logMarks struct {
	nonce   string
	scope   string                    // filter selecting exactly the marked entries
	urls    map[string]string         // request URI sent, by mark
	entries map[string]map[string]any // log entry as listed, by mark
}

var (
	reLogID      = regexp.MustCompile(`^[a-z0-9]{15}$`)
	reLogCreated = regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}Z$`)
	reStatsDate  = regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:00:00\.000Z$`)
)

// logMarks returns the run's logs fixture, building it on first use. On a
// server whose settings say request logging is off the marked requests can
// never appear, so every check that needs them is skipped.
func (c *Client) logMarks(ctx context.Context) (*logMarks, error) {
	s := c.shared
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.logsDone {
		if c.requestLoggingOff(ctx) {
			s.logsErr = Skipf(msgLoggingOff)
		} else {
			s.logs, s.logsErr = c.buildLogMarks(ctx)
		}
		s.logsDone = true
	}
	if v, ok := errors.AsType[*verdict](s.logsErr); ok && v.outcome == Skip {
		return nil, s.logsErr
	}
	if s.logsErr != nil {
		return nil, fmt.Errorf("logs fixture: %w", s.logsErr)
	}
	return s.logs, nil
}

func (c *Client) buildLogMarks(ctx context.Context) (*logMarks, error) {
	n := newNonce(12)
	m := &logMarks{
		nonce:   n,
		scope:   `data.url ~ "cf=` + n + `"`,
		urls:    map[string]string{},
		entries: map[string]map[string]any{},
	}
	q := "?cf=" + n + "&k="
	reqs := []struct {
		mark, method, path string
		hdr                http.Header
		status             int
	}{
		{markGuest, http.MethodGet, "/api/health" + q + markGuest, http.Header{"Referer": {markReferer}}, 200},
		{markSuper, http.MethodGet, "/api/health" + q + markSuper, http.Header{"Authorization": {c.su}}, 200},
		{markSilent, http.MethodGet, "/api/logs" + q + markSilent + "&perPage=1", http.Header{"Authorization": {c.su}}, 200},
		{markNoAuth, http.MethodGet, "/api/logs" + q + markNoAuth, nil, 401},
		{markMissing, http.MethodPost, "/api/cf-" + n + "/missing" + q + markMissing, nil, 404},
	}
	for _, rq := range reqs {
		r, err := c.doWith(ctx, rq.method, rq.path, rq.hdr, nil)
		if err != nil {
			return nil, err
		}
		if r.status != rq.status {
			return nil, fmt.Errorf("marked request %s %s: expected %d, got %s", rq.method, rq.path, rq.status, r)
		}
		m.urls[rq.mark] = rq.path
		// Keep created times apart (they have millisecond precision) so
		// that ordering by created is unambiguous.
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return nil, err
		}
	}

	// Find the entries.
	var seen []string
	found, err := c.pollLogs(ctx, []url.Values{
		{"filter": {m.scope}, "perPage": {"200"}},
		{"sort": {"-created"}, "perPage": {"1000"}},
	}, func(items []map[string]any) bool {
		for _, it := range items {
			if k := m.markOf(it); k != "" {
				m.entries[k] = it
			}
		}
		seen = seen[:0]
		for _, k := range loggedMarks {
			if m.entries[k] != nil {
				seen = append(seen, k)
			}
		}
		return len(seen) == len(loggedMarks)
	})
	if err != nil {
		return nil, fmt.Errorf("listing logs to find the marked requests: %w", err)
	}
	if !found {
		return nil, Failf("the marked requests (%v, nonce %s) did not all appear in GET /api/logs within %s; found %v",
			loggedMarks, n, logsWait, seen)
	}
	delete(m.entries, markSilent) // wrongly logged; LOG-ENTRY-005 reports it
	return m, nil
}

// pollLogs lists logs with each query of listings in turn, handing every
// page's items to visit, until visit reports it has found what it wants
// (true) or logsWait has passed (false). A filtered listing is the cheap
// way; an unfiltered one of the newest entries is the fallback, so that a
// broken filter does not hide every logs check behind a timeout.
func (c *Client) pollLogs(ctx context.Context, listings []url.Values, visit func([]map[string]any) bool) (bool, error) {
	deadline := time.Now().Add(logsWait)
	for {
		for _, q := range listings {
			r, err := c.get(ctx, withQuery("/api/logs", q), c.su)
			if err != nil {
				return false, err
			}
			if r.status != http.StatusOK && q.Has("filter") {
				continue
			}
			list, err := parseLogList(r)
			if err != nil {
				return false, err
			}
			if visit(list.items) {
				return true, nil
			}
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return false, err
		}
	}
}

// markOf returns the mark of a log entry made by this fixture, or "".
func (m *logMarks) markOf(entry map[string]any) string {
	data, _ := getObject(entry, "data")
	u, _ := getString(data, "url")
	i := strings.IndexByte(u, '?')
	if i < 0 {
		return ""
	}
	q, err := url.ParseQuery(u[i+1:])
	if err != nil || q.Get("cf") != m.nonce {
		return ""
	}
	return q.Get("k")
}

// id returns the log id of a marked entry.
func (m *logMarks) id(mark string) string {
	s, _ := getString(m.entries[mark], "id")
	return s
}

// logList is a decoded §2.4 list envelope of log entries.
type logList struct {
	keys       []string
	items      []map[string]any
	page       int
	perPage    int
	totalItems int
	totalPages int
}

// parseLogList requires 200 and a well-typed list envelope.
func parseLogList(r *response) (*logList, error) {
	m, err := okObject(r)
	if err != nil {
		return nil, err
	}
	l := &logList{keys: mapKeys(m)}
	for _, f := range []struct {
		key string
		dst *int
	}{{"page", &l.page}, {"perPage", &l.perPage}, {"totalItems", &l.totalItems}, {"totalPages", &l.totalPages}} {
		v, ok := getNumber(m, f.key)
		if !ok || v != math.Trunc(v) || math.Abs(v) > 1<<53 {
			return nil, Failf("expected %s to be an integer, got %s", f.key, r)
		}
		*f.dst = int(v)
	}
	items, ok := getArray(m, "items")
	if !ok {
		return nil, Failf("expected items to be an array, got %s", r)
	}
	for _, it := range items {
		o, ok := it.(map[string]any)
		if !ok {
			return nil, Failf("expected every item to be an object, got %s", r)
		}
		l.items = append(l.items, o)
	}
	return l, nil
}

// listLogs lists logs as superuser with q.
func (c *Client) listLogs(ctx context.Context, q url.Values) (*logList, error) {
	r, err := c.get(ctx, withQuery("/api/logs", q), c.su)
	if err != nil {
		return nil, err
	}
	return parseLogList(r)
}

// listMarked lists the marked entries with the extra query parameters kv
// (a filter given there is combined with the scope) and returns their marks
// in response order. An entry that is not a marked one fails the check.
func (c *Client) listMarked(ctx context.Context, m *logMarks, kv ...string) ([]string, *logList, error) {
	q := query(kv...)
	if f := q.Get("filter"); f != "" {
		q.Set("filter", m.scope+" && ("+f+")")
	} else {
		q.Set("filter", m.scope)
	}
	if q.Get("perPage") == "" {
		q.Set("perPage", "100")
	}
	list, err := c.listLogs(ctx, q)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (filter %s)", err, q.Get("filter"))
	}
	marks := make([]string, 0, len(list.items))
	for _, it := range list.items {
		k := m.markOf(it)
		if k == "" {
			return nil, nil, Failf("filter %q returned an entry that is not one of the marked requests: %s", q.Get("filter"), jsonText(it))
		}
		marks = append(marks, k)
	}
	return marks, list, nil
}

// expectMarks requires got to hold exactly want, in any order.
func expectMarks(what string, got, want []string) error {
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		return Failf("%s: expected the entries %v, got %v", what, want, got)
	}
	return nil
}

// expectOrder requires got to equal want exactly.
func expectOrder(what string, got, want []string) error {
	if !slices.Equal(got, want) {
		return Failf("%s: expected the entries in the order %v, got %v", what, want, got)
	}
	return nil
}

// logsCheck wraps a check that needs the logs fixture.
func logsCheck(f func(ctx context.Context, c *Client, m *logMarks) error) func(context.Context, *Client) error {
	return func(ctx context.Context, c *Client) error {
		m, err := c.logMarks(ctx)
		if err != nil {
			return err
		}
		return f(ctx, c, m)
	}
}

// filterReq builds a requirement that lists the marked entries with filter
// (combined with the scope) and expects exactly the marks want.
func filterReq(id, section, name, text, filter string, want ...string) *Requirement {
	return &Requirement{
		ID: id, Section: section, Name: name, Text: text,
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			got, _, err := c.listMarked(ctx, m, "filter", filter)
			if err != nil {
				return err
			}
			return expectMarks("filter "+filter, got, want)
		}),
	}
}

// markText describes each marked request in requirement texts.
var markText = map[string]string{
	markGuest:   "the guest's GET /api/health (200)",
	markSuper:   "the superuser's GET /api/health (200)",
	markNoAuth:  "the refused GET /api/logs (401)",
	markMissing: "the POST to an unknown path (404)",
}

// describeMarks lists the marked requests in words.
func describeMarks(marks []string) string {
	words := make([]string, len(marks))
	for i, k := range marks {
		words[i] = markText[k]
	}
	return strings.Join(words, ", ")
}

// operatorReq builds the requirement for one §4.4 comparison operator.
func operatorReq(n int, op, filter string, want ...string) *Requirement {
	return filterReq(fmt.Sprintf("LOG-FILTER-%03d", n), "§4.4 (operator "+op+"); §4.3 GET /api/logs",
		"filter operator "+op,
		"Among the suite's four logged requests, GET /api/logs with filter `"+filter+"` answers 200 with "+
			"exactly "+describeMarks(want)+".",
		filter, want...)
}

// malformedReq builds the requirement that a malformed filter is refused on
// the list (path /api/logs) or stats (/api/logs/stats) endpoint.
func malformedReq(id, path, filter, why string) *Requirement {
	return &Requirement{
		ID:      id,
		Section: "§4.4; §4.3 GET " + path + ", Errors; §7 row 4",
		Name:    "malformed filter on " + path + ": " + filter,
		Text: "GET " + path + " with filter `" + filter + "` (" + why + ") answers 400 \"" + msgInvalidFilter +
			"\" (the document's message; PocketBase words it differently).",
		Run: func(ctx context.Context, c *Client) error {
			r, err := c.get(ctx, withQuery(path, query("filter", filter)), c.su)
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusBadRequest, msgInvalidFilter)
			return err
		},
	}
}

// logsAuthReq builds a 401 or 403 requirement for one logs endpoint. asUser
// selects a regular user's token (403) instead of no token (401).
func logsAuthReq(id, endpoint string, asUser bool) *Requirement {
	name, status, msg, row, who := endpoint+" without a token", 401, msgNeedsToken, "§7 row 6", "without Authorization"
	if asUser {
		name, status, msg, row, who = endpoint+" as a regular user", 403, msgNotAllowed, "§7 row 8", "with a regular user's token"
	}
	return &Requirement{
		ID:      id,
		Section: "§4.3 " + endpoint + ", Errors; §5.10; " + row,
		Name:    name,
		Text:    fmt.Sprintf("%s %s answers %d %q.", endpoint, who, status, msg),
		Run: func(ctx context.Context, c *Client) error {
			auth := ""
			if asUser {
				_, tok, err := c.newUserToken(ctx)
				if err != nil {
					return err
				}
				auth = tok
			}
			path := strings.TrimPrefix(endpoint, "GET ")
			if strings.Contains(path, "{id}") {
				path = strings.ReplaceAll(path, "{id}", "cf"+newNonce(13))
			}
			r, err := c.get(ctx, path, auth)
			if err != nil {
				return err
			}
			_, err = expectError(r, status, msg)
			return err
		},
	}
}

var logsRequirements = []*Requirement{
	// ---- permissions (§4.3, §5.10, §7) ----
	logsAuthReq("LOG-AUTH-001", "GET /api/logs", false),
	logsAuthReq("LOG-AUTH-002", "GET /api/logs", true),
	logsAuthReq("LOG-AUTH-003", "GET /api/logs/{id}", false),
	logsAuthReq("LOG-AUTH-004", "GET /api/logs/{id}", true),
	logsAuthReq("LOG-AUTH-005", "GET /api/logs/stats", false),
	logsAuthReq("LOG-AUTH-006", "GET /api/logs/stats", true),
	{
		ID:      "LOG-AUTH-007",
		Section: "§4.3 GET /api/logs, Errors; §7 row 6",
		Name:    "invalid token is no token",
		Text:    "GET /api/logs with a malformed token in Authorization answers 401 \"" + msgNeedsToken + "\".",
		Run: func(ctx context.Context, c *Client) error {
			r, err := c.get(ctx, "/api/logs", "invalid.token.value")
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusUnauthorized, msgNeedsToken)
			return err
		},
	},
	{
		ID:      "LOG-AUTH-008",
		Section: "§4.3 GET /api/logs, Errors; §7 rows 4 and 6",
		Name:    "authorization is checked before the filter",
		Text: "GET /api/logs without a token and with a malformed filter answers 401 \"" + msgNeedsToken +
			"\", not 400: the query is not examined for a caller who may not list logs.",
		Run: func(ctx context.Context, c *Client) error {
			r, err := c.get(ctx, withQuery("/api/logs", query("filter", "status===")), "")
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusUnauthorized, msgNeedsToken)
			return err
		},
	},

	// ---- what gets logged and how an entry looks (§2.2) ----
	{
		ID:      "LOG-ENTRY-001",
		Section: "§2.2; §4.3 GET /api/logs",
		Name:    "request log entry shape",
		Text: "A guest GET /api/health?cf=… shows up in GET /api/logs (within 10 s) as an entry with exactly " +
			"the keys id (15 characters [a-z0-9]), created (YYYY-MM-DD HH:MM:SS.mmmZ), data, message " +
			"(\"GET \" + the URL) and level 0; data holds type \"request\", method \"GET\", url (path and " +
			"query as sent), status 200, auth \"\", execTime (a number ≥ 0), referer and userAgent as sent, " +
			"and remoteIP and userIP strings.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			e := m.entries[markGuest]
			if !sameKeys(mapKeys(e), "id", "created", "data", "message", "level") {
				return Failf("expected exactly the keys id, created, data, message, level; got %v", mapKeys(e))
			}
			if id, _ := getString(e, "id"); !reLogID.MatchString(id) {
				return Failf("expected id of 15 characters [a-z0-9], got %q", id)
			}
			if cr, _ := getString(e, "created"); !reLogCreated.MatchString(cr) {
				return Failf("expected created as YYYY-MM-DD HH:MM:SS.mmmZ, got %v", e["created"])
			}
			u := m.urls[markGuest]
			if err := expectEntry(e, "GET "+u, 0); err != nil {
				return err
			}
			data, _ := getObject(e, "data")
			want := map[string]any{
				"type": "request", "method": "GET", "url": u, "status": float64(200), "auth": "",
				"referer": markReferer, "userAgent": userAgent,
			}
			if err := expectData(data, want); err != nil {
				return err
			}
			if x, ok := getNumber(data, "execTime"); !ok || x < 0 {
				return Failf("expected data.execTime to be a number ≥ 0, got %v", data["execTime"])
			}
			for _, k := range []string{"remoteIP", "userIP"} {
				if _, ok := getString(data, k); !ok {
					return Failf("expected data.%s to be a string, got %v", k, data[k])
				}
			}
			return nil
		}),
	},
	{
		ID:      "LOG-ENTRY-002",
		Section: "§2.2 (data.auth)",
		Name:    "auth attribute names the caller's collection",
		Text: "The entry of a GET /api/health made with a superuser token has data.auth \"_superusers\", " +
			"data.status 200 and level 0.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			e := m.entries[markSuper]
			if err := expectEntry(e, "GET "+m.urls[markSuper], 0); err != nil {
				return err
			}
			data, _ := getObject(e, "data")
			return expectData(data, map[string]any{"auth": "_superusers", "status": float64(200)})
		}),
	},
	{
		ID:      "LOG-ENTRY-003",
		Section: "§2.2; §4.3 (failed requests are logged)",
		Name:    "refused request logged as an error",
		Text: "GET /api/logs?cf=… without a token (answered 401) is logged with level 8 (the reference's " +
			"error level), data.status 401, data.method \"GET\", data.auth \"\" and message \"GET \" + the URL.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			e := m.entries[markNoAuth]
			if err := expectEntry(e, "GET "+m.urls[markNoAuth], 8); err != nil {
				return err
			}
			data, _ := getObject(e, "data")
			return expectData(data, map[string]any{"status": float64(401), "method": "GET", "auth": "", "type": "request"})
		}),
	},
	{
		ID:      "LOG-ENTRY-004",
		Section: "§2.2",
		Name:    "unknown route logged",
		Text: "A POST to an unknown path (answered 404) is logged with level 8, data.status 404, " +
			"data.method \"POST\" and message \"POST \" + the URL.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			e := m.entries[markMissing]
			if err := expectEntry(e, "POST "+m.urls[markMissing], 8); err != nil {
				return err
			}
			data, _ := getObject(e, "data")
			return expectData(data, map[string]any{"status": float64(404), "method": "POST", "type": "request"})
		}),
	},
	{
		ID:      "LOG-ENTRY-005",
		Section: "§4.3 (reference: successful log reads are not logged)",
		Name:    "successful log reads are not logged",
		Text: "A GET /api/logs answered 200 (made between two requests that were logged) leaves no entry: " +
			"filtering for its URL finds nothing.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			list, err := c.listLogs(ctx, query("filter", m.scope+` && data.url ~ "k=`+markSilent+`"`))
			if err != nil {
				return err
			}
			if len(list.items) != 0 || list.totalItems != 0 {
				return Failf("expected no entry for the successful GET %s, found %d", m.urls[markSilent], len(list.items))
			}
			return nil
		}),
	},

	// ---- view (§4.3 GET /api/logs/{id}) ----
	{
		ID:      "LOG-VIEW-001",
		Section: "§4.3 GET /api/logs/{id}; §2.2",
		Name:    "view one entry",
		Text:    "GET /api/logs/{id} with the id of a listed entry answers 200 with that same entry.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			for _, k := range []string{markGuest, markNoAuth} {
				r, err := c.get(ctx, "/api/logs/"+seg(m.id(k)), c.su)
				if err != nil {
					return err
				}
				got, err := okObject(r)
				if err != nil {
					return err
				}
				if !reflect.DeepEqual(got, m.entries[k]) {
					return Failf("expected the entry as listed %s, got %s", jsonText(m.entries[k]), jsonText(got))
				}
			}
			return nil
		}),
	},
	{
		ID:      "LOG-VIEW-002",
		Section: "§4.3 GET /api/logs/{id}, Errors; §7 row 9",
		Name:    "view an unknown id",
		Text:    "GET /api/logs/{id} as superuser with an id no entry has answers 404 \"" + msgNotFound + "\".",
		Run: func(ctx context.Context, c *Client) error {
			r, err := c.get(ctx, "/api/logs/cf"+newNonce(13), c.su)
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusNotFound, msgNotFound)
			return err
		},
	},
	{
		ID:      "LOG-VIEW-003",
		Section: "§4.1; §4.3 GET /api/logs/{id}",
		Name:    "view with fields",
		Text:    "GET /api/logs/{id}?fields=id,message answers 200 with an object holding only id and message.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			r, err := c.get(ctx, withQuery("/api/logs/"+seg(m.id(markGuest)), query("fields", "id,message")), c.su)
			if err != nil {
				return err
			}
			got, err := okObject(r)
			if err != nil {
				return err
			}
			want := map[string]any{"id": m.id(markGuest), "message": "GET " + m.urls[markGuest]}
			if !reflect.DeepEqual(got, want) {
				return Failf("expected %s, got %s", jsonText(want), jsonText(got))
			}
			return nil
		}),
	},
	{
		ID:      "LOG-VIEW-004",
		Section: "§4.1 (:excerpt); §4.3 GET /api/logs/{id}",
		Name:    "view with an excerpt",
		Text: "GET /api/logs/{id}?fields=message:excerpt(5,true) of a GET /api/health entry answers 200 " +
			"{\"message\": \"GET /...\"}.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			r, err := c.get(ctx, withQuery("/api/logs/"+seg(m.id(markGuest)), query("fields", "message:excerpt(5,true)")), c.su)
			if err != nil {
				return err
			}
			got, err := okObject(r)
			if err != nil {
				return err
			}
			if want := map[string]any{"message": "GET /..."}; !reflect.DeepEqual(got, want) {
				return Failf("expected %s, got %s", jsonText(want), jsonText(got))
			}
			return nil
		}),
	},

	// ---- list envelope and paging (§2.4, §4.3, §8) ----
	{
		ID:      "LOG-LIST-001",
		Section: "§2.4; §4.3 GET /api/logs",
		Name:    "list envelope",
		Text: "GET /api/logs answers 200 with an object of exactly the keys page, perPage, totalItems, " +
			"totalPages (integers) and items (an array of entries, no longer than perPage).",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			list, err := c.listLogs(ctx, query("perPage", "2"))
			if err != nil {
				return err
			}
			if !sameKeys(list.keys, "items", "page", "perPage", "totalItems", "totalPages") {
				return Failf("expected exactly the keys items, page, perPage, totalItems, totalPages; got %v", list.keys)
			}
			if len(list.items) > 2 || list.perPage != 2 {
				return Failf("expected perPage 2 and at most 2 items, got perPage %v and %d items", list.perPage, len(list.items))
			}
			if list.totalItems < len(loggedMarks) {
				return Failf("expected totalItems ≥ %d (the suite's own entries), got %v", len(loggedMarks), list.totalItems)
			}
			return nil
		}),
	},
	{
		ID:      "LOG-LIST-002",
		Section: "§4.3 GET /api/logs; §8 (page default 1, perPage default 30)",
		Name:    "paging defaults",
		Text: "GET /api/logs without paging parameters answers 200 with page 1 and perPage 30, with " +
			"min(30, totalItems) items.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			list, err := c.listLogs(ctx, nil)
			if err != nil {
				return err
			}
			return expectPaging(list, 1, 30)
		}),
	},
	{
		ID:      "LOG-LIST-003",
		Section: "§4.3 GET /api/logs (maximum perPage: reference)",
		Name:    "perPage capped at 1000",
		Text:    "GET /api/logs?perPage=5000 answers 200 with perPage 1000 and at most 1000 items.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			list, err := c.listLogs(ctx, query("perPage", "5000"))
			if err != nil {
				return err
			}
			return expectPaging(list, 1, 1000)
		}),
	},
	{
		ID:      "LOG-LIST-004",
		Section: "§4.3 GET /api/logs; §8",
		Name:    "perPage below 1 means the default",
		Text:    "GET /api/logs with perPage=0 or perPage=-1 answers 200 with perPage 30.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			for _, v := range []string{"0", "-1"} {
				list, err := c.listLogs(ctx, query("perPage", v))
				if err != nil {
					return err
				}
				if err := expectPaging(list, 1, 30); err != nil {
					return fmt.Errorf("perPage=%s: %w", v, err)
				}
			}
			return nil
		}),
	},
	{
		ID:      "LOG-LIST-005",
		Section: "§4.3 GET /api/logs; §8",
		Name:    "page below 1 means the first page",
		Text:    "GET /api/logs?perPage=2 with page=0 or page=-1 answers 200 with page 1.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			for _, v := range []string{"0", "-1"} {
				list, err := c.listLogs(ctx, query("page", v, "perPage", "2"))
				if err != nil {
					return err
				}
				if err := expectPaging(list, 1, 2); err != nil {
					return fmt.Errorf("page=%s: %w", v, err)
				}
			}
			return nil
		}),
	},
	{
		ID:      "LOG-LIST-006",
		Section: "§4.3 GET /api/logs (page is a number)",
		Name:    "non-numeric page refused",
		Text:    "GET /api/logs?page=abc answers 400 \"" + msgGenericBad + "\".",
		Run: func(ctx context.Context, c *Client) error {
			r, err := c.get(ctx, withQuery("/api/logs", query("page", "abc")), c.su)
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusBadRequest, msgGenericBad)
			return err
		},
	},
	{
		ID:      "LOG-LIST-007",
		Section: "§4.3 GET /api/logs (perPage is a number)",
		Name:    "non-numeric perPage refused",
		Text:    "GET /api/logs?perPage=abc answers 400 \"" + msgGenericBad + "\".",
		Run: func(ctx context.Context, c *Client) error {
			r, err := c.get(ctx, withQuery("/api/logs", query("perPage", "abc")), c.su)
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusBadRequest, msgGenericBad)
			return err
		},
	},
	{
		ID:      "LOG-LIST-008",
		Section: "§4.3 GET /api/logs (skipTotal: reference)",
		Name:    "skipTotal",
		Text: "GET /api/logs?skipTotal=1 answers 200 with totalItems -1 and totalPages -1, and still " +
			"returns the matching items.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			got, list, err := c.listMarked(ctx, m, "skipTotal", "1")
			if err != nil {
				return err
			}
			if list.totalItems != -1 || list.totalPages != -1 {
				return Failf("expected totalItems -1 and totalPages -1, got %v and %v", list.totalItems, list.totalPages)
			}
			return expectMarks("skipTotal=1", got, loggedMarks)
		}),
	},
	{
		ID:      "LOG-LIST-009",
		Section: "§2.4; §4.3 GET /api/logs (page, perPage)",
		Name:    "pages split the matches",
		Text: "With a filter matching 4 entries and perPage=3, page 1 holds 3 items with totalItems 4 and " +
			"totalPages 2, page 2 holds the 4th, and page 3 answers 200 with no items and page 3.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			var all []string
			for page, want := range []int{3, 1, 0} {
				got, list, err := c.listMarked(ctx, m, "perPage", "3", "page", fmt.Sprint(page+1), "sort", "created")
				if err != nil {
					return err
				}
				if len(got) != want || list.page != page+1 || list.perPage != 3 ||
					list.totalItems != 4 || list.totalPages != 2 {
					return Failf("page %d: expected %d items, page %d, perPage 3, totalItems 4, totalPages 2; "+
						"got %d items, page %v, perPage %v, totalItems %v, totalPages %v",
						page+1, want, page+1, len(got), list.page, list.perPage, list.totalItems, list.totalPages)
				}
				all = append(all, got...)
			}
			return expectOrder("pages 1 to 3 sorted by created", all, loggedMarks)
		}),
	},
	{
		ID:      "LOG-LIST-010",
		Section: "§4.3 GET /api/logs (default order: reference)",
		Name:    "default order is oldest first",
		Text:    "GET /api/logs without sort answers 200 listing entries in the order they were logged, oldest first.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			got, _, err := c.listMarked(ctx, m)
			if err != nil {
				return err
			}
			return expectOrder("no sort", got, loggedMarks)
		}),
	},

	// ---- sort (§4.3) ----
	{
		ID:      "LOG-SORT-001",
		Section: "§4.3 GET /api/logs (sort, ascending)",
		Name:    "sort by created ascending",
		Text:    "GET /api/logs with sort=created, and with sort=+created, answers 200 listing the entries oldest first.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			for _, s := range []string{"created", "+created"} {
				got, _, err := c.listMarked(ctx, m, "sort", s)
				if err != nil {
					return err
				}
				if err := expectOrder("sort="+s, got, loggedMarks); err != nil {
					return err
				}
			}
			return nil
		}),
	},
	{
		ID:      "LOG-SORT-002",
		Section: "§4.3 GET /api/logs (sort, prefix - for descending)",
		Name:    "sort by created descending",
		Text:    "GET /api/logs with sort=-created answers 200 listing the entries newest first.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			got, _, err := c.listMarked(ctx, m, "sort", "-created")
			if err != nil {
				return err
			}
			want := slices.Clone(loggedMarks)
			slices.Reverse(want)
			return expectOrder("sort=-created", got, want)
		}),
	},
	{
		ID:      "LOG-SORT-003",
		Section: "§4.3 GET /api/logs (supported sort fields)",
		Name:    "unknown sort field refused",
		Text:    "GET /api/logs?sort=unknownfield answers 400 \"" + msgGenericBad + "\".",
		Run: func(ctx context.Context, c *Client) error {
			r, err := c.get(ctx, withQuery("/api/logs", query("sort", "unknownfield")), c.su)
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusBadRequest, msgGenericBad)
			return err
		},
	},
	{
		ID:      "LOG-SORT-004",
		Section: "§4.3 GET /api/logs (sort @random)",
		Name:    "sort @random",
		Text:    "GET /api/logs?sort=@random answers 200 with the same matching entries, in some order.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			got, _, err := c.listMarked(ctx, m, "sort", "@random")
			if err != nil {
				return err
			}
			return expectMarks("sort=@random", got, loggedMarks)
		}),
	},
	{
		ID:      "LOG-SORT-005",
		Section: "§4.3 GET /api/logs (sort by data.* attributes)",
		Name:    "sort by data attributes",
		Text: "GET /api/logs with sort=data.url answers 200 listing entries by URL ascending, and with sort=-data.status " +
			"by status descending.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			got, _, err := c.listMarked(ctx, m, "sort", "data.url")
			if err != nil {
				return err
			}
			want := slices.Clone(loggedMarks)
			sort.SliceStable(want, func(i, j int) bool { return m.urls[want[i]] < m.urls[want[j]] })
			if err := expectOrder("sort=data.url", got, want); err != nil {
				return err
			}
			got, _, err = c.listMarked(ctx, m, "sort", "-data.status")
			if err != nil {
				return err
			}
			if len(got) != 4 || got[0] != markMissing || got[1] != markNoAuth {
				return Failf("sort=-data.status: expected %s (404) then %s (401) then the two 200s, got %v",
					markMissing, markNoAuth, got)
			}
			return nil
		}),
	},
	{
		ID:      "LOG-SORT-006",
		Section: "§4.3 GET /api/logs (comma-separated sort attributes)",
		Name:    "sort by several attributes",
		Text: "GET /api/logs with sort=-level,created answers 200 listing the level 8 entries first, each group oldest " +
			"first.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			got, _, err := c.listMarked(ctx, m, "sort", "-level,created")
			if err != nil {
				return err
			}
			return expectOrder("sort=-level,created", got, []string{markNoAuth, markMissing, markGuest, markSuper})
		}),
	},
	{
		ID:      "LOG-SORT-007",
		Section: "§4.3 GET /api/logs (sort by id)",
		Name:    "sort by id",
		Text:    "GET /api/logs with sort=id answers 200 listing the entries by id ascending, and sort=-id descending.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			want := slices.Clone(loggedMarks)
			sort.Slice(want, func(i, j int) bool { return m.id(want[i]) < m.id(want[j]) })
			got, _, err := c.listMarked(ctx, m, "sort", "id")
			if err != nil {
				return err
			}
			if err := expectOrder("sort=id", got, want); err != nil {
				return err
			}
			got, _, err = c.listMarked(ctx, m, "sort", "-id")
			if err != nil {
				return err
			}
			slices.Reverse(want)
			return expectOrder("sort=-id", got, want)
		}),
	},

	// ---- filter (§4.4) ----
	operatorReq(1, "=", "data.status = 401", markNoAuth),
	operatorReq(2, "!=", "data.status != 401", markGuest, markSuper, markMissing),
	operatorReq(3, ">", "data.status > 401", markMissing),
	operatorReq(4, ">=", "data.status >= 401", markNoAuth, markMissing),
	operatorReq(5, "<", "data.status < 401", markGuest, markSuper),
	operatorReq(6, "<=", "data.status <= 401", markGuest, markSuper, markNoAuth),
	operatorReq(7, "~", `message ~ "/api/logs"`, markNoAuth),
	operatorReq(8, "!~", `message !~ "/api/health"`, markNoAuth, markMissing),
	operatorReq(9, "?=", "data.status ?= 401", markNoAuth),
	operatorReq(10, "?!=", "data.status ?!= 401", markGuest, markSuper, markMissing),
	operatorReq(11, "?>", "data.status ?> 401", markMissing),
	operatorReq(12, "?>=", "data.status ?>= 401", markNoAuth, markMissing),
	operatorReq(13, "?<", "data.status ?< 401", markGuest, markSuper),
	operatorReq(14, "?<=", "data.status ?<= 401", markGuest, markSuper, markNoAuth),
	operatorReq(15, "?~", `message ?~ "/api/logs"`, markNoAuth),
	operatorReq(16, "?!~", `message ?!~ "/api/health"`, markNoAuth, markMissing),
	filterReq("LOG-FILTER-017", "§4.4 (&&)", "filter with &&",
		"Comparisons joined with && must all hold: filter `data.method = \"GET\" && level > 0` answers 200 "+
			"with only the refused GET.",
		`data.method = "GET" && level > 0`, markNoAuth),
	filterReq("LOG-FILTER-018", "§4.4 (|| and parentheses)", "filter with || in parentheses",
		"Comparisons joined with || need one to hold: filter `(data.status = 404 || data.auth = \"_superusers\")` "+
			"answers 200 with the unknown-route POST and the superuser's request.",
		`(data.status = 404 || data.auth = "_superusers")`, markSuper, markMissing),
	filterReq("LOG-FILTER-019", "§4.4 (nested parentheses)", "filter with nested groups",
		"Groups nest: filter `((level > 0 && data.method = 'GET') || (level = 0 && data.auth = '_superusers'))` "+
			"answers 200 with the refused GET and the superuser's request.",
		`((level > 0 && data.method = 'GET') || (level = 0 && data.auth = '_superusers'))`, markNoAuth, markSuper),
	filterReq("LOG-FILTER-020", "§4.4 (// comments)", "filter with a comment",
		"A // comment runs to the end of its line: filter `data.status = 401 // note` answers 200 with the refused request, "+
			"and a comment followed by a new line and `|| data.method = 'POST'` still applies the second line.",
		"data.status = 401 // only the refused request\n|| data.method = 'POST'", markNoAuth, markMissing),
	filterReq("LOG-FILTER-021", "§4.4 (operands: quoted strings, numbers, null)", "filter literals",
		"Operands may be single- or double-quoted strings, numbers and null: `data.method = 'POST' || "+
			"(level = 0 && data.cfabsent = null && data.auth = \"_superusers\")` answers 200 with the POST and the "+
			"superuser's request.",
		`data.method = 'POST' || (level = 0 && data.cfabsent = null && data.auth = "_superusers")`,
		markMissing, markSuper),
	{
		ID:      "LOG-FILTER-022",
		Section: "§4.3 GET /api/logs (filter fields id, created)",
		Name:    "filter by id and created",
		Text: "GET /api/logs answers 200 to a filter on id (`id = \"<id>\"`) with that entry, and one on created " +
			"(`created >= \"<created of an entry>\"`) with that entry and the later ones.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			f := `id = "` + m.id(markSuper) + `"`
			got, _, err := c.listMarked(ctx, m, "filter", f)
			if err != nil {
				return err
			}
			if err := expectMarks("filter "+f, got, []string{markSuper}); err != nil {
				return err
			}
			created, _ := getString(m.entries[markSuper], "created")
			f = `created >= "` + created + `"`
			got, _, err = c.listMarked(ctx, m, "filter", f)
			if err != nil {
				return err
			}
			return expectMarks("filter "+f, got, []string{markSuper, markNoAuth, markMissing})
		}),
	},
	{
		ID:      "LOG-FILTER-023",
		Section: "§4.3 GET /api/logs (filter is optional)",
		Name:    "empty filter means no filter",
		Text:    "GET /api/logs?filter= (empty) answers 200 like a list without filter.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			a, err := c.listLogs(ctx, query("filter", "", "perPage", "1", "sort", "-created"))
			if err != nil {
				return err
			}
			if a.totalItems < len(loggedMarks) {
				return Failf("expected every entry (at least the suite's %d), got totalItems %v", len(loggedMarks), a.totalItems)
			}
			return nil
		}),
	},
	{
		ID:      "LOG-FILTER-024",
		Section: "§4.4 (wildcard %)",
		Name:    "like with explicit wildcards",
		Text: "A ~ operand containing % is used as the pattern itself: filter `message ~ \"GET /api/health%\"` " +
			"answers 200 with the entries whose message starts with it, `data.url ~ \"%k=missing\"` the one whose URL " +
			"ends with it.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			for _, tc := range []struct {
				f    string
				want []string
			}{
				{`message ~ "GET /api/health%"`, []string{markGuest, markSuper}},
				{`data.url ~ "%k=missing"`, []string{markMissing}},
			} {
				got, _, err := c.listMarked(ctx, m, "filter", tc.f)
				if err != nil {
					return err
				}
				if err := expectMarks("filter "+tc.f, got, tc.want); err != nil {
					return err
				}
			}
			return nil
		}),
	},
	malformedReq("LOG-FILTER-030", "/api/logs", "status===", "an operator that does not exist"),
	malformedReq("LOG-FILTER-031", "/api/logs", "(level=0", "an unclosed parenthesis"),
	malformedReq("LOG-FILTER-032", "/api/logs", "level=0 ||", "a dangling ||"),
	malformedReq("LOG-FILTER-033", "/api/logs", "// only a comment", "no expression at all"),
	malformedReq("LOG-FILTER-034", "/api/logs", "cfunknownfield = 1", "a field logs do not have"),

	// ---- stats (§2.3, §4.3 GET /api/logs/stats) ----
	{
		ID:      "LOG-STATS-001",
		Section: "§2.3; §4.3 GET /api/logs/stats",
		Name:    "stats shape",
		Text: "GET /api/logs/stats answers 200 with an array of objects holding exactly date " +
			"(\"YYYY-MM-DD HH:00:00.000Z\", the start of an hour) and total (an integer ≥ 1), in strictly " +
			"ascending date order.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			st, err := c.stats(ctx, nil)
			if err != nil {
				return err
			}
			if len(st) == 0 {
				return Failf("expected at least one hour bucket (the suite's own requests were logged), got []")
			}
			return nil
		}),
	},
	{
		ID:      "LOG-STATS-002",
		Section: "§4.3 GET /api/logs/stats (filter)",
		Name:    "filtered stats",
		Text: "GET /api/logs/stats with a filter matching the suite's 4 entries answers 200 with one bucket per hour " +
			"those entries were created in, totals adding up to 4.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			st, err := c.stats(ctx, query("filter", m.scope))
			if err != nil {
				return err
			}
			return expectMarkStats(m, st)
		}),
	},
	{
		ID:      "LOG-STATS-003",
		Section: "§4.3 GET /api/logs/stats (filter)",
		Name:    "stats matching nothing",
		Text:    "GET /api/logs/stats with a filter that matches no entry answers 200 [].",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			st, err := c.stats(ctx, query("filter", m.scope+" && data.status = 999"))
			if err != nil {
				return err
			}
			if len(st) != 0 {
				return Failf("expected [], got %d buckets", len(st))
			}
			return nil
		}),
	},
	{
		ID:      "LOG-STATS-004",
		Section: "§4.1; §4.3 GET /api/logs/stats",
		Name:    "stats with fields",
		Text:    "GET /api/logs/stats?fields=total answers 200 with array elements holding only total.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			r, err := c.get(ctx, withQuery("/api/logs/stats", query("filter", m.scope, "fields", "total")), c.su)
			if err != nil {
				return err
			}
			if err := expectStatus(r, http.StatusOK); err != nil {
				return err
			}
			a, err := array(r)
			if err != nil {
				return err
			}
			if len(a) == 0 {
				return Failf("expected at least one element, got %s", r)
			}
			sum := 0.0
			for _, el := range a {
				o, ok := el.(map[string]any)
				if !ok || !sameKeys(mapKeys(o), "total") {
					return Failf("expected every element to be {total}, got %s", r)
				}
				t, _ := getNumber(o, "total")
				sum += t
			}
			if sum != 4 {
				return Failf("expected the totals to add up to 4, got %v", sum)
			}
			return nil
		}),
	},
	{
		ID:      "LOG-STATS-005",
		Section: "§4.3 GET /api/logs/stats (filter fields include rowid)",
		Name:    "stats filter on rowid",
		Text:    "GET /api/logs/stats accepts rowid in its filter: `rowid > 0 && <scope>` answers 200 with totals adding up to 4.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			st, err := c.stats(ctx, query("filter", "rowid > 0 && "+m.scope))
			if err != nil {
				return err
			}
			return expectMarkStats(m, st)
		}),
	},
	malformedReq("LOG-STATS-010", "/api/logs/stats", "status===", "an operator that does not exist"),
	malformedReq("LOG-STATS-011", "/api/logs/stats", "(level=0", "an unclosed parenthesis"),
	malformedReq("LOG-STATS-012", "/api/logs/stats", "level=0 ||", "a dangling ||"),
	malformedReq("LOG-STATS-013", "/api/logs/stats", "// only a comment", "no expression at all"),
	malformedReq("LOG-STATS-014", "/api/logs/stats", "cfunknownfield = 1", "a field logs do not have"),

	// ---- fields on the list (§4.1) ----
	{
		ID:      "LOG-FIELDS-001",
		Section: "§4.1; §4.3 GET /api/logs",
		Name:    "list with fields",
		Text: "GET /api/logs?fields=id,message answers 200 with every item holding only id and message, " +
			"and the envelope keys page, perPage, totalItems, totalPages kept.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			q := query("filter", m.scope, "fields", "id,message", "sort", "created")
			list, err := c.listLogs(ctx, q)
			if err != nil {
				return err
			}
			if !sameKeys(list.keys, "items", "page", "perPage", "totalItems", "totalPages") || list.totalItems != 4 {
				return Failf("expected the full envelope with totalItems 4, got keys %v and totalItems %v", list.keys, list.totalItems)
			}
			if len(list.items) != 4 {
				return Failf("expected 4 items, got %d", len(list.items))
			}
			for i, k := range loggedMarks {
				want := map[string]any{"id": m.id(k), "message": m.entries[k]["message"]}
				if !reflect.DeepEqual(list.items[i], want) {
					return Failf("item %d: expected %s, got %s", i, jsonText(want), jsonText(list.items[i]))
				}
			}
			return nil
		}),
	},
	excerptReq("LOG-FIELDS-002", "message:excerpt(5,true)", 5, true),
	excerptReq("LOG-FIELDS-003", "message:excerpt(5)", 5, false),
	{
		ID:      "LOG-FIELDS-004",
		Section: "§4.1 (nested selection by dotted path)",
		Name:    "list with a nested field",
		Text:    "GET /api/logs?fields=data.status,id answers 200 with items holding only id and data, data holding only status.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			list, err := c.listLogs(ctx, query("filter", m.scope, "fields", "data.status,id", "sort", "created"))
			if err != nil {
				return err
			}
			if len(list.items) != 4 {
				return Failf("expected 4 items, got %d", len(list.items))
			}
			for i, k := range loggedMarks {
				data, _ := getObject(m.entries[k], "data")
				want := map[string]any{"id": m.id(k), "data": map[string]any{"status": data["status"]}}
				if !reflect.DeepEqual(list.items[i], want) {
					return Failf("item %d: expected %s, got %s", i, jsonText(want), jsonText(list.items[i]))
				}
			}
			return nil
		}),
	},
}

// excerptReq builds the requirement for fields=<spec> on the list, where
// spec is an :excerpt of message.
func excerptReq(id, spec string, max int, ellipsis bool) *Requirement {
	example, suffix := "\"GET /\" and \"POST\"", ""
	if ellipsis {
		example, suffix = "\"GET /...\" and \"POST...\"", " and \"...\" appended"
	}
	return &Requirement{
		ID:      id,
		Section: "§4.1 (:excerpt); §4.3 GET /api/logs",
		Name:    "list with " + spec,
		Text: "GET /api/logs?fields=" + spec + " answers 200 with items holding only message, cut to its first " +
			fmt.Sprint(max) + " characters with surrounding space trimmed" + suffix + " (" + example + ").",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			list, err := c.listLogs(ctx, query("filter", m.scope, "fields", spec, "sort", "created"))
			if err != nil {
				return err
			}
			if len(list.items) != 4 {
				return Failf("expected 4 items, got %d", len(list.items))
			}
			for i, k := range loggedMarks {
				msg, _ := getString(m.entries[k], "message")
				want := map[string]any{"message": excerpt(msg, max, ellipsis)}
				if !reflect.DeepEqual(list.items[i], want) {
					return Failf("item %d: expected %s, got %s", i, jsonText(want), jsonText(list.items[i]))
				}
			}
			return nil
		}),
	}
}

// excerpt is the plain-text :excerpt of s (the marked messages hold no
// markup and no runs of spaces).
func excerpt(s string, max int, ellipsis bool) string {
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	out := strings.TrimSpace(string(r[:max]))
	if ellipsis {
		out += "..."
	}
	return out
}

// expectEntry checks message and level of a log entry.
func expectEntry(e map[string]any, message string, level float64) error {
	if got, _ := getString(e, "message"); got != message {
		return Failf("expected message %q, got %v", message, e["message"])
	}
	if got, ok := getNumber(e, "level"); !ok || got != level {
		return Failf("expected level %v, got %v", level, e["level"])
	}
	if _, ok := getObject(e, "data"); !ok {
		return Failf("expected data to be an object, got %v", e["data"])
	}
	return nil
}

// expectData checks attributes of a log entry's data.
func expectData(data map[string]any, want map[string]any) error {
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got, ok := data[k]; !ok || got != want[k] {
			return Failf("expected data.%s = %s, got %s (data %s)", k, jsonText(want[k]), jsonText(data[k]), jsonText(data))
		}
	}
	return nil
}

// expectPaging checks page and perPage of a list and that it holds as many
// items as it should.
func expectPaging(l *logList, page, perPage int) error {
	if l.page != page || l.perPage != perPage {
		return Failf("expected page %d and perPage %d, got page %d and perPage %d", page, perPage, l.page, l.perPage)
	}
	want := max(0, min(perPage, l.totalItems-(page-1)*perPage))
	if len(l.items) != want {
		return Failf("expected %d items (totalItems %d), got %d", want, l.totalItems, len(l.items))
	}
	if pages := (l.totalItems + perPage - 1) / perPage; l.totalItems >= 0 && l.totalPages != pages {
		return Failf("expected totalPages ceil(%d/%d) = %d, got %d", l.totalItems, perPage, pages, l.totalPages)
	}
	return nil
}

// statsBucket is one §2.3 statistics entry.
type statsBucket struct {
	date  string
	total float64
}

// stats fetches GET /api/logs/stats as superuser and checks the shape of
// every element and the date order.
func (c *Client) stats(ctx context.Context, q url.Values) ([]statsBucket, error) {
	r, err := c.get(ctx, withQuery("/api/logs/stats", q), c.su)
	if err != nil {
		return nil, err
	}
	if err := expectStatus(r, http.StatusOK); err != nil {
		return nil, err
	}
	a, err := array(r)
	if err != nil {
		return nil, err
	}
	out := make([]statsBucket, 0, len(a))
	for i, el := range a {
		o, ok := el.(map[string]any)
		if !ok || !sameKeys(mapKeys(o), "date", "total") {
			return nil, Failf("expected every element to be {date, total}, element %d is %s", i, jsonText(el))
		}
		d, _ := getString(o, "date")
		if !reStatsDate.MatchString(d) {
			return nil, Failf("expected date as YYYY-MM-DD HH:00:00.000Z, got %v", o["date"])
		}
		t, ok := getNumber(o, "total")
		if !ok || t < 1 || t != math.Trunc(t) {
			return nil, Failf("expected total to be an integer ≥ 1, got %v", o["total"])
		}
		if i > 0 && d <= out[i-1].date {
			return nil, Failf("expected dates in strictly ascending order, got %q after %q", d, out[i-1].date)
		}
		out = append(out, statsBucket{date: d, total: t})
	}
	return out, nil
}

// expectMarkStats requires st to count the marked entries per hour.
func expectMarkStats(m *logMarks, st []statsBucket) error {
	want := map[string]float64{}
	for _, k := range loggedMarks {
		created, _ := getString(m.entries[k], "created")
		if len(created) < 13 {
			return errors.New("marked entry without created")
		}
		want[created[:13]+":00:00.000Z"]++
	}
	got := map[string]float64{}
	for _, b := range st {
		got[b.date] = b.total
	}
	if !reflect.DeepEqual(got, want) {
		return Failf("expected the buckets %v (hours of the suite's entries), got %v", want, got)
	}
	return nil
}
