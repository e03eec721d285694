package conformance

import (
	"context"
	"fmt"
	"net/http"
	"slices"
)

// Messages the interface document (§7) and, where it is silent,
// PocketBase v0.31.0 name for the error cases checked by this suite.
const (
	msgNotFound        = "The requested resource wasn't found."
	msgNeedsToken      = "The request requires valid record authorization token."
	msgNotAllowed      = "The authorized record is not allowed to perform this action."
	msgInvalidFilter   = "Something went wrong while processing your request. Invalid filter."
	msgGenericBad      = "Something went wrong while processing your request."
	msgFailedAuth      = "Failed to authenticate."
	msgNoCollection    = "Missing or invalid collection context."
	msgNoAuthColl      = "Missing or invalid auth collection context."
	msgPasswordOff     = "The collection is not configured to allow password authentication."
	msgValidation      = "An error occurred while validating the submitted data."
	msgSuperusersOnly  = "The request requires auth record from _superusers collection."
	codeRequired       = "validation_required"
	codeMinGreaterThan = "validation_min_greater_equal_than_required"
)

// documentMessages are the messages §7 of the interface document names.
// Another message is PocketBase's choice where the document leaves it open:
// only the checks of pocketbase and strongbox requirements demand it.
var documentMessages = map[string]bool{
	msgBackupsLoad:    true, // row 1
	msgBackupBusy:     true, // row 2
	msgGenericBad:     true, // row 3
	msgInvalidFilter:  true, // row 4
	msgFilesystemInit: true, // row 5
	msgNeedsToken:     true, // row 6
	msgOnlySuperusers: true, // row 7
	msgNotAllowed:     true, // row 8
	msgNotFound:       true, // row 9
}

var errorRequirements = []*Requirement{
	{
		ID:      "ERR-001",
		Source:  SourceDocument,
		Section: "§2.5; §7",
		Name:    "error envelope shape",
		Text: "Every error response is served as Content-Type application/json and is a JSON object " +
			"with exactly the keys data, message and status; data is an object, message a " +
			"string and status the HTTP status code (checked on a 400, 401, 403 and 404).",
		Run: checkEnvelopeShape,
	},
	{
		ID:      "ERR-002",
		Source:  SourcePocketBase,
		Section: "§2.5; §7; PocketBase v0.31.0 (the document is silent on unknown routes)",
		Name:    "unknown route (POST) is a JSON 404",
		Text:    "A POST to a path no route serves answers 404 \"" + msgNotFound + "\" in the error envelope.",
		Run: func(ctx context.Context, c *Client) error {
			r, err := c.post(ctx, "/api/cf-"+newNonce(8)+"/nowhere", "", map[string]any{})
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusNotFound, msgNotFound)
			return err
		},
	},
	{
		ID:      "ERR-003",
		Source:  SourcePocketBase,
		Section: "§2.5; §4.3; PocketBase v0.31.0 (the document is silent on methods a path does not serve)",
		Name:    "wrong method on a known path is a JSON 404",
		Text: "A method a known path does not serve (PUT or DELETE /api/logs, even as superuser) answers " +
			"404 \"" + msgNotFound + "\" in the error envelope, never a plain-text 405.",
		Run: func(ctx context.Context, c *Client) error {
			for _, m := range []string{http.MethodPut, http.MethodDelete} {
				r, err := c.do(ctx, m, "/api/logs", c.su, nil)
				if err != nil {
					return err
				}
				if _, err := expectError(r, http.StatusNotFound, msgNotFound); err != nil {
					return err
				}
			}
			return nil
		},
	},
	{
		ID:      "ERR-004",
		Source:  SourcePocketBase,
		Section: "§2.5; PocketBase v0.31.0 (the document is silent on unknown routes)",
		Name:    "unknown route (GET) is a JSON 404",
		Text: "A GET of a path no route serves answers 404 in the error envelope (the message is not " +
			"fixed: PocketBase's static file route answers it).",
		Run: func(ctx context.Context, c *Client) error {
			r, err := c.get(ctx, "/api/cf-"+newNonce(8)+"/nowhere", "")
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusNotFound, "")
			return err
		},
	},
}

// checkEnvelopeShape collects error responses of several kinds and checks
// the envelope's wire form on each: Content-Type and, under PocketBase's
// reading (ERR-501), key order.
func checkEnvelopeShape(ctx context.Context, c *Client) error {
	_, userToken, err := c.newUserToken(ctx)
	if err != nil {
		return err
	}
	probes := []struct {
		method, path, auth string
		body               any
		status             int
	}{
		{http.MethodPost, "/api/collections/users/auth-with-password", "",
			map[string]string{"identity": "cf-" + newNonce(10) + "@example.com", "password": "wrong-password"}, 400},
		{http.MethodGet, "/api/logs", "", nil, 401},
		{http.MethodGet, "/api/logs", userToken, nil, 403},
		{http.MethodGet, "/api/logs/cf" + newNonce(13), c.su, nil, 404},
		{http.MethodPost, "/api/cf-" + newNonce(8), "", nil, 404},
	}
	for _, p := range probes {
		r, err := c.do(ctx, p.method, p.path, p.auth, p.body)
		if err != nil {
			return err
		}
		env, err := expectError(r, p.status, "")
		if err != nil {
			return err
		}
		if c.strict() && !slices.Equal(env.keys, []string{"data", "message", "status"}) {
			return Mismatch("keys in the order data, message, status", fmt.Sprintf("%v in %s", env.keys, r))
		}
		if !isJSONContentType(r) {
			return Mismatch("Content-Type application/json", fmt.Sprintf("%q for %s", r.header.Get("Content-Type"), r))
		}
	}
	return nil
}

// refusal is how an endpoint that needs a superuser refuses another
// caller: without a token 401 msgNeedsToken (§7 row 6), with a regular
// user's token 403 msgNotAllowed (§7 row 8).
type refusal struct {
	asUser   bool
	status   int
	msg, row string
	who      string // the caller, in words
}

// refusalOf is the refusal of a caller with a regular user's token
// (asUser) or without a token.
func refusalOf(asUser bool) refusal {
	if asUser {
		return refusal{asUser: true, status: http.StatusForbidden, msg: msgNotAllowed, row: "§7 row 8", who: "with a regular user's token"}
	}
	return refusal{status: http.StatusUnauthorized, msg: msgNeedsToken, row: "§7 row 6", who: "without Authorization"}
}

// name is the name of the requirement that endpoint refuses the caller.
func (f refusal) name(endpoint string) string {
	if f.asUser {
		return endpoint + " as a regular user"
	}
	return endpoint + " without a token"
}

// token returns the Authorization the refused caller sends: a new regular
// user's token, or none.
func (f refusal) token(ctx context.Context, c *Client) (string, error) {
	if !f.asUser {
		return "", nil
	}
	_, tok, err := c.newUserToken(ctx)
	return tok, err
}
