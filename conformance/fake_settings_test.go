package conformance

import (
	"encoding/json"
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
