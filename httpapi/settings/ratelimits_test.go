package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
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

// firstConflictPairwise is the check as PocketBase words it: each rule
// against every rule before it.
func firstConflictPairwise(keys []string) int {
	for i, k := range keys {
		for _, s := range keys[:i] {
			if strings.HasPrefix(s, k) || strings.HasPrefix(k, s) {
				return i
			}
		}
	}
	return -1
}

// TestFirstConflict: the sorted check finds the conflict the pairwise one
// finds, on chosen cases and on random keys from a small alphabet (many
// prefixes and repeats).
func TestFirstConflict(t *testing.T) {
	tests := []struct {
		name string
		keys []string
		want int
	}{
		{"none", nil, -1},
		{"one", []string{"a@@"}, -1},
		{"distinct", []string{"/api/r1@@", "/api/r10@@", "/api/r2@@"}, -1},
		{"repeat", []string{"a@@", "b@@", "a@@"}, 2},
		{"all then a group", []string{"x@@", "x@@@guest"}, 1},
		{"a group then all", []string{"x@@@guest", "x@@"}, 1},
		{"the later index decides", []string{"a@@b", "c@@", "c@@", "a@@"}, 2},
		{"a prefix far in the sorted order", []string{"ab", "abz", "aba", "a"}, 1},
		{"groups do not conflict", []string{"x@@@auth", "x@@@guest"}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := firstConflict(tt.keys); got != tt.want {
				t.Errorf("firstConflict(%q) = %d, want %d", tt.keys, got, tt.want)
			}
			if got := firstConflictPairwise(tt.keys); got != tt.want {
				t.Errorf("firstConflictPairwise(%q) = %d, want %d (the case is wrong)", tt.keys, got, tt.want)
			}
		})
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for n := range 2000 {
		keys := make([]string, 1+rnd.IntN(12))
		for i := range keys {
			b := make([]byte, rnd.IntN(5))
			for j := range b {
				b[j] = "ab@"[rnd.IntN(3)]
			}
			keys[i] = string(b)
		}
		if got, want := firstConflict(keys), firstConflictPairwise(keys); got != want {
			t.Fatalf("case %d: firstConflict(%q) = %d, want %d", n, keys, got, want)
		}
	}
}

// TestRateLimitsMaxRules: a section of more than MaxRateLimitRules rules
// is refused at once (what an import would otherwise store), one of that
// many is accepted.
func TestRateLimitsMaxRules(t *testing.T) {
	for _, tt := range []struct {
		n  int
		ok bool
	}{{MaxRateLimitRules, true}, {MaxRateLimitRules + 1, false}} {
		rules := make([]RateLimitRule, tt.n)
		for i := range rules {
			rules[i] = RateLimitRule{Label: fmt.Sprintf("/api/r%d", i), Duration: 1, MaxRequests: 1}
		}
		err := RateLimits{Rules: rules, Enabled: true}.validateRules()
		if e, _ := err.(*validation.Error); (err == nil) != tt.ok || (!tt.ok && (e == nil || e.Code != validation.CodeLengthTooLong)) {
			t.Errorf("%d rules: validateRules() = %v, want accepted %v (else %s)", tt.n, err, tt.ok, validation.CodeLengthTooLong)
		}
	}
}

// BenchmarkValidateRateLimits validates n rules with distinct labels
// (the conflict check compares them all).
func BenchmarkValidateRateLimits(b *testing.B) {
	for _, n := range []int{1000, MaxRateLimitRules} {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			rules := make([]RateLimitRule, n)
			for i := range rules {
				rules[i] = RateLimitRule{Label: fmt.Sprintf("/api/r%d", i), Duration: 1, MaxRequests: 1}
			}
			rl := RateLimits{Rules: rules, Enabled: true}
			for b.Loop() {
				if err := rl.validateRules(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
