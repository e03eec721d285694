package conformance

import (
	"encoding/json"
)

// The fake's settings API (rate limits live in fake_ratelimit_test.go).

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
			if err := f.patchRateLimits(rl); err != nil {
				return err
			}
		}
		if tp, ok := body["trustedProxy"].(map[string]any); ok {
			f.settings["trustedProxy"] = tp
		}
		if logs, ok := body["logs"].(map[string]any); ok {
			if d, ok := logs["maxDays"].(float64); ok && d < 0 && !f.bugs["settings-accept-negative"] {
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
