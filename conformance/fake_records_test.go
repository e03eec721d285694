package conformance

import (
	"regexp"
)

// The fake's records of auth collections: sign-up and access rules.

func (f *fakeServer) handleRecords(q *fakeReq, collName, id string) error {
	r := q.r
	c := f.collection(collName)
	if c == nil || c.typ != "auth" {
		return ferr(404, msgNotFound)
	}
	isSU := q.authColl != nil && q.authColl.name == "_superusers"
	// users has the rules of PocketBase's default users collection (owner
	// only, public create); every other auth collection is superusers only.
	ownerRules := c.name == "users"
	public := func(rec *fakeRecord) map[string]any {
		out := recordJSON(c, rec)
		out["emailVisibility"] = rec.emailVisibility
		if !rec.emailVisibility && !isSU && q.auth != rec {
			delete(out, "email")
		}
		return out
	}
	switch {
	case r.Method == "GET" && id == "":
		if !ownerRules && !isSU {
			return ferr(403, msgOnlySuperusers)
		}
		items := []any{}
		for _, rec := range c.records {
			if isSU || q.auth == rec {
				items = append(items, public(rec))
			}
		}
		return q.json(200, map[string]any{"items": items, "page": 1, "perPage": 30,
			"totalItems": len(items), "totalPages": 1})
	case r.Method == "GET" && id != "":
		if !ownerRules && !isSU {
			return ferr(403, msgOnlySuperusers)
		}
		rec := c.records[id]
		if rec == nil || (!isSU && q.auth != rec) {
			return ferr(404, msgNotFound)
		}
		return q.json(200, public(rec))
	case r.Method == "POST" && id == "":
		if !ownerRules && !isSU {
			return ferr(403, msgOnlySuperusers)
		}
		body, err := readBody(r)
		if err != nil {
			return err
		}
		if data := f.signUpErrors(c, body); len(data) > 0 {
			return &fakeErr{status: 400, msg: msgCreateFailed, data: data}
		}
		email, _ := body["email"].(string)
		pw, _ := body["password"].(string)
		vis, _ := body["emailVisibility"].(bool)
		rec := &fakeRecord{id: fakeID(), email: email, password: pw, tokenKey: fakeID(), created: fakeNow(), emailVisibility: vis}
		c.records[rec.id] = rec
		return q.json(200, public(rec))
	case r.Method == "PATCH" && id != "":
		if !isSU {
			return ferr(403, msgNotAllowed)
		}
		rec := c.records[id]
		if rec == nil {
			return ferr(404, msgNotFound)
		}
		body, err := readBody(r)
		if err != nil {
			return err
		}
		if v, ok := body["id"]; ok && v != id {
			if !f.bug("pk-change") {
				return &fakeErr{status: 400, msg: "Failed to update record.", data: map[string]any{
					"id": map[string]any{"code": codePKChange, "message": "The record primary key cannot be changed."}}}
			}
			newID, _ := v.(string)
			delete(c.records, id)
			rec.id = newID
			c.records[newID] = rec
		}
		if v, ok := body["verified"].(bool); ok {
			rec.verified = v
		}
		if pw, _ := body["password"].(string); pw != "" && body["passwordConfirm"] == pw {
			rec.password = pw
			if !f.bug("no-key-rotation") {
				rec.tokenKey = fakeID()
			}
		}
		return q.json(200, recordJSON(c, rec))
	case r.Method == "DELETE" && id != "":
		if !isSU {
			return ferr(403, msgNotAllowed)
		}
		if c.records[id] == nil {
			return ferr(404, msgNotFound)
		}
		if c.deleted == nil {
			c.deleted = map[string]*fakeRecord{}
		}
		c.deleted[id] = c.records[id]
		delete(c.records, id)
		q.w.WriteHeader(204)
		return nil
	}
	return ferr(404, msgNotFound)
}

var reFakeEmail = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[^@\s]+$`)

// signUpErrors validates a sign-up body as PocketBase does: the form's
// password fields first, then the record's fields.
func (f *fakeServer) signUpErrors(c *fakeCollection, body map[string]any) map[string]any {
	fe := func(code, msg string) map[string]any { return map[string]any{"code": code, "message": msg} }
	data := map[string]any{}
	email, _ := body["email"].(string)
	pw, _ := body["password"].(string)
	confirm, _ := body["passwordConfirm"].(string)
	if pw == "" {
		data["password"] = fe(codeRequired, "Cannot be blank.")
	}
	if confirm == "" {
		data["passwordConfirm"] = fe(codeRequired, "Cannot be blank.")
	} else if confirm != pw {
		data["passwordConfirm"] = fe(codeMismatch, "Values don't match.")
	}
	if len(data) > 0 {
		return data
	}
	switch {
	case len(pw) < 8:
		data["password"] = fe(codeMinText, "Must be at least 8 character(s).")
	case len(pw) > 71:
		data["password"] = fe(codeMaxText, "Must be less than 71 character(s).")
	}
	switch {
	case email == "":
		data["email"] = fe(codeRequired, "Cannot be blank.")
	case !reFakeEmail.MatchString(email):
		data["email"] = fe(codeIsEmail, "Must be a valid email address.")
	default:
		for _, rec := range c.records {
			if rec.email == email {
				data["email"] = fe(codeNotUnique, "Value must be unique.")
			}
		}
	}
	return data
}
