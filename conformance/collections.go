package conformance

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// The collections API is one of the areas §1 says exist but whose contract
// is "not shown", so these checks follow PocketBase v0.31.0: the whole API
// sits behind its superuser guard (401 without a token, 403 "The authorized
// record is not allowed to perform this action." for any other record);
// PocketBase binds that guard to the /api/collections group.

const sectionCollections = "§1 (collections: contract not shown); §7 row 6; PocketBase v0.31.0 (collections are for superusers; how it creates a collection)"

// collectionCreateReq builds the requirement that a superuser creates a
// collection of type typ ("a" or "an" typ in the name).
func collectionCreateReq(id, article, typ string) *Requirement {
	return &Requirement{
		ID:      id,
		Source:  SourcePocketBase,
		Section: sectionCollections,
		Name:    "create " + article + " " + typ + " collection",
		Text: "POST /api/collections as superuser with {name, type \"" + typ + "\"} answers 200 with the collection: " +
			"a non-empty id, that name and type \"" + typ + "\".",
		Run: func(ctx context.Context, c *Client) error {
			_, err := createCollection(ctx, c, typ)
			return err
		},
	}
}

var collectionRequirements = []*Requirement{
	{
		ID:      "COLL-AUTH-001",
		Source:  SourcePocketBase,
		Section: sectionCollections,
		Name:    "collections API without a token",
		Text: "GET /api/collections and POST /api/collections without Authorization answer 401 \"" +
			msgNeedsToken + "\"; nothing is created.",
		Run: func(ctx context.Context, c *Client) error {
			return collectionsRefused(ctx, c, "", http.StatusUnauthorized, msgNeedsToken)
		},
	},
	{
		ID:      "COLL-AUTH-002",
		Source:  SourcePocketBase,
		Section: sectionCollections,
		Name:    "collections API as a regular user",
		Text: "GET /api/collections and POST /api/collections with a regular user's token answer 403 \"" +
			msgNotAllowed + "\" (PocketBase's superuser guard; the interface document names \"" +
			msgOnlySuperusers + "\" only for the backup list); nothing is created.",
		Run: withUserToken(func(ctx context.Context, c *Client, _ *user, tok string) error {
			return collectionsRefused(ctx, c, tok, http.StatusForbidden, msgNotAllowed)
		}),
	},
	collectionCreateReq("COLL-CRUD-001", "an", "auth"),
	{
		ID:      "COLL-CRUD-002",
		Source:  SourcePocketBase,
		Section: sectionCollections + "; issue 19 (strongbox stores auth collections only: COLL-BASE-001)",
		Name:    "create a base collection: created or refused on type",
		Text: "POST /api/collections as superuser with {name, type \"base\"} answers either 200 with the collection (a " +
			"non-empty id, that name and type \"base\"), as PocketBase does, or 400 with the error envelope and " +
			"data.type {code, message}, after which GET /api/collections/{name} answers 404 \"" + msgNotFound + "\" (as " +
			"strongbox does, COLL-BASE-001); nothing else.",
		Run: func(ctx context.Context, c *Client) error {
			name, r, err := c.postCollection(ctx, c.su, "base")
			if err != nil {
				return err
			}
			if r.status == http.StatusOK {
				m, err := okObject(r)
				if err != nil {
					return err
				}
				return expectCollection(r, m, "", name, "base")
			}
			return expectBaseRefused(ctx, c, name, r)
		},
	},
	// COLL-BASE-001 is strongbox's own: it stores auth collections only.
	{
		ID:      "COLL-BASE-001",
		Source:  SourceStrongbox,
		Section: "issue 19 (strongbox stores auth collections and their records; PocketBase v0.31.0 creates base collections, COLL-CRUD-002)",
		Name:    "a base collection is refused",
		Text: "POST /api/collections as superuser with {name, type \"base\"} answers 400 with the error envelope and " +
			"data.type {code, message} saying what the server stores, and creates nothing: GET /api/collections/{name} " +
			"answers 404 \"" + msgNotFound + "\".",
		Run: func(ctx context.Context, c *Client) error {
			name, r, err := c.postCollection(ctx, c.su, "base")
			if err != nil {
				return err
			}
			return expectBaseRefused(ctx, c, name, r)
		},
	},
	{
		ID:      "COLL-CRUD-003",
		Source:  SourcePocketBase,
		Section: sectionCollections,
		Name:    "view, update and delete a collection",
		Text: "For an auth collection a superuser created: GET /api/collections/{name} and GET " +
			"/api/collections/{id} answer 200 with its id, name and type; PATCH /api/collections/{name} with {} " +
			"answers 200 with the same; DELETE answers 204 with an empty body; afterwards GET and DELETE " +
			"answer 404 \"" + msgNotFound + "\".",
		Run: checkCollectionLifecycle,
	},
	{
		ID:      "COLL-CRUD-004",
		Source:  SourcePocketBase,
		Section: sectionCollections,
		Name:    "list collections",
		Text: "GET /api/collections?perPage=1000 as superuser answers 200 with a paginated envelope (page, " +
			"perPage, totalItems, items) whose items include the collections users and _superusers.",
		Run: func(ctx context.Context, c *Client) error {
			r, m, err := c.getOK(ctx, withQuery("/api/collections", query("perPage", "1000")), c.su)
			if err != nil {
				return err
			}
			for _, k := range []string{"page", "perPage", "totalItems"} {
				if _, ok := getNumber(m, k); !ok {
					return Mismatch(fmt.Sprintf("%s to be a number", k), r.String())
				}
			}
			items, ok := getArray(m, "items")
			if !ok {
				return Mismatch("items to be an array", r.String())
			}
			names := map[string]bool{}
			for _, it := range items {
				o, _ := it.(map[string]any)
				if n, ok := getString(o, "name"); ok {
					names[n] = true
				}
			}
			if total, _ := getNumber(m, "totalItems"); int(total) > len(items) {
				return nil // more than one page: the two may be further on
			}
			for _, want := range []string{"users", "_superusers"} {
				if !names[want] {
					return Mismatch(fmt.Sprintf("the collection %s among the items", want), fmt.Sprint(slices.Sorted(maps.Keys(names))))
				}
			}
			return nil
		},
	},
}

// collectionsRefused requires GET and POST /api/collections with auth to
// answer status and msg. A collection created anyway is deleted.
func collectionsRefused(ctx context.Context, c *Client, auth string, status int, msg string) error {
	r, err := c.get(ctx, "/api/collections", auth)
	if err != nil {
		return err
	}
	if _, err := expectError(r, status, msg); err != nil {
		return fmt.Errorf("GET /api/collections: %w", err)
	}
	_, r, err = c.postCollection(ctx, auth, "auth")
	if err != nil {
		return err
	}
	if _, err := expectError(r, status, msg); err != nil {
		return fmt.Errorf("POST /api/collections: %w", err)
	}
	return nil
}

// createCollection creates a collection of type typ as superuser, requires
// 200 with its id, name and type, registers its deletion and returns the
// collection as answered.
func createCollection(ctx context.Context, c *Client, typ string) (map[string]any, error) {
	name, r, err := c.postCollection(ctx, c.su, typ)
	if err != nil {
		return nil, err
	}
	m, err := okObject(r)
	if err != nil {
		return nil, err
	}
	return m, expectCollection(r, m, "", name, typ)
}

// postCollection posts a collection of type typ with a new name with the
// Authorization auth, and registers its deletion if the answer is 200. It
// returns the name and the answer.
func (c *Client) postCollection(ctx context.Context, auth, typ string) (string, *response, error) {
	name := "cf_" + newNonce(10)
	r, err := c.post(ctx, "/api/collections", auth, map[string]any{"name": name, "type": typ})
	if err != nil {
		return "", nil, err
	}
	if r.status == http.StatusOK {
		c.cleanupCollection(name)
	}
	return name, r, nil
}

// expectCollection requires m to be the collection with the given id (any
// non-empty id when id is ""), name and type.
func expectCollection(r *response, m map[string]any, id, name, typ string) error {
	gotID, _ := getString(m, "id")
	if gotID == "" || (id != "" && gotID != id) {
		return Mismatch(fmt.Sprintf("collection id %q", id), fmt.Sprintf("%v in %s", m["id"], r))
	}
	if got, _ := getString(m, "name"); got != name {
		return Mismatch(fmt.Sprintf("collection name %q", name), fmt.Sprintf("%v in %s", m["name"], r))
	}
	if got, _ := getString(m, "type"); got != typ {
		return Mismatch(fmt.Sprintf("collection type %q", typ), fmt.Sprintf("%v in %s", m["type"], r))
	}
	return nil
}

// cleanupCollection registers the deletion of the collection name; one that
// is already gone is fine.
func (c *Client) cleanupCollection(name string) {
	c.Cleanup("delete collection "+name, func(ctx context.Context) error {
		return c.deleteIfThere(ctx, "/api/collections/"+seg(name))
	})
}

func checkCollectionLifecycle(ctx context.Context, c *Client) error {
	created, err := createCollection(ctx, c, "auth")
	if err != nil {
		return err
	}
	id, _ := getString(created, "id")
	name, _ := getString(created, "name")
	// GET by name and by id, then PATCH with {}: each answers the collection.
	for _, q := range []struct {
		method, ref string
		body        any
	}{
		{http.MethodGet, name, nil}, {http.MethodGet, id, nil}, {http.MethodPatch, name, map[string]any{}},
	} {
		r, err := c.do(ctx, q.method, "/api/collections/"+seg(q.ref), c.su, q.body)
		if err != nil {
			return err
		}
		m, err := okObject(r)
		if err != nil {
			return err
		}
		if err := expectCollection(r, m, id, name, "auth"); err != nil {
			return err
		}
	}
	r, err := c.do(ctx, http.MethodDelete, "/api/collections/"+seg(name), c.su, nil)
	if err != nil {
		return err
	}
	if err := expectStatus(r, http.StatusNoContent); err != nil {
		return err
	}
	if len(strings.TrimSpace(string(r.body))) != 0 {
		return Mismatch("an empty body with 204", r.String())
	}
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		r, err := c.do(ctx, method, "/api/collections/"+seg(name), c.su, nil)
		if err != nil {
			return err
		}
		if _, err := expectError(r, http.StatusNotFound, msgNotFound); err != nil {
			return fmt.Errorf("%s after delete: %w", method, err)
		}
	}
	return nil
}

// expectBaseRefused requires r, the answer to the creation of the base
// collection name, to be 400 with data.type {code, message}, and the
// collection not to exist.
func expectBaseRefused(ctx context.Context, c *Client, name string, r *response) error {
	if err := expectFieldRefused(r, "type"); err != nil {
		return fmt.Errorf("POST /api/collections type base: %w", err)
	}
	r, err := c.get(ctx, "/api/collections/"+seg(name), c.su)
	if err != nil {
		return err
	}
	if _, err := expectError(r, http.StatusNotFound, msgNotFound); err != nil {
		return fmt.Errorf("GET of the refused collection: %w", err)
	}
	return nil
}

// withNonAuthCollection is the Run of a check that needs a collection that
// is not an auth collection: a base collection it creates or, where the
// server refuses to create one on type (strongbox, COLL-BASE-001), the
// system collection _externalAuths, which is a base collection in
// PocketBase v0.31.0.
func withNonAuthCollection(f func(ctx context.Context, c *Client, name string) error) func(context.Context, *Client) error {
	return func(ctx context.Context, c *Client) error {
		name, r, err := c.postCollection(ctx, c.su, "base")
		if err != nil {
			return err
		}
		if r.status != http.StatusOK {
			if expectFieldRefused(r, "type") != nil {
				return fmt.Errorf("fixture: create base collection %s: expected 200, or 400 on type, got %s", name, r)
			}
			name = "_externalAuths"
		}
		return f(ctx, c, name)
	}
}
