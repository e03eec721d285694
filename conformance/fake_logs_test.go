package conformance

import (
	"fmt"
	"math"
	mrand "math/rand/v2"
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
		rows[i] = map[string]any{"id": l.id, "created": l.created, "updated": l.created, "data": l.data, "message": l.message,
			"level": float64(l.level), "rowid": float64(i + 1)}
	}
	pub := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			if k != "rowid" && k != "updated" {
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
		if f.bug("document-readings") {
			delete(env, "totalPages")
		}
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
			d := row["created"].(string)[:13] + ":00:00.000Z"
			if f.bug("stats-date-iso") {
				d = strings.Replace(d, " ", "T", 1)
			}
			counts[d]++
		}
		out := []map[string]any{}
		for _, d := range sortedKeys(counts) {
			out = append(out, map[string]any{"date": d, "total": counts[d]})
		}
		if f.bug("stats-without-z") || f.bug("document-readings") {
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
			strings.TrimLeft(p, "+-") == "rowid" && f.bug("rowid-sort-refused"),
			strings.TrimLeft(p, "+-") == "updated" && f.bug("updated-sort-refused"),
			strings.Contains(p, "data.") && f.bug("data-sort-refused"),
			strings.TrimLeft(p, "+-") == "message" && f.bug("message-sort-refused"):
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
	case name == "id" || name == "created" || name == "message" || name == "level" || name == "rowid" || name == "updated":
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
		if _, err := fakeField(map[string]any{}, k.field); err != nil {
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
