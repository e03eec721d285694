package conformance

import (
	"context"
	"fmt"
	"maps"
	"slices"
)

// What gets logged and how an entry looks (§2.2).

// logsEntryRequirements: the shape of an entry and which requests are logged (§2.2).
var logsEntryRequirements = []*Requirement{
	{
		ID:      "LOG-ENTRY-001",
		Source:  SourceDocument,
		Section: "§2.2; §4.3 GET /api/logs",
		Name:    "request log entry shape",
		Text: "A guest GET /api/health?cf=… shows up in GET /api/logs (within 10 s) as an entry with exactly " +
			"the keys id (a non-empty string), created (YYYY-MM-DD HH:MM:SS.mmmZ), data, message " +
			"(\"GET \" + the URL) and level 0; data holds type \"request\", method \"GET\", url (path and " +
			"query as sent), status 200, auth \"\", execTime (a number ≥ 0), referer and userAgent as sent, " +
			"and remoteIP and userIP strings.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			e := m.entries[markGuest]
			if !sameKeys(mapKeys(e), "id", "created", "data", "message", "level") {
				return Mismatch("exactly the keys id, created, data, message, level", fmt.Sprint(mapKeys(e)))
			}
			// §2.2: an identifier; PocketBase's are 15 characters [a-z0-9].
			if id, _ := getString(e, "id"); id == "" || c.strict() && !reLogID.MatchString(id) {
				return Mismatch("id of 15 characters [a-z0-9]", fmt.Sprintf("%q", id))
			}
			if cr, _ := getString(e, "created"); !reLogCreated.MatchString(cr) {
				return Mismatch("created as YYYY-MM-DD HH:MM:SS.mmmZ", fmt.Sprint(e["created"]))
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
				return Mismatch("data.execTime to be a number ≥ 0", fmt.Sprint(data["execTime"]))
			}
			for _, k := range []string{"remoteIP", "userIP"} {
				if _, ok := getString(data, k); !ok {
					return Mismatch(fmt.Sprintf("data.%s to be a string", k), fmt.Sprint(data[k]))
				}
			}
			return nil
		}),
	},
	{
		ID:      "LOG-ENTRY-002",
		Source:  SourceDocument,
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
		Source:  SourcePocketBase,
		Section: "§2.2; §4.3 (failed requests are logged); PocketBase v0.31.0 (the document is silent on levels of failed requests)",
		Name:    "refused request logged as an error",
		Text: "GET /api/logs?cf=… without a token (answered 401) is logged with level 8 (PocketBase's " +
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
		Source:  SourcePocketBase,
		Section: "§2.2; PocketBase v0.31.0 (the document is silent on levels of failed requests)",
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
		Source:  SourcePocketBase,
		Section: "§4.3 (PocketBase v0.31.0: successful log reads are not logged)",
		Name:    "successful log reads are not logged",
		Text: "A GET /api/logs answered 200 (made between two requests that were logged) leaves no entry: " +
			"filtering for its URL finds nothing.",
		Run: logsCheck(func(ctx context.Context, c *Client, m *logMarks) error {
			list, err := c.listLogs(ctx, query("filter", m.scope+` && data.url ~ "k=`+markSilent+`"`))
			if err != nil {
				return err
			}
			if len(list.items) != 0 || list.totalItems != 0 {
				return Mismatch(fmt.Sprintf("no entry for the successful GET %s", m.urls[markSilent]), plural(len(list.items), "entry"))
			}
			return nil
		}),
	},
}

// expectEntry checks message and level of a log entry.
func expectEntry(e map[string]any, message string, level float64) error {
	if got, _ := getString(e, "message"); got != message {
		return Mismatch(fmt.Sprintf("message %q", message), fmt.Sprint(e["message"]))
	}
	if got, ok := getNumber(e, "level"); !ok || got != level {
		return Mismatch(fmt.Sprintf("level %v", level), fmt.Sprint(e["level"]))
	}
	if _, ok := getObject(e, "data"); !ok {
		return Mismatch("data to be an object", fmt.Sprint(e["data"]))
	}
	return nil
}

// expectData checks attributes of a log entry's data.
func expectData(data map[string]any, want map[string]any) error {
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got, ok := data[k]; !ok || got != want[k] {
			return Mismatch(fmt.Sprintf("data.%s = %s", k, jsonText(want[k])), fmt.Sprintf("%s (data %s)", jsonText(data[k]), jsonText(data)))
		}
	}
	return nil
}
