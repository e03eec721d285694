package conformance

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
)

// Viewing one entry: §4.3 GET /api/logs/{id}.

// logsViewRequirements: GET /api/logs/{id} (§4.3, §4.1).
var logsViewRequirements = []*Requirement{
	{
		ID:      "LOG-VIEW-001",
		Source:  SourceDocument,
		Section: "§4.3 GET /api/logs/{id}; §2.2",
		Name:    "view one entry",
		Text:    "GET /api/logs/{id} with the id of a listed entry answers 200 with that same entry.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			for _, k := range []string{markGuest, markNoAuth} {
				_, got, err := c.getOK(ctx, "/api/logs/"+seg(m.id(k)), c.su)
				if err != nil {
					return err
				}
				if !reflect.DeepEqual(got, m.entries[k]) {
					return Mismatch(fmt.Sprintf("the entry as listed %s", jsonText(m.entries[k])), jsonText(got))
				}
			}
			return nil
		}),
	},
	{
		ID:      "LOG-VIEW-002",
		Source:  SourceDocument,
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
		Source:  SourceDocument,
		Section: "§4.1; §4.3 GET /api/logs/{id}",
		Name:    "view with fields",
		Text:    "GET /api/logs/{id}?fields=id,message answers 200 with an object holding only id and message.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			_, got, err := c.getOK(ctx, withQuery("/api/logs/"+seg(m.id(markGuest)), query("fields", "id,message")), c.su)
			if err != nil {
				return err
			}
			want := map[string]any{"id": m.id(markGuest), "message": "GET " + m.urls[markGuest]}
			if !reflect.DeepEqual(got, want) {
				return Mismatch(jsonText(want), jsonText(got))
			}
			return nil
		}),
	},
	{
		ID:      "LOG-VIEW-004",
		Source:  SourceDocument,
		Section: "§4.1 (:excerpt); §4.3 GET /api/logs/{id}",
		Name:    "view with an excerpt",
		Text: "GET /api/logs/{id}?fields=message:excerpt(5,true) of a GET /api/health entry answers 200 " +
			"{\"message\": <at most its first 5 characters, then an ellipsis>} (PocketBase: \"GET /...\").",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			_, got, err := c.getOK(ctx, withQuery("/api/logs/"+seg(m.id(markGuest)), query("fields", "message:excerpt(5,true)")), c.su)
			if err != nil {
				return err
			}
			msg, _ := getString(m.entries[markGuest], "message")
			if err := c.expectExcerpt(got, msg, 5, true); err != nil {
				return err
			}
			return nil
		}),
	},
}
