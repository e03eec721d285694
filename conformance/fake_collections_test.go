package conformance

import (
	"maps"
	"regexp"
	"strings"
)

// The fake's collections API and the guarantees of system collections.

func (f *fakeServer) handleCollections(q *fakeReq, name string) error {
	r := q.r
	if q.auth == nil {
		return ferr(401, msgNeedsToken)
	}
	if q.authColl.name != "_superusers" {
		return ferr(403, msgNotAllowed)
	}
	view := func(c *fakeCollection) map[string]any {
		m := map[string]any{"id": c.id, "name": c.name, "type": c.typ, "system": c.system}
		for k, v := range c.rules {
			m[k] = v
		}
		if c.typ == "auth" {
			m["oauth2"] = c.oauth2View()
			m["passwordAuth"] = map[string]any{"enabled": c.passwordEnabled}
			m["authToken"] = map[string]any{"duration": float64(c.duration)}
			for k, v := range c.durations {
				m[k] = map[string]any{"duration": v}
			}
			m["otp"], m["mfa"] = maps.Clone(c.otp), maps.Clone(c.mfa)
		}
		return m
	}
	switch {
	case r.Method == "GET" && name == "":
		items := []any{}
		for _, c := range f.collections {
			items = append(items, view(c))
		}
		return q.json(200, map[string]any{"items": items, "page": 1, "perPage": 1000,
			"totalItems": len(items), "totalPages": 1})
	case r.Method == "GET" && name != "":
		c := f.collection(name)
		if c == nil {
			return ferr(404, msgNotFound)
		}
		return q.json(200, view(c))
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	switch {
	case r.Method == "POST" && name == "":
		n, _ := body["name"].(string)
		typ, _ := body["type"].(string)
		if n == "" || f.collection(n) != nil {
			return ferr(400, msgValidation)
		}
		c := f.addCollection("pbc_"+newNonce(10), n, typ)
		return q.json(200, view(c))
	case r.Method == "PATCH" && name != "":
		c := f.collection(name)
		if c == nil {
			return ferr(404, msgNotFound)
		}
		if _, ok := body["oauth2"]; ok && f.refuseOAuth2 {
			return &fakeErr{status: 400, msg: "Failed to update collection.", data: map[string]any{
				"oauth2": map[string]any{"code": "validation_invalid_value", "message": "Invalid value."}}}
		}
		if data := f.patchCollection(c, body); len(data) > 0 {
			return &fakeErr{status: 400, msg: "Failed to update collection.", data: data}
		}
		return q.json(200, view(c))
	case r.Method == "DELETE" && name != "":
		for i, c := range f.collections {
			if c.name == name || c.id == name {
				f.collections = append(f.collections[:i], f.collections[i+1:]...)
				q.w.WriteHeader(204)
				return nil
			}
		}
		return ferr(404, msgNotFound)
	}
	return ferr(404, msgNotFound)
}

// reFakeMFARule is the one form of mfa.rule the fake evaluates.
var reFakeMFARule = regexp.MustCompile(`^email = "([^"]*)"$`)

// patchCollection applies body to c as PocketBase's collection validator
// does for the options the fake has, or returns the validation errors (and
// changes nothing). Like PocketBase, it turns OAuth2 off and password auth
// on again for _superusers instead of refusing them.
func (f *fakeServer) patchCollection(c *fakeCollection, body map[string]any) map[string]any {
	fe := func(code string) map[string]any { return map[string]any{"code": code, "message": "Invalid value."} }
	data := map[string]any{}
	for k := range c.rules {
		if v, ok := body[k]; ok && v != c.rules[k] && c.system {
			data[k] = fe(codeSystemRule)
		}
	}
	if v, ok := body["name"].(string); ok && v != c.name && c.system {
		data["name"] = fe(codeSystemName)
	}
	if m, ok := body["mfa"].(map[string]any); ok {
		// The fake's filter language for mfa.rule knows one form, email =
		// "<address>", the one the suite sends; any other rule is invalid.
		rule, _ := m["rule"].(string)
		secret := strings.Contains(rule, "password") // a rule may not read secrets
		if rule != "" && !reFakeMFARule.MatchString(rule) &&
			!(f.bug("mfa-rule-unchecked") && !secret) && !(f.bug("mfa-rule-reads-secrets") && secret) {
			data["mfa"] = map[string]any{"rule": fe("validation_invalid_rule")}
		}
	}
	if v, ok := body["type"].(string); ok && v != c.typ {
		data["type"] = fe(codeTypeChange)
	}
	durations := map[string]float64{}
	for _, k := range tokenConfigKeys {
		tc, _ := body[k].(map[string]any)
		d, ok := tc["duration"].(float64)
		if !ok {
			continue
		}
		switch {
		case d == 0:
			data[k] = map[string]any{"duration": fe(codeRequired)}
		case d < 10:
			data[k] = map[string]any{"duration": fe(codeMinGreaterThan)}
		case d > maxTokenDuration:
			data[k] = map[string]any{"duration": fe(codeMaxLessEqual)}
		}
		durations[k] = d
	}
	if len(data) > 0 {
		return data
	}
	for k := range c.rules {
		if v, ok := body[k]; ok {
			c.rules[k] = v
		}
	}
	if v, ok := body["name"].(string); ok {
		c.name = v
	}
	for k, d := range durations {
		if k == "authToken" {
			c.duration = int64(d)
		} else {
			c.durations[k] = d
		}
	}
	if o, ok := body["oauth2"].(map[string]any); ok {
		if en, ok := o["enabled"].(bool); ok {
			c.oauth2Enabled = en && (!c.system || f.bug("superusers-oauth2"))
		}
		c.setOAuth2Providers(o, !c.system || f.bug("superusers-oauth2"))
	}
	for key, opt := range map[string]map[string]any{"otp": c.otp, "mfa": c.mfa} {
		if o, ok := body[key].(map[string]any); ok {
			maps.Copy(opt, o)
		}
	}
	if pa, ok := body["passwordAuth"].(map[string]any); ok {
		if en, ok := pa["enabled"].(bool); ok {
			c.passwordEnabled = en || c.system
		}
	}
	return nil
}
