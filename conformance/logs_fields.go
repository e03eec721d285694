package conformance

import (
	"context"
	"fmt"
	"reflect"
	"strings"
)

// Field selection on the list: §4.1.

// logsFieldsRequirements: fields and :excerpt on the list (§4.1).
var logsFieldsRequirements = []*Requirement{
	{
		ID:      "LOG-FIELDS-001",
		Source:  SourceDocument,
		Section: "§4.1; §4.3 GET /api/logs",
		Name:    "list with fields",
		Text: "GET /api/logs?fields=id,message answers 200 with every item holding only id and message, " +
			"and the envelope keys page, perPage, totalItems (and totalPages, if the server sends it) kept.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			q := query("filter", m.scope, "fields", "id,message", "sort", "created")
			list, err := c.listLogs(ctx, q)
			if err != nil {
				return err
			}
			if err := c.expectListKeys(list.keys); err != nil {
				return fmt.Errorf("the full envelope: %w", err)
			}
			if list.totalItems != 4 {
				return Mismatch("totalItems 4", fmt.Sprint(list.totalItems))
			}
			return expectEachMark(list.items, func(item map[string]any, k string) error {
				return expectItem(item, map[string]any{"id": m.id(k), "message": m.entries[k]["message"]})
			})
		}),
	},
	excerptReq("LOG-FIELDS-002", "message:excerpt(5,true)", 5, true),
	excerptReq("LOG-FIELDS-003", "message:excerpt(5)", 5, false),
	{
		ID:      "LOG-FIELDS-004",
		Source:  SourceDocument,
		Section: "§4.1 (nested selection by dotted path)",
		Name:    "list with a nested field",
		Text:    "GET /api/logs?fields=data.status,id answers 200 with items holding only id and data, data holding only status.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			list, err := c.listLogs(ctx, query("filter", m.scope, "fields", "data.status,id", "sort", "created"))
			if err != nil {
				return err
			}
			return expectEachMark(list.items, func(item map[string]any, k string) error {
				data, _ := getObject(m.entries[k], "data")
				return expectItem(item, map[string]any{"id": m.id(k), "data": map[string]any{"status": data["status"]}})
			})
		}),
	},
	logsFieldsStar,
}

// logsFieldsStar: * selects every key at its depth (§4.1).
var logsFieldsStar = &Requirement{
	ID:      "LOG-FIELDS-005",
	Source:  SourceDocument,
	Section: "§4.1 (* selects all keys at its depth)",
	Name:    "list with * in fields",
	Text: "GET /api/logs?fields=* answers 200 with every item whole (as listed without fields), and " +
		"fields=id,data.* with items holding only id and data, data whole.",
	Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
		for _, tc := range []struct {
			spec string
			want func(k string) map[string]any
		}{
			{"*", func(k string) map[string]any { return m.entries[k] }},
			{"id,data.*", func(k string) map[string]any {
				return map[string]any{"id": m.id(k), "data": m.entries[k]["data"]}
			}},
		} {
			list, err := c.listLogs(ctx, query("filter", m.scope, "fields", tc.spec, "sort", "created"))
			if err != nil {
				return err
			}
			if len(list.items) != 4 {
				return fmt.Errorf("fields=%s: %w", tc.spec, Mismatch("4 items", fmt.Sprint(len(list.items))))
			}
			for i, k := range loggedMarks {
				if want := tc.want(k); !reflect.DeepEqual(list.items[i], want) {
					return fmt.Errorf("fields=%s, item %d: %w", tc.spec, i, Mismatch(jsonText(want), jsonText(list.items[i])))
				}
			}
		}
		return nil
	}),
}

// expectEachMark requires items to be the four marked entries in request
// order (loggedMarks), each accepted by check.
func expectEachMark(items []map[string]any, check func(item map[string]any, mark string) error) error {
	if len(items) != 4 {
		return Mismatch("4 items", fmt.Sprint(len(items)))
	}
	for i, k := range loggedMarks {
		if err := check(items[i], k); err != nil {
			return fmt.Errorf("item %d: %w", i, err)
		}
	}
	return nil
}

// expectItem requires a listed item to be want, key for key.
func expectItem(item, want map[string]any) error {
	if !reflect.DeepEqual(item, want) {
		return Mismatch(jsonText(want), jsonText(item))
	}
	return nil
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
		Source:  SourceDocument,
		Section: "§4.1 (:excerpt); §4.3 GET /api/logs",
		Name:    "list with " + spec,
		Text: "GET /api/logs?fields=" + spec + " answers 200 with items holding only message, cut to at most its first " +
			fmt.Sprint(max) + " characters" + ellipsisNote(ellipsis) + " (PocketBase: trimmed" + suffix + ", " + example + ").",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			list, err := c.listLogs(ctx, query("filter", m.scope, "fields", spec, "sort", "created"))
			if err != nil {
				return err
			}
			return expectEachMark(list.items, func(item map[string]any, k string) error {
				msg, _ := getString(m.entries[k], "message")
				return c.expectExcerpt(item, msg, max, ellipsis)
			})
		}),
	}
}

// ellipsisNote says what the document's reading allows at the end of a
// cut excerpt.
func ellipsisNote(ellipsis bool) string {
	if ellipsis {
		return ", then an ellipsis (\"...\" or \"…\")"
	}
	return " and no ellipsis"
}

// expectExcerpt requires item to be {"message": <the :excerpt(max,
// ellipsis) of full>}. §4.1 asks for "a short plain-text version": under
// the document's reading a cut of at most max characters of the start of
// full (an ellipsis, "..." or "…", after it when asked for and the text was
// cut, none otherwise); under PocketBase's exactly its form (excerpt).
func (c *Client) expectExcerpt(item map[string]any, full string, max int, ellipsis bool) error {
	want := map[string]any{"message": excerpt(full, max, ellipsis)}
	if c.strict() || reflect.DeepEqual(item, want) {
		if !reflect.DeepEqual(item, want) {
			return Mismatch(jsonText(want), jsonText(item))
		}
		return nil
	}
	got, ok := item["message"].(string)
	if !ok || len(item) != 1 {
		return Mismatch(`{"message": <a string>}`, jsonText(item))
	}
	cut := got
	if ellipsis && len([]rune(full)) > max {
		var had bool
		if cut, had = strings.CutSuffix(got, "..."); !had {
			cut, had = strings.CutSuffix(got, "…")
		}
		if !had {
			return Mismatch(fmt.Sprintf("a cut of %q ending in an ellipsis", full), jsonText(item))
		}
	}
	if cut == "" || len([]rune(cut)) > max || !strings.HasPrefix(full, cut) {
		return Mismatch(fmt.Sprintf("the first %d characters at most of %q%s", max, full, ellipsisNote(ellipsis)), jsonText(item))
	}
	return nil
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
