package conformance

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"strings"
)

// Hourly statistics: §2.3, §4.3 GET /api/logs/stats.

// logsStatsRequirements: GET /api/logs/stats (§2.3, §4.3).
var logsStatsRequirements = []*Requirement{
	{
		ID:      "LOG-STATS-001",
		Source:  SourceDocument,
		Section: "§2.3; §4.3 GET /api/logs/stats",
		Name:    "stats shape",
		Text: "GET /api/logs/stats answers 200 with an array of objects holding exactly date " +
			"(\"YYYY-MM-DD HH:00:00.000\", the start of an hour, with or without a trailing Z) and total (an integer ≥ 1), in strictly " +
			"ascending date order.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			st, err := c.stats(ctx, nil)
			if err != nil {
				return err
			}
			if len(st) == 0 {
				return Mismatch("at least one hour bucket (the suite's own requests were logged)", "[]")
			}
			return nil
		}),
	},
	{
		ID:      "LOG-STATS-002",
		Source:  SourceDocument,
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
		Source:  SourceDocument,
		Section: "§4.3 GET /api/logs/stats (filter)",
		Name:    "stats matching nothing",
		Text:    "GET /api/logs/stats with a filter that matches no entry answers 200 [].",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			st, err := c.stats(ctx, query("filter", m.scope+" && data.status = 999"))
			if err != nil {
				return err
			}
			if len(st) != 0 {
				return Mismatch("[]", fmt.Sprintf("%d buckets", len(st)))
			}
			return nil
		}),
	},
	{
		ID:      "LOG-STATS-004",
		Source:  SourceDocument,
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
				return Mismatch("at least one element", r.String())
			}
			sum := 0.0
			for _, el := range a {
				o, ok := el.(map[string]any)
				if !ok || !sameKeys(mapKeys(o), "total") {
					return Mismatch("every element to be {total}", r.String())
				}
				t, _ := getNumber(o, "total")
				sum += t
			}
			if sum != 4 {
				return Mismatch("the totals to add up to 4", fmt.Sprint(sum))
			}
			return nil
		}),
	},
	{
		ID:      "LOG-STATS-005",
		Source:  SourceDocument,
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
	statsFilterReq("LOG-STATS-006", "§4.3 GET /api/logs/stats (filter: the list's fields id, created, level, message, data.*)",
		"stats filter on the list's fields",
		`id != "" && created >= "2000-01-01 00:00:00.000Z" && level >= 0 && message != "" && data.status > 0`),
	statsFilterReq("LOG-STATS-007", "§4.3 GET /api/logs/stats (filter: the list's field updated); §2.2 (updated is accepted by filter)",
		"stats filter on updated",
		`updated > "2000-01-01 00:00:00.000Z"`),
	malformedReq("LOG-STATS-010", "/api/logs/stats", "status===", "an operator that does not exist"),
	malformedReq("LOG-STATS-011", "/api/logs/stats", "(level=0", "an unclosed parenthesis"),
	malformedReq("LOG-STATS-012", "/api/logs/stats", "level=0 ||", "a dangling ||"),
	malformedReq("LOG-STATS-013", "/api/logs/stats", "// only a comment", "no expression at all"),
	malformedReq("LOG-STATS-014", "/api/logs/stats", "cfunknownfield = 1", "a field logs do not have"),
}

// statsFilterReq builds the requirement that the stats filter takes a
// field of the list's filter: filter, true of every entry logged since
// 2000, scoped to the suite's four requests, counts all four.
func statsFilterReq(id, section, name, filter string) *Requirement {
	return &Requirement{
		ID: id, Source: SourceDocument, Section: section, Name: name,
		Text: "GET /api/logs/stats accepts `" + filter + "` in its filter: scoped to the suite's four logged " +
			"requests it answers 200 with totals adding up to 4.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			st, err := c.stats(ctx, query("filter", m.scope+" && ("+filter+")"))
			if err != nil {
				return err
			}
			return expectMarkStats(m, st)
		}),
	}
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
			return nil, fmt.Errorf("element %d: %w", i, Mismatch("{date, total}", jsonText(el)))
		}
		d, _ := getString(o, "date")
		switch {
		case c.strict() && !reStatsDate.MatchString(d):
			return nil, Mismatch("date as YYYY-MM-DD HH:00:00.000Z", fmt.Sprint(o["date"]))
		case !reStatsDateAnyZ.MatchString(d):
			return nil, Mismatch("date as YYYY-MM-DD HH:00:00.000 (§2.3), with or without a trailing Z", fmt.Sprint(o["date"]))
		}
		t, ok := getNumber(o, "total")
		if !ok || t < 1 || t != math.Trunc(t) {
			return nil, Mismatch("total to be an integer ≥ 1", fmt.Sprint(o["total"]))
		}
		if i > 0 && d <= out[i-1].date {
			return nil, Mismatch("dates in strictly ascending order", fmt.Sprintf("%q after %q", d, out[i-1].date))
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
		want[created[:13]+":00:00.000"]++
	}
	got := map[string]float64{} // by date without the Z (c.stats checked the form)
	for _, b := range st {
		got[strings.TrimSuffix(b.date, "Z")] = b.total
	}
	if !reflect.DeepEqual(got, want) {
		return Mismatch(fmt.Sprintf("the buckets %v (hours of the suite's entries)", want), fmt.Sprint(got))
	}
	return nil
}
