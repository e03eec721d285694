package conformance

import (
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"
)

var authTokenRequirements = []*Requirement{
	// ---- auth-refresh (§4.5, §5.8) ----
	{
		ID:      "AUTH-REFRESH-001",
		Source:  SourceDocument,
		Section: "§4.5 auth-refresh; §5.8",
		Name:    "refresh with a valid token",
		Text: "auth-refresh on users with a valid user token in Authorization answers 200 with a " +
			"non-empty token and the same user's record.",
		Run: withUserToken(func(ctx context.Context, c *Client, u *user, tok string) error {
			return expectRefreshOK(ctx, c, "users", tok, u.id)
		}),
	},
	{
		ID:      "AUTH-REFRESH-002",
		Source:  SourcePocketBase,
		Section: "§4.5 auth-refresh; §5.1; PocketBase v0.31.0 (the document is silent on the Bearer prefix)",
		Name:    "Bearer prefix accepted",
		Text: "The token is also accepted as \"Bearer <token>\": auth-refresh answers 200 with the " +
			"user's record.",
		Run: withUserToken(func(ctx context.Context, c *Client, u *user, tok string) error {
			return expectRefreshOK(ctx, c, "users", "Bearer "+tok, u.id)
		}),
	},
	{
		ID:      "AUTH-REFRESH-003",
		Source:  SourceDocument,
		Section: "§4.5 auth-refresh; §5 (401); §7 row 6",
		Name:    "refresh without a token",
		Text:    "auth-refresh without an Authorization header answers 401 \"" + msgNeedsToken + "\".",
		Run: func(ctx context.Context, c *Client) error {
			return expectRefreshRejected(ctx, c, "users", "")
		},
	},
	{
		ID:      "AUTH-REFRESH-004",
		Source:  SourceDocument,
		Section: "§4.5 auth-refresh; §5 (401); §7 row 6",
		Name:    "refresh with a garbage token",
		Text: "auth-refresh with a value that is not a valid token (\"invalid.token.value\", and a " +
			"random string) answers 401 \"" + msgNeedsToken + "\".",
		Run: func(ctx context.Context, c *Client) error {
			for _, tok := range []string{"invalid.token.value", "cf" + newNonce(30)} {
				if err := expectRefreshRejected(ctx, c, "users", tok); err != nil {
					return err
				}
			}
			return nil
		},
	},
	{
		ID:      "AUTH-REFRESH-005",
		Source:  SourcePocketBase,
		Section: "§4.5 auth-refresh; PocketBase v0.31.0 (the document is silent on a token of another collection)",
		Name:    "token of another collection",
		Text: "A superuser token on users/auth-refresh answers 403 \"" + msgSuperusersOnly + "\" (the " +
			"message names the token's collection).",
		Run: func(ctx context.Context, c *Client) error {
			r, err := c.post(ctx, "/api/collections/users/auth-refresh", c.su, nil)
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusForbidden, msgSuperusersOnly)
			return err
		},
	},
	{
		ID:      "AUTH-REFRESH-006",
		Source:  SourcePocketBase,
		Section: "§4.5 auth-refresh; §5.9 (impersonation tokens); PocketBase v0.31.0 (the document is silent on refresh of a non-refreshable token)",
		Name:    "non-refreshable token comes back unchanged",
		Text: "auth-refresh with an impersonation token (refreshable false) answers 200 with exactly " +
			"the same token string and the impersonated record.",
		Run: withUser(func(ctx context.Context, c *Client, u *user) error {
			imp, err := c.impersonate(ctx, "users", u.id, nil)
			if err != nil {
				return err
			}
			r, err := c.post(ctx, "/api/collections/users/auth-refresh", imp.token, nil)
			if err != nil {
				return err
			}
			res, err := parseAuthResult(r)
			if err != nil {
				return err
			}
			if res.token != imp.token {
				return Mismatch("the same impersonation token back", "a different one")
			}
			if err := expectRecordID(res, u.id); err != nil {
				return err
			}
			return nil
		}),
	},
	{
		ID:      "AUTH-REFRESH-007",
		Source:  SourcePocketBase,
		Section: "§4.5 auth-refresh; PocketBase v0.31.0 (the document is silent on unknown collection)",
		Name:    "refresh on an unknown collection",
		Text: "auth-refresh on a collection that does not exist, with a valid user token, answers 404 \"" +
			msgNoCollection + "\".",
		Run: withUserToken(func(ctx context.Context, c *Client, _ *user, tok string) error {
			r, err := c.post(ctx, "/api/collections/cf_missing_"+newNonce(8)+"/auth-refresh", tok, nil)
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusNotFound, msgNoCollection)
			return err
		}),
	},
	{
		ID:      "AUTH-REFRESH-008",
		Source:  SourcePocketBase,
		Section: "§4.5 auth-refresh; §5.9; PocketBase v0.31.0 (the document is silent on superuser token lifetime)",
		Name:    "superuser refresh issues an expiring token",
		Text: "auth-refresh on _superusers with the superuser token answers 200 with the superuser's " +
			"record and a token that carries a future exp claim.",
		Run: func(ctx context.Context, c *Client) error {
			r, err := c.post(ctx, "/api/collections/_superusers/auth-refresh", c.su, nil)
			if err != nil {
				return err
			}
			res, err := parseAuthResult(r)
			if err != nil {
				return err
			}
			_, claims, err := splitJWT(res.token)
			if err != nil {
				return Mismatch("the refreshed token to be a JWT", err.Error())
			}
			exp, ok := getNumber(claims, "exp")
			if !ok || exp <= float64(time.Now().Unix()) {
				return Mismatch("a future exp claim in the refreshed superuser token", fmt.Sprintf("claims %s", jsonText(claims)))
			}
			return nil
		},
	},
	{
		ID:      "AUTH-REFRESH-009",
		Source:  SourceDocument,
		Section: "§5.1 (Authorization header)",
		Name:    "unknown scheme is not a token",
		Text: "A token sent with a scheme that is not Bearer in any case (\"Token \", \"Basic \") is " +
			"not accepted: auth-refresh answers 401 \"" + msgNeedsToken + "\".",
		Run: withUserToken(func(ctx context.Context, c *Client, _ *user, tok string) error {
			auths := []string{"Token " + tok, "Basic " + tok}
			if c.strict() {
				auths = append(auths, "bearer "+tok)
			}
			for _, auth := range auths {
				if err := expectRefreshRejected(ctx, c, "users", auth); err != nil {
					return err
				}
			}
			return nil
		}),
	},

	// ---- token contents and lifetimes (§5.9) ----
	{
		ID:      "AUTH-TOKEN-001",
		Source:  SourceDocument,
		Section: "§5.9",
		Name:    "users password tokens are static",
		Text: "A token issued by users/auth-with-password has no exp claim (it does not expire; the " +
			"document decides this, PocketBase differs) and auth-refresh with it answers 200.",
		Run: withUserToken(func(ctx context.Context, c *Client, u *user, tok string) error {
			_, claims, err := splitJWT(tok)
			if err != nil {
				return Mismatch("the token to be a JWT", err.Error())
			}
			if exp, ok := claims["exp"]; ok {
				return Mismatch("no exp claim in a users password token", "an exp claim, "+lifetime(exp))
			}
			return expectRefreshOK(ctx, c, "users", tok, u.id)
		}),
	},
	{
		ID:      "AUTH-TOKEN-002",
		Source:  SourcePocketBase,
		Section: "§5.9 (other lifetimes: PocketBase v0.31.0)",
		Name:    "superuser tokens expire",
		Text:    "_superusers/auth-with-password answers 200 with a token that carries an exp claim in the future.",
		Run: func(ctx context.Context, c *Client) error {
			_, claims, err := splitJWT(c.su)
			if err != nil {
				return Mismatch("the superuser token to be a JWT", err.Error())
			}
			exp, ok := getNumber(claims, "exp")
			if !ok || exp <= float64(time.Now().Unix()) {
				return Mismatch("a future exp claim in the superuser token", fmt.Sprintf("claims %s", jsonText(claims)))
			}
			return nil
		},
	},
	{
		ID:      "AUTH-TOKEN-003",
		Source:  SourcePocketBase,
		Section: "§5.1; §2.6 (token format: PocketBase v0.31.0)",
		Name:    "auth token header and claims",
		Text: "The token of a 200 login answer is an HS256 JWT (header alg \"HS256\") whose claims hold type " +
			"\"auth\", the record's id, its collection's id as collectionId, and refreshable true.",
		Run: withUserToken(func(ctx context.Context, c *Client, u *user, tok string) error {
			header, claims, err := splitJWT(tok)
			if err != nil {
				return Mismatch("the token to be a JWT", err.Error())
			}
			if alg, _ := getString(header, "alg"); alg != "HS256" {
				return Mismatch("header alg \"HS256\"", fmt.Sprintf("header %v", header))
			}
			return expectClaims(claims, map[string]any{
				"type": "auth", "id": u.id, "collectionId": u.collectionID, "refreshable": true,
			})
		}),
	},

	// ---- tampering (§5.1, §5.8) ----
	tamper("AUTH-TAMPER-001", "payload changed, signature kept",
		"a token whose payload was replaced by one naming another user (the original signature kept)",
		func(ctx context.Context, c *Client, tok string) (string, error) {
			other, err := c.newUser(ctx)
			if err != nil {
				return "", err
			}
			parts := strings.Split(tok, ".")
			_, claims, err := splitJWT(tok)
			if err != nil {
				return "", Mismatch("the token to be a JWT", err.Error())
			}
			claims["id"] = other.id
			parts[1] = b64JSON(claims)
			return strings.Join(parts, "."), nil
		}),
	tamper("AUTH-TAMPER-002", "alg none",
		"a token whose header says alg \"none\" and whose signature is empty",
		func(ctx context.Context, c *Client, tok string) (string, error) {
			parts := strings.Split(tok, ".")
			return b64JSON(map[string]any{"alg": "none", "typ": "JWT"}) + "." + parts[1] + ".", nil
		}),
	tamper("AUTH-TAMPER-003", "alg HS512",
		"a token whose header says alg \"HS512\", signed with HMAC-SHA512 under an arbitrary key",
		func(ctx context.Context, c *Client, tok string) (string, error) {
			parts := strings.Split(tok, ".")
			signing := b64JSON(map[string]any{"alg": "HS512", "typ": "JWT"}) + "." + parts[1]
			mac := hmac.New(sha512.New, []byte("conformance-"+newNonce(16)))
			mac.Write([]byte(signing))
			return signing + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil)), nil
		}),
	tamper("AUTH-TAMPER-004", "truncated signature",
		"a token whose signature lost its last characters",
		func(ctx context.Context, c *Client, tok string) (string, error) {
			return tok[:len(tok)-4], nil
		}),
	tamper("AUTH-TAMPER-005", "extra segment",
		"a valid token with a fourth segment appended",
		func(ctx context.Context, c *Client, tok string) (string, error) {
			return tok + ".e30", nil
		}),
	{
		ID:      "AUTH-TAMPER-006",
		Source:  SourceDocument,
		Section: "§5.8; §5 (401); §7 row 6",
		Name:    "expired token rejected",
		Text: "An impersonation token issued with duration 1 is refused once its exp has passed: " +
			"auth-refresh answers 401 \"" + msgNeedsToken + "\".",
		Run: withUser(func(ctx context.Context, c *Client, u *user) error {
			imp, err := c.impersonate(ctx, "users", u.id, map[string]any{"duration": 1})
			if err != nil {
				return err
			}
			_, claims, err := splitJWT(imp.token)
			if err != nil {
				return Mismatch("the impersonation token to be a JWT", err.Error())
			}
			exp, ok := getNumber(claims, "exp")
			if !ok {
				return Mismatch("an exp claim in a duration-1 impersonation token", jsonText(claims))
			}
			wait := time.Until(time.Unix(int64(exp), 0).Add(1100 * time.Millisecond))
			if wait > 10*time.Second {
				return Mismatch("exp about 1 s after issue (duration 1)", fmt.Sprintf("exp %s away", wait.Round(time.Second)))
			}
			if err := sleep(ctx, wait); err != nil {
				return err
			}
			return expectRefreshRejected(ctx, c, "users", imp.token)
		}),
	},
	{
		ID:      "AUTH-TAMPER-007",
		Source:  SourceDocument,
		Section: "§5.1 (auth tokens only); §7 row 6",
		Name:    "file token is not an auth token",
		Text: "A file token (type \"file\") sent in Authorization to auth-refresh answers 401 \"" +
			msgNeedsToken + "\".",
		Run: withUserToken(func(ctx context.Context, c *Client, _ *user, tok string) error {
			ft, err := c.fileToken(ctx, tok)
			if err != nil {
				return err
			}
			return expectRefreshRejected(ctx, c, "users", ft)
		}),
	},
	{
		ID:      "AUTH-TAMPER-008",
		Source:  SourcePocketBase,
		Section: "§5.8; §5.9 (revocation by password change); PocketBase v0.31.0 (the document is silent on revocation by password change)",
		Name:    "password change revokes old tokens",
		Text: "After a superuser changes a user's password (PATCH of the record with password and " +
			"passwordConfirm), the user's earlier token is refused: auth-refresh answers 401 \"" + msgNeedsToken + "\".",
		Run: withUserToken(func(ctx context.Context, c *Client, u *user, tok string) error {
			if err := expectRefreshOK(ctx, c, "users", tok, u.id); err != nil {
				return fmt.Errorf("control: %w", err)
			}
			pw := "Cf-new-" + newNonce(14)
			r, err := c.do(ctx, http.MethodPatch, "/api/collections/users/records/"+seg(u.id), c.su,
				map[string]any{"password": pw, "passwordConfirm": pw})
			if err != nil {
				return err
			}
			if r.status != http.StatusOK {
				return fmt.Errorf("fixture: password change: expected 200, got %s", r)
			}
			return expectRefreshRejected(ctx, c, "users", tok)
		}),
	},
	{
		ID:      "AUTH-TAMPER-009",
		Source:  SourceDocument,
		Section: "§5.8; §7 row 6",
		Name:    "token of a deleted record",
		Text: "Once its record is deleted, a user's token is refused: auth-refresh answers 401 \"" +
			msgNeedsToken + "\".",
		Run: withUserToken(func(ctx context.Context, c *Client, u *user, tok string) error {
			if err := c.deleteUser(ctx, u); err != nil {
				return fmt.Errorf("fixture: delete user: %w", err)
			}
			return expectRefreshRejected(ctx, c, "users", tok)
		}),
	},

	// ---- impersonation (§4.5, §5.7) ----
	{
		ID:      "AUTH-IMP-001",
		Source:  SourcePocketBase,
		Section: "§4.5 impersonate; §5.7; PocketBase v0.31.0 (the document is silent on response shape and claims)",
		Name:    "superuser impersonates a user",
		Text: "impersonate/{id} as superuser answers 200 {token, record} with the target's record and a " +
			"token for it whose claims say type \"auth\", id the target's id and refreshable false.",
		Run: withUser(func(ctx context.Context, c *Client, u *user) error {
			r, err := c.post(ctx, "/api/collections/users/impersonate/"+seg(u.id), c.su, nil)
			if err != nil {
				return err
			}
			res, err := parseAuthResult(r)
			if err != nil {
				return err
			}
			if err := expectRecordID(res, u.id); err != nil {
				return err
			}
			_, claims, err := splitJWT(res.token)
			if err != nil {
				return Mismatch("the token to be a JWT", err.Error())
			}
			return expectClaims(claims, map[string]any{"type": "auth", "id": u.id, "refreshable": false})
		}),
	},
	{
		ID:      "AUTH-IMP-002",
		Source:  SourceDocument,
		Section: "§4.5 impersonate; §5.7 (duration in seconds)",
		Name:    "impersonation duration honoured",
		Text: "impersonate with {\"duration\": 60} answers 200 with a token whose exp lies 60 seconds " +
			"after the time of issue (within 10 s).",
		Run: withUser(func(ctx context.Context, c *Client, u *user) error {
			before := time.Now()
			imp, err := c.impersonate(ctx, "users", u.id, map[string]any{"duration": 60})
			if err != nil {
				return err
			}
			_, claims, err := splitJWT(imp.token)
			if err != nil {
				return Mismatch("the token to be a JWT", err.Error())
			}
			exp, ok := getNumber(claims, "exp")
			if !ok {
				return Mismatch("an exp claim", jsonText(claims))
			}
			want := float64(before.Unix() + 60)
			if math.Abs(exp-want) > 10 {
				return Mismatch(fmt.Sprintf("exp ≈ %d (issue time + 60 s)", int64(want)), fmt.Sprint(int64(exp)))
			}
			return nil
		}),
	},
	{
		ID:      "AUTH-IMP-003",
		Source:  SourcePocketBase,
		Section: "§4.5 impersonate; §2.5 (per-field data); PocketBase v0.31.0 (the document is silent on validation of the duration)",
		Name:    "negative duration refused",
		Text: "impersonate with {\"duration\": -1} answers 400 \"" + msgValidation + "\" with data.duration " +
			"{code \"" + codeMinGreaterThan + "\", message}.",
		Run: withUser(func(ctx context.Context, c *Client, u *user) error {
			r, err := c.post(ctx, "/api/collections/users/impersonate/"+seg(u.id), c.su, map[string]any{"duration": -1})
			if err != nil {
				return err
			}
			env, err := expectError(r, http.StatusBadRequest, msgValidation)
			if err != nil {
				return err
			}
			return expectFieldCodes(r, env, codeMinGreaterThan, "duration")
		}),
	},
	{
		ID:      "AUTH-IMP-004",
		Source:  SourceDocument,
		Section: "§4.5 impersonate; §5.7; §7 row 8",
		Name:    "user cannot impersonate",
		Text:    "impersonate with a regular user's token answers 403 \"" + msgNotAllowed + "\".",
		Run: withUserToken(func(ctx context.Context, c *Client, u *user, tok string) error {
			r, err := c.post(ctx, "/api/collections/users/impersonate/"+seg(u.id), tok, nil)
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusForbidden, msgNotAllowed)
			return err
		}),
	},
	{
		ID:      "AUTH-IMP-005",
		Source:  SourceDocument,
		Section: "§4.5 impersonate; §5.7; §7 row 6",
		Name:    "impersonate without a token",
		Text:    "impersonate without Authorization answers 401 \"" + msgNeedsToken + "\".",
		Run: withUser(func(ctx context.Context, c *Client, u *user) error {
			r, err := c.post(ctx, "/api/collections/users/impersonate/"+seg(u.id), "", nil)
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusUnauthorized, msgNeedsToken)
			return err
		}),
	},
	{
		ID:      "AUTH-IMP-006",
		Source:  SourcePocketBase,
		Section: "§4.5 impersonate; PocketBase v0.31.0 (the document is silent on unknown record)",
		Name:    "impersonate an unknown record",
		Text:    "impersonate/{id} as superuser with an id no user has answers 404 \"" + msgNotFound + "\".",
		Run: func(ctx context.Context, c *Client) error {
			r, err := c.post(ctx, "/api/collections/users/impersonate/cf"+newNonce(13), c.su, nil)
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusNotFound, msgNotFound)
			return err
		},
	},
	{
		ID:      "AUTH-IMP-007",
		Source:  SourcePocketBase,
		Section: "§4.5 impersonate; PocketBase v0.31.0 (the document is silent on non-auth or unknown collection)",
		Name:    "impersonate in a non-auth or unknown collection",
		Text: "impersonate as superuser in a base collection (one the check creates, or _externalAuths where the server creates none), and in a collection that does not exist, " +
			"answers 404 \"" + msgNoAuthColl + "\".",
		Run: withNonAuthCollection(func(ctx context.Context, c *Client, name string) error {
			for _, coll := range []string{name, "cf_missing_" + newNonce(8)} {
				r, err := c.post(ctx, "/api/collections/"+coll+"/impersonate/cf"+newNonce(13), c.su, nil)
				if err != nil {
					return err
				}
				if _, err := expectError(r, http.StatusNotFound, msgNoAuthColl); err != nil {
					return err
				}
			}
			return nil
		}),
	},

	// ---- file tokens ----
	{
		ID:      "AUTH-FILE-001",
		Source:  SourcePocketBase,
		Section: "§5.10 (file tokens; issuing path: PocketBase v0.31.0)",
		Name:    "file token issued",
		Text: "POST /api/files/token with a valid auth token answers 200 {token} where the token is a " +
			"JWT whose type claim is \"file\" and whose id claim is the caller's record id.",
		Run: withUserToken(func(ctx context.Context, c *Client, u *user, tok string) error {
			ft, err := c.fileToken(ctx, tok)
			if err != nil {
				return err
			}
			_, claims, err := splitJWT(ft)
			if err != nil {
				return Mismatch("the file token to be a JWT", err.Error())
			}
			if err := expectClaims(claims, map[string]any{"type": "file", "id": u.id}); err != nil {
				return err
			}
			// The superuser gets one too: it is what the backup download takes.
			sft, err := c.fileToken(ctx, c.su)
			if err != nil {
				return err
			}
			_, claims, err = splitJWT(sft)
			if err != nil {
				return Mismatch("the superuser file token to be a JWT", err.Error())
			}
			return expectClaims(claims, map[string]any{"type": "file"})
		}),
	},
	{
		ID:      "AUTH-FILE-002",
		Source:  SourcePocketBase,
		Section: "§5.10; §7 row 6; PocketBase v0.31.0 (the document is silent on the file token endpoint)",
		Name:    "file token needs auth",
		Text:    "POST /api/files/token without Authorization answers 401 \"" + msgNeedsToken + "\".",
		Run: func(ctx context.Context, c *Client) error {
			r, err := c.post(ctx, "/api/files/token", "", nil)
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusUnauthorized, msgNeedsToken)
			return err
		},
	},
}

// tamper builds a requirement that takes a fresh user's valid token, checks
// that it refreshes (the control), alters it with mutate and expects
// auth-refresh to refuse the result with 401.
func tamper(id, name, what string, mutate func(ctx context.Context, c *Client, tok string) (string, error)) *Requirement {
	return &Requirement{
		ID:      id,
		Source:  SourceDocument,
		Section: "§5.1; §5.8; §7 row 6",
		Name:    "tampered token: " + name,
		Text:    "auth-refresh answers 401 \"" + msgNeedsToken + "\" to " + what + ".",
		Run: withUserToken(func(ctx context.Context, c *Client, u *user, tok string) error {
			if err := expectRefreshOK(ctx, c, "users", tok, u.id); err != nil {
				return fmt.Errorf("control (untampered token): %w", err)
			}
			bad, err := mutate(ctx, c, tok)
			if err != nil {
				return err
			}
			return expectRefreshRejected(ctx, c, "users", bad)
		}),
	}
}

// expectRefreshOK requires auth-refresh on collection with auth to answer
// 200 with the record recordID.
func expectRefreshOK(ctx context.Context, c *Client, collection, auth, recordID string) error {
	r, err := c.post(ctx, "/api/collections/"+seg(collection)+"/auth-refresh", auth, nil)
	if err != nil {
		return err
	}
	res, err := parseAuthResult(r)
	if err != nil {
		return err
	}
	if id, _ := getString(res.record, "id"); id != recordID {
		return Mismatch(fmt.Sprintf("record.id %q after refresh", recordID), fmt.Sprintf("%q", id))
	}
	return nil
}

// expectRefreshRejected requires auth-refresh on collection with auth to
// answer 401 with the §7 message.
func expectRefreshRejected(ctx context.Context, c *Client, collection, auth string) error {
	r, err := c.post(ctx, "/api/collections/"+seg(collection)+"/auth-refresh", auth, nil)
	if err != nil {
		return err
	}
	_, err = expectError(r, http.StatusUnauthorized, msgNeedsToken)
	return err
}

// impersonate obtains an impersonation token as superuser; body may be nil.
func (c *Client) impersonate(ctx context.Context, collection, id string, body any) (*authResult, error) {
	r, err := c.post(ctx, "/api/collections/"+seg(collection)+"/impersonate/"+seg(id), c.su, body)
	if err != nil {
		return nil, err
	}
	res, err := parseAuthResult(r)
	if err != nil {
		return nil, fmt.Errorf("impersonate %s/%s: %w", collection, id, err)
	}
	return res, nil
}

// fileToken obtains a file token with the given auth token.
func (c *Client) fileToken(ctx context.Context, auth string) (string, error) {
	r, err := c.post(ctx, "/api/files/token", auth, nil)
	if err != nil {
		return "", err
	}
	m, err := okObject(r)
	if err != nil {
		return "", fmt.Errorf("POST /api/files/token: %w", err)
	}
	tok, _ := getString(m, "token")
	if tok == "" {
		return "", Mismatch("{token} with a non-empty token", r.String())
	}
	return tok, nil
}

// expectClaims requires each want entry to be present in claims with an
// equal value (JSON numbers compare as float64).
func expectClaims(claims map[string]any, want map[string]any) error {
	for k, v := range want {
		got, ok := claims[k]
		if !ok || got != v {
			return Mismatch(fmt.Sprintf("claim %s = %#v", k, v), fmt.Sprintf("claims %s", jsonText(claims)))
		}
	}
	return nil
}

// splitJWT decodes the header and claims of a compact JWS without
// verifying it. It requires three segments of unpadded base64url.
func splitJWT(tok string) (header, claims map[string]any, err error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil, nil, fmt.Errorf("expected 3 dot-separated segments, got %d", len(parts))
	}
	for i, dst := range []*map[string]any{&header, &claims} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			return nil, nil, fmt.Errorf("segment %d: %v", i+1, err)
		}
		if err := json.Unmarshal(raw, dst); err != nil || *dst == nil {
			return nil, nil, fmt.Errorf("segment %d is not a JSON object", i+1)
		}
	}
	if parts[2] == "" {
		return nil, nil, errors.New("empty signature")
	}
	return header, claims, nil
}

// b64JSON encodes v as JSON in unpadded base64url, as a JWT segment.
func b64JSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err) // only called with maps of plain values
	}
	return base64.RawURLEncoding.EncodeToString(data)
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// expectRecordID requires the record of an authentication result to have
// the id id.
func expectRecordID(res *authResult, id string) error {
	if got, _ := getString(res.record, "id"); got != id {
		return Mismatch(fmt.Sprintf("record.id %q", id), fmt.Sprintf("%q", got))
	}
	return nil
}
