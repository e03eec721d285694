package validation

import (
	"encoding/json"
	"testing"
)

func TestErrorsError(t *testing.T) {
	tests := []struct {
		name string
		errs Errors
		want string
	}{
		{"empty", Errors{}, "validation: no failures"},
		{"one", Errors{"email": Required()}, "email: Cannot be blank."},
		{"sorted", Errors{"password": Required(), "email": IsEmail(), "name": MatchInvalid()},
			"email: Must be a valid email address.; name: Must be in a valid format.; password: Cannot be blank."},
		{"nested", Errors{"oauth2": Errors{"enabled": New(CodeSuperusersOAuth2, "no")}, "name": Required()},
			"name: Cannot be blank.; oauth2.enabled: no"},
		{"indexes by number", Errors{"rules": Errors{"10": Errors{"label": Required()}, "2": Errors{"label": MatchInvalid()}}},
			"rules.2.label: Must be in a valid format.; rules.10.label: Cannot be blank."},
		{"empty nested set", Errors{"a": Errors{}, "b": Required()}, "b: Cannot be blank."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 20 { // map order varies from call to call
				if got := tt.errs.Error(); got != tt.want {
					t.Fatalf("Error() = %q, want %q", got, tt.want)
				}
			}
		})
	}
}

func TestErrorsJSON(t *testing.T) {
	errs := Errors{"email": Required()}
	errs.Sub("rules").Sub("0")["label"] = MinGreaterEqual(1)
	b, err := json.Marshal(errs)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"email":{"code":"validation_required","message":"Cannot be blank."},"rules":{"0":{"label":{"code":"validation_min_greater_equal_than_required","message":"Must be no less than 1.","params":{"threshold":1}}}}}`
	if string(b) != want {
		t.Errorf("json.Marshal = %s, want %s", b, want)
	}
}

func TestSubReplacesError(t *testing.T) {
	errs := Errors{"mfa": Required()}
	errs.Sub("mfa")["enabled"] = Required()
	if got, want := errs.Error(), "mfa.enabled: Cannot be blank."; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
