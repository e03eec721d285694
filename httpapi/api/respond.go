package api

import (
	"bytes"
	"encoding/json"
	"net/http"

	"strongbox/filterlang"
)

// page is the paginated list envelope of §2.4. The `fields` projection
// applies to its items only; the envelope keys always stay (see listItems).
type page struct {
	Items      any `json:"items"`
	Page       int `json:"page"`
	PerPage    int `json:"perPage"`
	TotalItems int `json:"totalItems"`
	TotalPages int `json:"totalPages"`
}

// writeJSON writes v with the given success status, applying the request's
// `fields` projection (§4.1). A malformed `fields` value is a 400
// (PocketBase answers 200 with an empty body, which hides the mistake).
func writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) error {
	b, err := marshal(v)
	if err != nil {
		return err
	}
	if fs := query(r).Get("fields"); fs != "" {
		if b, err = project(b, fs, v); err != nil {
			return err
		}
	}
	h := w.Header()
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	w.Write(b)
	return nil
}

// project applies the fields expression fs to the encoded response b.
func project(b []byte, fs string, v any) ([]byte, error) {
	f, err := filterlang.ParseFields(fs)
	if err != nil {
		return nil, errBadRequest(msgBadRequest+" Invalid fields.", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	if items, ok := listItems(generic); ok {
		for i := range items {
			items[i] = f.Apply(items[i])
		}
	} else {
		generic = f.Apply(generic)
	}
	return marshal(generic)
}

// listItems returns the items of a paginated list envelope (§2.4): an
// object with exactly the keys items, page, perPage, totalItems, totalPages.
func listItems(v any) ([]any, bool) {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 5 {
		return nil, false
	}
	for _, k := range []string{"page", "perPage", "totalItems", "totalPages"} {
		if _, ok := m[k]; !ok {
			return nil, false
		}
	}
	items, ok := m["items"].([]any)
	return items, ok
}

// noContent answers 204 with no body.
func noContent(w http.ResponseWriter) error {
	w.WriteHeader(http.StatusNoContent)
	return nil
}
