package conformance

import (
	"encoding/json"
	"net/url"
)

// The fake's settings API. It keeps rateLimits as they are patched, and
// limits nothing: the rate limits are checked against the real strongbox
// (mutators_ratelimits_test.go).

func (f *fakeServer) handleSettings(q *fakeReq) error {
	if q.auth == nil {
		return ferr(401, msgNeedsToken)
	}
	if q.authColl.name != "_superusers" {
		return ferr(403, msgNotAllowed)
	}
	if q.r.Method == "PATCH" {
		body, err := readBody(q.r)
		if err != nil {
			return err
		}
		if rl, ok := body["rateLimits"].(map[string]any); ok {
			cur := f.settings["rateLimits"].(map[string]any)
			for k, v := range rl {
				cur[k] = v
			}
		}
		if smtp, ok := body["smtp"].(map[string]any); ok {
			if f.refuseSMTP {
				return &fakeErr{status: 400, msg: msgSettingsSave, data: map[string]any{"smtp": map[string]any{
					"host": map[string]any{"code": "validation_is_host", "message": "Must be a valid host."}}}}
			}
			cur := f.settings["smtp"].(map[string]any)
			for k, v := range smtp {
				if k != "password" {
					cur[k] = v
				}
			}
		}
		if b, ok := body["backups"].(map[string]any); ok {
			if err := f.patchBackupsS3(b); err != nil {
				return err
			}
		}
		if tp, ok := body["trustedProxy"].(map[string]any); ok {
			f.settings["trustedProxy"] = tp
		}
		if logs, ok := body["logs"].(map[string]any); ok {
			if d, ok := logs["maxDays"].(float64); ok && d < 0 {
				return &fakeErr{status: 400, msg: msgSettingsSave, data: map[string]any{"logs": map[string]any{
					"maxDays": map[string]any{"code": codeMinGreaterThan, "message": "Must be no less than 0.",
						"params": map[string]any{"threshold": 0}}}}}
			}
			cur := f.settings["logs"].(map[string]any)
			for k, v := range logs {
				cur[k] = v
			}
		}
	}
	var out map[string]any
	_ = json.Unmarshal([]byte(mustJSON(f.settings)), &out) // a copy
	return q.json(200, out)
}

// handleTestEmail is POST /api/settings/test/email: it checks who asks
// and the body, and sends nothing.
func (f *fakeServer) handleTestEmail(q *fakeReq) error {
	if q.auth == nil {
		return ferr(401, msgNeedsToken)
	}
	if q.authColl.name != "_superusers" {
		return ferr(403, msgNotAllowed)
	}
	body, err := readBody(q.r)
	if err != nil {
		return err
	}
	data := map[string]any{}
	for _, k := range []string{"email", "template"} {
		if v, _ := body[k].(string); v == "" {
			data[k] = map[string]any{"code": codeRequired, "message": "Cannot be blank."}
		}
	}
	if len(data) > 0 {
		return &fakeErr{status: 400, msg: msgTestEmailFailed, data: data}
	}
	q.w.WriteHeader(204)
	return nil
}

// patchBackupsS3 validates and keeps backups.s3 of a PATCH body b as
// PocketBase does: bucket, region, endpoint, accessKey and secret required
// when enabled, the endpoint an http(s) URL. The secret is never kept.
func (f *fakeServer) patchBackupsS3(b map[string]any) error {
	s3, ok := b["s3"].(map[string]any)
	if !ok {
		return nil
	}
	next := map[string]any{}
	for k, v := range f.settings["backups"].(map[string]any)["s3"].(map[string]any) {
		next[k] = v
	}
	for k, v := range s3 {
		next[k] = v
	}
	data := map[string]any{}
	if next["enabled"] == true {
		for _, k := range []string{"bucket", "region", "endpoint", "accessKey", "secret"} {
			if v, _ := next[k].(string); v == "" {
				data[k] = map[string]any{"code": codeRequired, "message": "Cannot be blank."}
			}
		}
	}
	if e, _ := next["endpoint"].(string); e != "" {
		if u, err := url.Parse(e); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			data["endpoint"] = map[string]any{"code": codeIsURL, "message": "Must be a valid URL."}
		}
	}
	if len(data) > 0 {
		return &fakeErr{status: 400, msg: msgSettingsSave, data: map[string]any{"backups": map[string]any{"s3": data}}}
	}
	delete(next, "secret")
	f.settings["backups"].(map[string]any)["s3"] = next
	return nil
}

// handleTestS3 is POST /api/settings/test/s3: it checks who asks and the
// body; no bucket is ever enabled, so a valid body is "not enabled".
func (f *fakeServer) handleTestS3(q *fakeReq) error {
	if q.auth == nil {
		return ferr(401, msgNeedsToken)
	}
	if q.authColl.name != "_superusers" {
		return ferr(403, msgNotAllowed)
	}
	body, err := readBody(q.r)
	if err != nil {
		return err
	}
	switch fs, _ := body["filesystem"].(string); fs {
	case "":
		return &fakeErr{status: 400, msg: msgTestS3Failed, data: map[string]any{"filesystem": map[string]any{"code": codeRequired, "message": "Cannot be blank."}}}
	case "storage", "backups":
		return ferr(400, msgTestS3Failed+" Raw error: \nS3 storage filesystem is not enabled.")
	}
	return &fakeErr{status: 400, msg: msgTestS3Failed, data: map[string]any{"filesystem": map[string]any{"code": codeInInvalid, "message": "Must be a valid value."}}}
}
