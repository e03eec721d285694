package conformance

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// Who may read the request logs: §4.3 Errors, §5.10 and §7 rows 6 and 8.

// logsAuthReq builds a 401 or 403 requirement for one logs endpoint. asUser
// selects a regular user's token (403) instead of no token (401).
func logsAuthReq(id, endpoint string, asUser bool) *Requirement {
	name, status, msg, row, who := endpoint+" without a token", 401, msgNeedsToken, "§7 row 6", "without Authorization"
	if asUser {
		name, status, msg, row, who = endpoint+" as a regular user", 403, msgNotAllowed, "§7 row 8", "with a regular user's token"
	}
	return &Requirement{
		ID:      id,
		Source:  SourceDocument,
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

// logsAuthRequirements: permissions (§4.3, §5.10, §7).
var logsAuthRequirements = []*Requirement{
	logsAuthReq("LOG-AUTH-001", "GET /api/logs", false),
	logsAuthReq("LOG-AUTH-002", "GET /api/logs", true),
	logsAuthReq("LOG-AUTH-003", "GET /api/logs/{id}", false),
	logsAuthReq("LOG-AUTH-004", "GET /api/logs/{id}", true),
	logsAuthReq("LOG-AUTH-005", "GET /api/logs/stats", false),
	logsAuthReq("LOG-AUTH-006", "GET /api/logs/stats", true),
	{
		ID:      "LOG-AUTH-007",
		Source:  SourceDocument,
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
		Source:  SourcePocketBase,
		Section: "§4.3 GET /api/logs, Errors; §7 rows 4 and 6; PocketBase v0.31.0 (the document is silent on which error wins)",
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
}
