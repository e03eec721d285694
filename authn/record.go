package authn

import (
	"maps"
	"time"
)

// Record is a record of an auth collection. Records are immutable once
// stored: an update stores a new *Record, so a caller may keep and read one
// without locks.
type Record struct {
	ID              string         `json:"id"`
	CollectionID    string         `json:"collectionId"`
	Email           string         `json:"email"`
	EmailVisibility bool           `json:"emailVisibility"`
	Verified        bool           `json:"verified"`
	PasswordHash    string         `json:"passwordHash"`
	TokenKey        string         `json:"tokenKey"`
	Created         time.Time      `json:"created"`
	Updated         time.Time      `json:"updated"`
	Fields          map[string]any `json:"fields,omitempty"` // custom fields by name
}

// clone returns a copy of r that may be changed without affecting r.
func (r *Record) clone() *Record {
	c := *r
	c.Fields = maps.Clone(r.Fields)
	return &c
}

// Public returns the record as clients see it: a flat object (maps marshal
// with sorted keys, as PocketBase's records do) with the collection's id and
// name, never the password hash or token key, the email only when showEmail
// is true or the record made it visible, and c's hidden fields only when
// showHidden is true (PocketBase v0.31.0 shows them to superusers).
func (r *Record) Public(c *Collection, showEmail, showHidden bool) map[string]any {
	m := make(map[string]any, 10+len(c.Fields))
	m["id"] = r.ID
	m["collectionId"] = c.ID
	m["collectionName"] = c.Name
	m["emailVisibility"] = r.EmailVisibility
	m["verified"] = r.Verified
	if showEmail || r.EmailVisibility {
		m["email"] = r.Email
	}
	for i := range c.Fields {
		f := &c.Fields[i]
		if f.System || (f.Hidden && !showHidden) {
			continue
		}
		switch f.Type {
		case FieldAutodate:
			t := r.Created
			if f.Name == "updated" {
				t = r.Updated
			}
			m[f.Name] = Time{t}
		default:
			if v, ok := r.Fields[f.Name]; ok {
				m[f.Name] = v
			} else {
				m[f.Name] = f.zero()
			}
		}
	}
	return m
}
