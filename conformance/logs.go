package conformance

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
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
	// reStatsDateAnyZ is §2.3's format, which has no Z, and PocketBase's
	// (reStatsDate), which has one: the document profile accepts both.
	reStatsDateAnyZ = regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:00:00\.000Z?$`)
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
			// The shared fixture accepts every reading the document
			// allows, whichever check builds it: the checks judge.
			fc := c.forCheck()
			fc.pocketbaseReadings = false
			s.logs, s.logsErr = fc.buildLogMarks(ctx)
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
		return nil, Mismatch(fmt.Sprintf("the marked requests %v (nonce %s) in GET /api/logs within %s", loggedMarks, n, c.opts.wait),
			fmt.Sprintf("only %v", seen))
	}
	delete(m.entries, markSilent) // wrongly logged; LOG-ENTRY-005 reports it
	return m, nil
}

// pollLogs lists logs with each query of listings in turn, handing every
// page's items to visit, until visit reports it has found what it wants
// (true) or Config.WaitTimeout has passed (false). A filtered listing is the cheap
// way; an unfiltered one of the newest entries is the fallback, so that a
// broken filter does not hide every logs check behind a timeout.
func (c *Client) pollLogs(ctx context.Context, listings []url.Values, visit func([]map[string]any) bool) (bool, error) {
	deadline := time.Now().Add(c.opts.wait)
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
	// hasTotalPages says whether the server sent totalPages, which §2.4
	// does not list.
	hasTotalPages bool
}

// parseLogList requires 200 and a well-typed list envelope. totalPages,
// which §2.4 does not list, must be an integer when present; when it is
// absent, totalPages is 0 (expectListKeys demands it under PocketBase's
// readings).
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
		if _, present := m[f.key]; f.key == "totalPages" && !present {
			continue // §2.4 has no totalPages; expectListKeys says when it is required
		}
		if !ok || v != math.Trunc(v) || math.Abs(v) > 1<<53 {
			return nil, Mismatch(fmt.Sprintf("%s to be an integer", f.key), r.String())
		}
		*f.dst = int(v)
	}
	_, l.hasTotalPages = m["totalPages"]
	items, ok := getArray(m, "items")
	if !ok {
		return nil, Mismatch("items to be an array", r.String())
	}
	for _, it := range items {
		o, ok := it.(map[string]any)
		if !ok {
			return nil, Mismatch("every item to be an object", r.String())
		}
		l.items = append(l.items, o)
	}
	return l, nil
}

// expectListKeys requires the keys of a list envelope: under PocketBase's
// readings exactly items, page, perPage, totalItems and totalPages; under
// the document's the four keys of §2.4, totalPages allowed beside them.
func (c *Client) expectListKeys(keys []string) error {
	if c.strict() {
		if !sameKeys(keys, "items", "page", "perPage", "totalItems", "totalPages") {
			return Mismatch("exactly the keys items, page, perPage, totalItems, totalPages", fmt.Sprint(keys))
		}
		return nil
	}
	if !sameKeys(keys, "items", "page", "perPage", "totalItems") &&
		!sameKeys(keys, "items", "page", "perPage", "totalItems", "totalPages") {
		return Mismatch("exactly the keys items, page, perPage, totalItems (§2.4), and perhaps totalPages", fmt.Sprint(keys))
	}
	return nil
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
			return nil, nil, fmt.Errorf("filter %q: %w", q.Get("filter"), Mismatch("only marked requests", "the entry "+jsonText(it)))
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
		return fmt.Errorf("%s: %w", what, Mismatch(fmt.Sprintf("the entries %v", want), fmt.Sprint(got)))
	}
	return nil
}

// expectOrder requires got to equal want exactly.
func expectOrder(what string, got, want []string) error {
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s: %w", what, Mismatch(fmt.Sprintf("the entries in the order %v", want), fmt.Sprint(got)))
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

// logsRequirements is every logs check, section by section, each in its own file.
var logsRequirements = slices.Concat(
	logsAuthRequirements,
	logsEntryRequirements,
	logsViewRequirements,
	logsListRequirements,
	logsSortRequirements,
	logsFilterRequirements,
	logsStatsRequirements,
	logsFieldsRequirements,
)
