package conformance

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
)

// Sorting the list: §4.3 GET /api/logs, sort.

// logsSortRequirements: sort (§4.3).
var logsSortRequirements = []*Requirement{
	{
		ID:      "LOG-SORT-001",
		Source:  SourceDocument,
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
		Source:  SourceDocument,
		Section: "§4.3 GET /api/logs (sort, prefix - for descending)",
		Name:    "sort by created descending",
		Text:    "GET /api/logs with sort=-created answers 200 listing the entries newest first.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			got, _, err := c.listMarked(ctx, m, "sort", "-created")
			if err != nil {
				return err
			}
			return expectOrder("sort=-created", got, marksNewestFirst())
		}),
	},
	{
		ID:      "LOG-SORT-003",
		Source:  SourcePocketBase,
		Section: "§4.3 GET /api/logs (supported sort fields); PocketBase v0.31.0 (the document is silent on an unknown sort field)",
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
		Source:  SourceDocument,
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
		Source:  SourceDocument,
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
				return fmt.Errorf("sort=-data.status: %w", Mismatch(fmt.Sprintf("%s (404) then %s (401) then the two 200s", markMissing, markNoAuth), fmt.Sprint(got)))
			}
			return nil
		}),
	},
	{
		ID:      "LOG-SORT-006",
		Source:  SourceDocument,
		Section: "§4.3 GET /api/logs (comma-separated sort attributes)",
		Name:    "sort by several attributes",
		Text: "GET /api/logs with sort=-level,created answers 200 listing the entries by level descending, " +
			"entries of one level oldest first (the document fixes level 0 for ordinary requests only, so the " +
			"levels are read from the entries themselves; PocketBase logs the refused ones at 8).",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			got, _, err := c.listMarked(ctx, m, "sort", "-level,created")
			if err != nil {
				return err
			}
			want := slices.Clone(loggedMarks) // oldest first
			level := func(k string) float64 { l, _ := getNumber(m.entries[k], "level"); return l }
			slices.SortStableFunc(want, func(a, b string) int { return cmp.Compare(level(b), level(a)) })
			return expectOrder("sort=-level,created", got, want)
		}),
	},
	{
		ID:      "LOG-SORT-007",
		Source:  SourceDocument,
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
	{
		ID:      "LOG-SORT-008",
		Source:  SourceDocument,
		Section: "§4.3 GET /api/logs (sort by rowid)",
		Name:    "sort by rowid",
		Text: "GET /api/logs with sort=rowid answers 200 listing the entries in the order they were logged, and " +
			"sort=-rowid in the reverse order.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			got, _, err := c.listMarked(ctx, m, "sort", "rowid")
			if err != nil {
				return err
			}
			if err := expectOrder("sort=rowid", got, loggedMarks); err != nil {
				return err
			}
			got, _, err = c.listMarked(ctx, m, "sort", "-rowid")
			if err != nil {
				return err
			}
			return expectOrder("sort=-rowid", got, marksNewestFirst())
		}),
	},
	{
		ID:      "LOG-SORT-009",
		Source:  SourceDocument,
		Section: "§4.3 GET /api/logs (sort by updated; updated is not part of the entry)",
		Name:    "sort by updated",
		Text: "GET /api/logs with sort=updated, and with sort=-updated, answers 200 listing the same matching " +
			"entries (the document does not say what updated holds, so not their order).",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			for _, s := range []string{"updated", "-updated"} {
				got, _, err := c.listMarked(ctx, m, "sort", s)
				if err != nil {
					return err
				}
				if err := expectMarks("sort="+s, got, loggedMarks); err != nil {
					return err
				}
			}
			return nil
		}),
	},
	{
		ID:      "LOG-SORT-010",
		Source:  SourceDocument,
		Section: "§4.3 GET /api/logs (sort by message)",
		Name:    "sort by message",
		Text: "GET /api/logs with sort=message answers 200 listing the entries by message ascending (byte order), " +
			"and sort=-message descending.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			message := func(k string) string { s, _ := m.entries[k]["message"].(string); return s }
			want := make([]string, len(loggedMarks))
			for i, k := range loggedMarks {
				want[i] = message(k)
			}
			slices.Sort(want)
			for _, s := range []string{"message", "-message"} {
				got, _, err := c.listMarked(ctx, m, "sort", s)
				if err != nil {
					return err
				}
				msgs := make([]string, len(got))
				for i, k := range got {
					msgs[i] = message(k)
				}
				if s == "-message" {
					slices.Reverse(want)
				}
				if !slices.Equal(msgs, want) {
					return fmt.Errorf("sort=%s: %w", s, Mismatch(strings.Join(want, " | "), strings.Join(msgs, " | ")))
				}
			}
			return nil
		}),
	},
}

// marksNewestFirst is loggedMarks newest first.
func marksNewestFirst() []string {
	want := slices.Clone(loggedMarks)
	slices.Reverse(want)
	return want
}
