package conformance

import (
	"context"
	"fmt"
	"net/http"
)

// The list envelope and paging: §2.4, §4.3 GET /api/logs, §8.

// logsListRequirements: the list envelope and paging (§2.4, §4.3, §8).
var logsListRequirements = []*Requirement{
	{
		ID:      "LOG-LIST-001",
		Source:  SourceDocument,
		Section: "§2.4; §4.3 GET /api/logs",
		Name:    "list envelope",
		Text: "GET /api/logs answers 200 with an object of exactly the keys page, perPage, totalItems " +
			"(integers) and items (an array of entries, no longer than perPage), and perhaps totalPages (an integer).",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			list, err := c.listLogs(ctx, query("perPage", "2"))
			if err != nil {
				return err
			}
			if err := c.expectListKeys(list.keys); err != nil {
				return err
			}
			if len(list.items) > 2 || list.perPage != 2 {
				return Mismatch("perPage 2 and at most 2 items", fmt.Sprintf("perPage %v and %s", list.perPage, plural(len(list.items), "item")))
			}
			if list.totalItems < len(loggedMarks) {
				return Mismatch(fmt.Sprintf("totalItems ≥ %d (the suite's own entries)", len(loggedMarks)), fmt.Sprint(list.totalItems))
			}
			return nil
		}),
	},
	{
		ID:      "LOG-LIST-002",
		Source:  SourceDocument,
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
		Source:  SourcePocketBase,
		Section: "§4.3 GET /api/logs (maximum perPage: PocketBase v0.31.0)",
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
		Source:  SourcePocketBase,
		Section: "§4.3 GET /api/logs; §8; PocketBase v0.31.0 (the document is silent on perPage below 1)",
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
		Source:  SourcePocketBase,
		Section: "§4.3 GET /api/logs; §8; PocketBase v0.31.0 (the document is silent on page below 1)",
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
		Source:  SourcePocketBase,
		Section: "§4.3 GET /api/logs (page is a number); PocketBase v0.31.0 (the document is silent on a page that is not a number)",
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
		Source:  SourcePocketBase,
		Section: "§4.3 GET /api/logs (perPage is a number); PocketBase v0.31.0 (the document is silent on a perPage that is not a number)",
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
		Source:  SourcePocketBase,
		Section: "§4.3 GET /api/logs (skipTotal: PocketBase v0.31.0)",
		Name:    "skipTotal",
		Text: "GET /api/logs?skipTotal=1 answers 200 with totalItems -1 and totalPages -1, and still " +
			"returns the matching items.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			got, list, err := c.listMarked(ctx, m, "skipTotal", "1")
			if err != nil {
				return err
			}
			if list.totalItems != -1 || list.totalPages != -1 {
				return Mismatch("totalItems -1 and totalPages -1", fmt.Sprintf("%v and %v", list.totalItems, list.totalPages))
			}
			return expectMarks("skipTotal=1", got, loggedMarks)
		}),
	},
	{
		ID:      "LOG-LIST-009",
		Source:  SourceDocument,
		Section: "§2.4; §4.3 GET /api/logs (page, perPage)",
		Name:    "pages split the matches",
		Text: "With a filter matching 4 entries and perPage=3, page 1 holds 3 items with totalItems 4, " +
			"page 2 holds the 4th, and page 3 answers 200 with no items and page 3.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			var all []string
			for page, want := range []int{3, 1, 0} {
				got, list, err := c.listMarked(ctx, m, "perPage", "3", "page", fmt.Sprint(page+1), "sort", "created")
				if err != nil {
					return err
				}
				if len(got) != want || list.page != page+1 || list.perPage != 3 ||
					list.totalItems != 4 || (c.strict() || list.hasTotalPages) && list.totalPages != 2 {
					return fmt.Errorf("page %d: %w", page+1, Mismatch(
						fmt.Sprintf("%s, page %d, perPage 3, totalItems 4, totalPages 2", plural(want, "item"), page+1),
						fmt.Sprintf("%s, page %v, perPage %v, totalItems %v, totalPages %v",
							plural(len(got), "item"), list.page, list.perPage, list.totalItems, list.totalPages)))
				}
				all = append(all, got...)
			}
			return expectOrder("pages 1 to 3 sorted by created", all, loggedMarks)
		}),
	},
	{
		ID:      "LOG-LIST-010",
		Source:  SourcePocketBase,
		Section: "§4.3 GET /api/logs (default order: PocketBase v0.31.0)",
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
}

// expectPaging checks page and perPage of a list and that it holds as many
// items as it should.
func expectPaging(l *logList, page, perPage int) error {
	if l.page != page || l.perPage != perPage {
		return Mismatch(fmt.Sprintf("page %d and perPage %d", page, perPage), fmt.Sprintf("page %d and perPage %d", l.page, l.perPage))
	}
	want := max(0, min(perPage, l.totalItems-(page-1)*perPage))
	if len(l.items) != want {
		return Mismatch(fmt.Sprintf("%s (totalItems %d)", plural(want, "item"), l.totalItems), plural(len(l.items), "item"))
	}
	if pages := (l.totalItems + perPage - 1) / perPage; l.totalItems >= 0 && l.hasTotalPages && l.totalPages != pages {
		return Mismatch(fmt.Sprintf("totalPages ceil(%d/%d) = %d", l.totalItems, perPage, pages), fmt.Sprint(l.totalPages))
	}
	return nil
}
