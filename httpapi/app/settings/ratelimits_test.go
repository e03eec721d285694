package settings

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"strongbox/authn/validation"
)

func TestRateLimitsDefaults(t *testing.T) {
	b, err := json.Marshal(Defaults().Public().RateLimits)
	if err != nil {
		t.Fatal(err)
	}
	// PocketBase v0.31.0's document, byte for byte, as it answers it.
	want := `{"rules":[{"label":"*:auth","audience":"","duration":3,"maxRequests":2},{"label":"*:create","audience":"","duration":5,"maxRequests":20},{"label":"/api/batch","audience":"","duration":1,"maxRequests":3},{"label":"/api/","audience":"","duration":10,"maxRequests":300}],"enabled":false}`
	if string(b) != want {
		t.Errorf("default rateLimits = %s\nwant %s", b, want)
	}
}

func TestRateLimitsValidation(t *testing.T) {
	required := map[string]any{"code": "validation_required", "message": "Cannot be blank."}
	min1 := map[string]any{"code": "validation_min_greater_equal_than_required", "message": "Must be no less than 1.", "params": map[string]any{"threshold": float64(1)}}
	format := map[string]any{"code": "validation_match_invalid", "message": "Must be in a valid format."}
	in := map[string]any{"code": "validation_in_invalid", "message": "Must be a valid value."}
	conflict := func(label string) map[string]any {
		return map[string]any{"code": "validation_conflicting_rate_limit_rule",
			"message": "Rate limit rule configuration with label " + label + " already exists or conflicts with another rule.",
			"params":  map[string]any{"label": label}}
	}
	tests := []struct {
		name string
		body string
		want any // the errors under rateLimits.rules; nil: accepted
	}{
		{"enabled without rules", `{"rateLimits":{"enabled":true,"rules":[]}}`, required},
		{"disabled without rules", `{"rateLimits":{"enabled":false,"rules":[]}}`, nil},
		{"enabled with the defaults", `{"rateLimits":{"enabled":true}}`, nil},
		{"every field wrong", `{"rateLimits":{"rules":[{"label":"bad label!","maxRequests":-1,"duration":-5,"audience":"@all"}]}}`,
			map[string]any{"0": map[string]any{"label": format, "maxRequests": min1, "duration": min1, "audience": in}}},
		{"zeros are blank", `{"rateLimits":{"rules":[{"label":"","maxRequests":0,"duration":0,"audience":""}]}}`,
			map[string]any{"0": map[string]any{"label": required, "maxRequests": required, "duration": required}}},
		{"only the bad rule reported", `{"rateLimits":{"rules":[{"label":"/api/","maxRequests":1,"duration":1},{"label":"GET /api/{x}","maxRequests":1,"duration":1}]}}`,
			map[string]any{"1": map[string]any{"label": format}}},
		{"every label form", `{"rateLimits":{"rules":[{"label":"tag_a","maxRequests":1,"duration":1},{"label":"users:create","maxRequests":1,"duration":1},{"label":"*:auth","maxRequests":1,"duration":1},{"label":"/","maxRequests":1,"duration":1},{"label":"POST /api/collections/","maxRequests":1,"duration":1}]}}`, nil},
		{"duplicate label", `{"rateLimits":{"rules":[{"label":"*:auth","maxRequests":1,"duration":1},{"label":"/api/","maxRequests":1,"duration":1},{"label":"*:auth","maxRequests":9,"duration":9}]}}`,
			map[string]any{"2": map[string]any{"label": conflict("*:auth")}}},
		{"all and guest conflict", `{"rateLimits":{"rules":[{"label":"*:auth","maxRequests":1,"duration":1},{"label":"*:auth","audience":"@guest","maxRequests":1,"duration":1}]}}`,
			map[string]any{"1": map[string]any{"label": conflict("*:auth")}}},
		{"guest and auth do not conflict", `{"rateLimits":{"rules":[{"label":"*:auth","audience":"@auth","maxRequests":1,"duration":1},{"label":"*:auth","audience":"@guest","maxRequests":1,"duration":1}]}}`, nil},
		{"conflict hides field errors", `{"rateLimits":{"rules":[{"label":"x","maxRequests":-1,"duration":1},{"label":"x","maxRequests":1,"duration":1}]}}`,
			map[string]any{"1": map[string]any{"label": conflict("x")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(filepath.Join(t.TempDir(), "s"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, err = patch(s, tt.body)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("patch(%s) = %v, want accepted", tt.body, err)
				}
				return
			}
			ve, ok := errors.AsType[validation.Errors](err)
			if !ok {
				t.Fatalf("patch(%s) = %v, want a validation.Errors", tt.body, err)
			}
			// Compare the JSON the client sees.
			b, _ := json.Marshal(ve)
			var got map[string]any
			json.Unmarshal(b, &got)
			want := map[string]any{"rateLimits": map[string]any{"rules": tt.want}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("patch(%s) errors (-want +got):\n%s", tt.body, diff)
			}
			if diff := cmp.Diff(DefaultRateLimits(), s.Get().RateLimits); diff != "" {
				t.Errorf("a refused patch changed rateLimits (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRateLimitsPatch(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "s"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before := s.Get()
	// A rule sent with some fields keeps the others of the rule at its
	// index; rules past the sent ones are dropped.
	v, err := patch(s, `{"rateLimits":{"enabled":true,"rules":[{"label":"users:auth"},{"maxRequests":7}]}}`)
	if err != nil {
		t.Fatal(err)
	}
	want := RateLimits{Enabled: true, Rules: []RateLimitRule{
		{Label: "users:auth", Duration: 3, MaxRequests: 2},
		{Label: "*:create", Duration: 5, MaxRequests: 7},
	}}
	if diff := cmp.Diff(want, v.RateLimits); diff != "" {
		t.Errorf("after the patch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(DefaultRateLimits(), before.RateLimits); diff != "" {
		t.Errorf("the patch changed a value Get returned earlier (-want +got):\n%s", diff)
	}
	v, err = patch(s, `{"rateLimits":{"enabled":false,"rules":null}}`)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(v.Public().RateLimits); string(b) != `{"rules":[],"enabled":false}` {
		t.Errorf("no rules serialised as %s", b)
	}
}
