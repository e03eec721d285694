package api

import (
	"encoding/json"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"strongbox/authn"
	"strongbox/logstore/journal"
)

// withBaseCollection seeds an auth journal as an older strongbox left it,
// which let a superuser create base collections: the collections a new
// data dir starts with, and a base collection named name.
func withBaseCollection(name string) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		t.Helper()
		hasher, err := authn.NewHasher(bcrypt.MinCost, 0)
		if err != nil {
			t.Fatal(err)
		}
		st, err := authn.Open(path, authn.Options{Hasher: hasher, SweepEvery: -1})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		col := map[string]any{
			"id": "pbc_" + name, "name": name, "type": "base", "system": false,
			"listRule": nil, "viewRule": nil, "createRule": nil, "updateRule": nil, "deleteRule": nil,
			"fields": []any{}, "indexes": []any{}, "created": "2026-11-01 10:00:00.000Z", "updated": "2026-11-01 10:00:00.000Z",
		}
		payload, err := json.Marshal([]any{map[string]any{"v": 1, "op": "collection", "collection": col}})
		if err != nil {
			t.Fatal(err)
		}
		j, err := journal.Open(path, journal.Options{Strict: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := j.Append(payload); err != nil {
			t.Fatal(err)
		}
		if err := j.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// newBaseEnv is newEnv on a data dir that holds the base collection posts.
func newBaseEnv(t *testing.T) *env {
	t.Helper()
	return newEnvSeeded(t, Config{}, HTTPConfig{}, nil, withBaseCollection("posts"))
}

// TestBaseCollections: strongbox stores auth collections and their
// records only, so creating a base or view collection is refused where the
// user meets the limit; a data dir an older version left with a base
// collection still opens, the collection can be read, changed and deleted,
// and its records are refused with 404.
func TestBaseCollections(t *testing.T) {
	t.Parallel()
	e := newBaseEnv(t)
	const (
		onlyAuth = `{"code":"validation_unsupported_value","message":"This server stores auth collections and their records only: base and view collections cannot be created."}`
		notBase  = `{"data":{},"message":"Records of base collections are not stored by this server.","status":404}`
	)
	tests := []struct {
		name, method, path, body string
		status                   int
		want                     string // the exact body; "" = not checked
	}{
		{"create base", "POST", "/api/collections", `{"name":"b1","type":"base"}`, 400,
			`{"data":{"type":` + onlyAuth + `},"message":"Failed to create collection.","status":400}`},
		{"create without type", "POST", "/api/collections", `{"name":"b2"}`, 400,
			`{"data":{"type":` + onlyAuth + `},"message":"Failed to create collection.","status":400}`},
		{"create view", "POST", "/api/collections", `{"name":"v1","type":"view","viewQuery":"select id from users"}`, 400,
			`{"data":{"type":` + onlyAuth + `,"viewQuery":{"code":"validation_unknown_field","message":"Unknown field."}},"message":"Failed to create collection.","status":400}`},
		{"create unknown type", "POST", "/api/collections", `{"name":"f1","type":"foo"}`, 400,
			`{"data":{"type":{"code":"validation_in_invalid","message":"Must be a valid value.","params":{"note":"strongbox stores auth collections only"}}},"message":"Failed to create collection.","status":400}`},
		{"create auth", "POST", "/api/collections", `{"name":"a1","type":"auth"}`, 200, ""},
		{"view old base", "GET", "/api/collections/posts", "", 200, ""},
		{"change old base", "PATCH", "/api/collections/posts", `{"listRule":""}`, 200, ""},
		{"old base to auth", "PATCH", "/api/collections/posts", `{"type":"auth"}`, 400,
			`{"data":{"type":{"code":"validation_collection_type_change","message":"Collection type cannot be changed."}},"message":"Failed to update collection.","status":400}`},
		{"list records", "GET", "/api/collections/posts/records", "", 404, notBase},
		{"view record", "GET", "/api/collections/posts/records/abc", "", 404, notBase},
		{"create record", "POST", "/api/collections/posts/records", `{"title":"x"}`, 404, notBase},
		{"update record", "PATCH", "/api/collections/posts/records/abc", `{"title":"x"}`, 404, notBase},
		{"delete record", "DELETE", "/api/collections/posts/records/abc", "", 404, notBase},
		{"delete old base", "DELETE", "/api/collections/posts", "", 204, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body any
			if tt.body != "" {
				body = tt.body
			}
			res := e.do(tt.method, tt.path, e.su, body)
			if res.Status != tt.status || (tt.want != "" && strings.TrimSpace(string(res.Body)) != tt.want) {
				t.Errorf("got %d %s\nwant %d %s", res.Status, res.Body, tt.status, tt.want)
			}
		})
	}
	for _, name := range []string{"b1", "b2", "v1", "f1", "posts"} {
		if _, ok := e.auth.Collection(name); ok {
			t.Errorf("collection %s exists", name)
		}
	}
}
