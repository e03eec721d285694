package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// The filter language: §4.4, on the list of §4.3.

// filterReq builds a requirement that lists the marked entries with filter
// (combined with the scope) and expects exactly the marks want.
func filterReq(id, section, name, text, filter string, want ...string) *Requirement {
	return &Requirement{
		ID: id, Source: SourceDocument, Section: section, Name: name, Text: text,
		Run: filtersCheck(markFilter{filter, want}),
	}
}

// markFilter is a filter and the marked requests it selects.
type markFilter struct {
	f    string
	want []string
}

// filtersCheck is the Run of a check that lists the marked entries with
// each filter and requires exactly the marks it selects.
func filtersCheck(filters ...markFilter) func(context.Context, *Client) error {
	return logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
		for _, tc := range filters {
			got, _, err := c.listMarked(ctx, m, "filter", tc.f)
			if err != nil {
				return err
			}
			if err := expectMarks("filter "+tc.f, got, tc.want); err != nil {
				return err
			}
		}
		return nil
	})
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
		Source:  SourceDocument,
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

// logsFilterRequirements: one check per operator and construct of §4.4, and malformed filters.
var logsFilterRequirements = []*Requirement{
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
		"Comparisons joined with && must all hold: filter `data.method = \"GET\" && data.status > 200` answers 200 "+
			"with only the refused GET.",
		`data.method = "GET" && data.status > 200`, markNoAuth),
	filterReq("LOG-FILTER-018", "§4.4 (|| and parentheses)", "filter with || in parentheses",
		"Comparisons joined with || need one to hold: filter `(data.status = 404 || data.auth = \"_superusers\")` "+
			"answers 200 with the unknown-route POST and the superuser's request.",
		`(data.status = 404 || data.auth = "_superusers")`, markSuper, markMissing),
	filterReq("LOG-FILTER-019", "§4.4 (nested parentheses)", "filter with nested groups",
		"Groups nest: filter `((data.status > 200 && data.method = 'GET') || (level = 0 && data.auth = '_superusers'))` "+
			"answers 200 with the refused GET and the superuser's request.",
		`((data.status > 200 && data.method = 'GET') || (level = 0 && data.auth = '_superusers'))`, markNoAuth, markSuper),
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
		Source:  SourceDocument,
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
		Source:  SourceDocument,
		Section: "§4.3 GET /api/logs (filter is optional)",
		Name:    "empty filter means no filter",
		Text: "GET /api/logs?filter= (empty) answers 200 like a list without filter: the same totalItems and the " +
			"same entries.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			// Other clients may be logged between two listings, so the
			// filtered listing is compared with unfiltered ones made just
			// before and after it, and only when those two agree. A full
			// page is compared above its oldest created time only, since
			// entries created in the same millisecond may straddle the
			// page's end in any order.
			const perPage = 1000
			list := func(kv ...string) (*logList, error) {
				return c.listLogs(ctx, query(append(kv, "perPage", fmt.Sprint(perPage), "sort", "-created")...))
			}
			ids := func(l *logList, above string) []string {
				out := make([]string, 0, len(l.items))
				for _, it := range l.items {
					id, _ := getString(it, "id")
					if cr, _ := getString(it, "created"); cr > above {
						out = append(out, id)
					}
				}
				slices.Sort(out)
				return out
			}
			for range 5 {
				before, err := list()
				if err != nil {
					return err
				}
				empty, err := list("filter", "")
				if err != nil {
					return err
				}
				after, err := list()
				if err != nil {
					return err
				}
				above := ""
				if n := len(before.items); n == perPage {
					above, _ = getString(before.items[n-1], "created")
				}
				beforeIDs, emptyIDs, afterIDs := ids(before, above), ids(empty, above), ids(after, above)
				if before.totalItems != after.totalItems || !slices.Equal(beforeIDs, afterIDs) {
					continue // the log changed meanwhile; look again
				}
				if empty.totalItems != before.totalItems || !slices.Equal(emptyIDs, beforeIDs) {
					return Mismatch(
						fmt.Sprintf("totalItems %d and the %s of the list without filter", before.totalItems, plural(len(beforeIDs), "entry")),
						fmt.Sprintf("totalItems %d and %s (%d of them not in that list)",
							empty.totalItems, plural(len(emptyIDs), "entry"), countMissing(emptyIDs, beforeIDs)))
				}
				return nil
			}
			return errors.New("the request log kept changing between listings; cannot compare")
		}),
	},
	{
		ID:      "LOG-FILTER-024",
		Source:  SourceDocument,
		Section: "§4.4 (wildcard %)",
		Name:    "like with explicit wildcards",
		Text: "A ~ operand containing % is used as the pattern itself: filter `message ~ \"GET /api/health%\"` " +
			"answers 200 with the entries whose message starts with it, `data.url ~ \"%k=missing\"` the one whose URL " +
			"ends with it.",
		Run: filtersCheck(
			markFilter{`message ~ "GET /api/health%"`, []string{markGuest, markSuper}},
			markFilter{`data.url ~ "%k=missing"`, []string{markMissing}},
		),
	},
	{
		ID:      "LOG-FILTER-025",
		Source:  SourceDocument,
		Section: "§4.3 GET /api/logs (filter field updated); §4.4 (>=)",
		Name:    "filter by updated",
		Text: "GET /api/logs answers 200 to a filter on updated: `updated >= \"2000-01-01 00:00:00.000Z\"` (before " +
			"the suite's entries) with all of them, `updated >= \"2999-12-31 23:59:59.999Z\"` (after them) with none.",
		Run: filtersCheck(
			markFilter{`updated >= "2000-01-01 00:00:00.000Z"`, loggedMarks},
			markFilter{`updated >= "2999-12-31 23:59:59.999Z"`, nil},
		),
	},
	filterReq("LOG-FILTER-026", "§4.4 (operands: true, false)", "filter with true and false",
		"The literals true and false are operands: filter `(true = true && data.status = 401) || "+
			"(false = true && data.status = 404)` answers 200 with exactly the refused GET /api/logs (401).",
		`(true = true && data.status = 401) || (false = true && data.status = 404)`, markNoAuth),
	filterReq("LOG-FILTER-027", "§4.4 (operands: numbers with a fraction); §2.2 (data.execTime is fractional)",
		"filter with a fractional number",
		"Numbers may have a fraction: filter `data.execTime >= 0.0 && data.execTime < 100000.5 && data.status = 404` "+
			"answers 200 with exactly the POST to an unknown path (404).",
		`data.execTime >= 0.0 && data.execTime < 100000.5 && data.status = 404`, markMissing),
	malformedReq("LOG-FILTER-030", "/api/logs", "status===", "an operator that does not exist"),
	malformedReq("LOG-FILTER-031", "/api/logs", "(level=0", "an unclosed parenthesis"),
	malformedReq("LOG-FILTER-032", "/api/logs", "level=0 ||", "a dangling ||"),
	malformedReq("LOG-FILTER-033", "/api/logs", "// only a comment", "no expression at all"),
	malformedReq("LOG-FILTER-034", "/api/logs", "cfunknownfield = 1", "a field logs do not have"),
	{
		ID:      "LOG-FILTER-035",
		Source:  SourceStrongbox,
		Section: "§4.3 GET /api/logs and GET /api/logs/stats, Errors; §7 row 4; strongbox promise: a malformed filter says where it is wrong",
		Name:    "a malformed filter's position in data.filter",
		Text: "GET /api/logs and GET /api/logs/stats with filter `level > ` (nothing after the operator) answer 400 \"" +
			msgInvalidFilter + "\" (the document's message, exactly) with data.filter.code validation_invalid_filter, " +
			"a data.filter.message that is not empty and data.filter.params.offset 8 (the byte where an operand was " +
			"expected); with `level = 0 && cfunknownfield = 1` the offset is 13 (the unknown field's first byte).",
		Run: func(ctx context.Context, c *Client) error {
			for _, path := range []string{"/api/logs", "/api/logs/stats"} {
				for _, tc := range []struct {
					filter string
					offset float64
				}{{"level > ", 8}, {"level = 0 && cfunknownfield = 1", 13}} {
					if err := filterPosition(ctx, c, path, tc.filter, tc.offset); err != nil {
						return err
					}
				}
			}
			return nil
		},
	},
}

// filterPosition requires GET path with filter to answer §7's message
// with data.filter {code validation_invalid_filter, a message, params
// {offset}}.
func filterPosition(ctx context.Context, c *Client, path, filter string, offset float64) error {
	r, err := c.get(ctx, withQuery(path, query("filter", filter)), c.su)
	if err != nil {
		return err
	}
	env, err := expectError(r, http.StatusBadRequest, msgInvalidFilter)
	if err != nil {
		return err
	}
	if env.message != msgInvalidFilter {
		return Mismatch(fmt.Sprintf("message %q", msgInvalidFilter), r.String())
	}
	fe, _ := getObject(env.data, "filter")
	code, _ := getString(fe, "code")
	msg, _ := getString(fe, "message")
	params, _ := getObject(fe, "params")
	at, ok := getNumber(params, "offset")
	if code != "validation_invalid_filter" || msg == "" || !ok || at != offset {
		return Mismatch(fmt.Sprintf("GET %s filter %q: data.filter with code validation_invalid_filter, a message and params.offset %v",
			path, filter, offset), r.String())
	}
	return nil
}

// countMissing counts the elements of got (sorted) that want (sorted) lacks.
func countMissing(got, want []string) int {
	n := 0
	for _, g := range got {
		if _, ok := slices.BinarySearch(want, g); !ok {
			n++
		}
	}
	return n
}
