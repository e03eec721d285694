package api

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"time"

	"strongbox/authn"
	"strongbox/filterlang"
)

// listField describes one filterable and sortable field of the records or
// collections lists: its filterlang binding and its value for sorting
// (string or float64).
type listField[T any] struct {
	field filterlang.Field[T]
	value func(T) any
}

func strField[T any](get func(T) string) listField[T] {
	return listField[T]{
		field: filterlang.Field[T]{Type: filterlang.TypeString, Str: func(v T) (string, bool) { return get(v), true }},
		value: func(v T) any { return get(v) },
	}
}

func numField[T any](get func(T) float64) listField[T] {
	return listField[T]{
		field: filterlang.Field[T]{Type: filterlang.TypeNumber, Num: func(v T) (float64, bool) { return get(v), true }},
		value: func(v T) any { return get(v) },
	}
}

func boolNum(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// filterAndSort applies the filter and sort query parameters to items,
// with fields naming what may be used. A malformed filter or sort, or an
// unknown field, is a 400 with the generic message, as PocketBase's
// list endpoints answer.
func filterAndSort[T any](items []T, filter, sortExpr string, fields map[string]listField[T], now func() time.Time) ([]T, error) {
	if filter != "" {
		e, err := filterlang.Parse(filter)
		if err != nil {
			return nil, errBadRequest(msgBadRequest, err)
		}
		sel, err := filterlang.CompileSelector(e, func(name string) (filterlang.Field[T], bool) {
			f, ok := fields[name]
			return f.field, ok
		}, filterlang.Options{Now: now})
		if err != nil {
			return nil, errBadRequest(msgBadRequest, err)
		}
		items = sel(nil, items) // a new slice: items belongs to the caller
	}
	if sortExpr == "" {
		return items, nil
	}
	order, err := filterlang.ParseSort(sortExpr, func(name string) bool {
		_, ok := fields[name]
		return ok || name == "@random"
	})
	if err != nil {
		return nil, errBadRequest(msgBadRequest, err)
	}
	items = slices.Clone(items)
	for _, o := range order {
		if o.Name == "@random" {
			rand.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
			return items, nil
		}
	}
	slices.SortStableFunc(items, func(a, b T) int {
		for _, o := range order {
			get := fields[o.Name].value
			c := compareValues(get(a), get(b))
			if o.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
	return items, nil
}

func compareValues(a, b any) int {
	switch x := a.(type) {
	case string:
		return cmp.Compare(x, b.(string))
	case float64:
		return cmp.Compare(x, b.(float64))
	}
	return 0
}

// recordFields returns the fields of the records of c that a client's
// filter and sort may name; superuser says whether the caller is one.
// This is the one place record fields meet client filters, so what
// follows from who asks is decided here, as PocketBase decides it
// (core/record_field_resolver_runner.go, allowHiddenFields):
//   - hidden fields (not password or tokenKey, never filterable) are
//     there for superusers only; anyone else naming one gets the 400 of an
//     unknown field;
//   - for anyone but a superuser, every comparison naming email holds
//     only for records whose emailVisibility is true, the record's owner
//     included: PocketBase joins it to "emailVisibility = TRUE", so that
//     email ~ 'ali%', email != 'x' or email = "" count no hidden email.
//     Sorting by email puts a hidden one as "" (PocketBase sorts by the
//     hidden values, which tells their order).
func recordFields(c *authn.Collection, superuser bool) map[string]listField[*authn.Record] {
	type R = *authn.Record
	email := strField(func(r R) string { return r.Email })
	if !superuser {
		email.field.Guard = func(r R) bool { return r.EmailVisibility }
		email.value = func(r R) any {
			if !r.EmailVisibility {
				return ""
			}
			return r.Email
		}
	}
	m := map[string]listField[R]{
		"id":              strField(func(r R) string { return r.ID }),
		"email":           email,
		"created":         strField(func(r R) string { return authn.Time{Time: r.Created}.String() }),
		"updated":         strField(func(r R) string { return authn.Time{Time: r.Updated}.String() }),
		"emailVisibility": numField(func(r R) float64 { return boolNum(r.EmailVisibility) }),
		"verified":        numField(func(r R) float64 { return boolNum(r.Verified) }),
	}
	for _, f := range c.Fields {
		if f.System || (f.Hidden && !superuser) || f.Type == authn.FieldAutodate || f.Type == authn.FieldFile {
			continue
		}
		name := f.Name
		switch f.Type {
		case authn.FieldNumber:
			m[name] = numField(func(r R) float64 { v, _ := r.Fields[name].(float64); return v })
		case authn.FieldBool:
			m[name] = numField(func(r R) float64 { v, _ := r.Fields[name].(bool); return boolNum(v) })
		default:
			m[name] = strField(func(r R) string { v, _ := r.Fields[name].(string); return v })
		}
	}
	return m
}

// collectionFields are the filterable fields of the collections list.
var collectionFields = map[string]listField[*authn.Collection]{
	"id":      strField(func(c *authn.Collection) string { return c.ID }),
	"name":    strField(func(c *authn.Collection) string { return c.Name }),
	"type":    strField(func(c *authn.Collection) string { return c.Type }),
	"system":  numField(func(c *authn.Collection) float64 { return boolNum(c.System) }),
	"created": strField(func(c *authn.Collection) string { return c.Created.String() }),
	"updated": strField(func(c *authn.Collection) string { return c.Updated.String() }),
}
