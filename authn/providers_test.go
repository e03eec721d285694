package authn

import (
	"encoding/json"
	"errors"
	"testing"

	"strongbox/authn/validation"
)

// TestProviderValidation: oauth2.providers is checked on save with
// PocketBase v0.31.0's codes and messages, and the error sits at
// oauth2.providers.<index>.<key>.
func TestProviderValidation(t *testing.T) {
	s, _, _ := newTestStore(t)
	users, _ := s.Collection(UsersName)
	tests := []struct {
		name, body string
		want       string // the JSON of the oauth2.providers errors; "" = saved
	}{
		{"preset", `{"oauth2":{"enabled":true,"providers":[{"name":"google","clientId":"id","clientSecret":"s"}]}}`, ""},
		{"oidc with urls", `{"oauth2":{"providers":[{"name":"oidc2","clientId":"id","clientSecret":"s","authURL":"https://idp.test/auth","tokenURL":"http://127.0.0.1:9/token","userInfoURL":""}]}}`, ""},
		{"unknown name", `{"oauth2":{"providers":[{"name":"myidp","clientId":"id","clientSecret":"s"}]}}`,
			`{"0":{"name":{"code":"validation_missing_provider","message":"Invalid or missing provider with name myidp.","params":{"name":"myidp"}}}}`},
		{"no name", `{"oauth2":{"providers":[{"clientId":"id","clientSecret":"s"}]}}`,
			`{"0":{"name":{"code":"validation_required","message":"Cannot be blank."}}}`},
		{"duplicated", `{"oauth2":{"providers":[{"name":"github","clientId":"a","clientSecret":"s"},{"name":"github","clientId":"b","clientSecret":"s"}]}}`,
			`{"1":{"name":{"code":"validation_duplicated_provider","message":"The provider github is already registered.","params":{"name":"github"}}}}`},
		{"credentials required", `{"oauth2":{"providers":[{"name":"gitlab"}]}}`,
			`{"0":{"clientId":{"code":"validation_required","message":"Cannot be blank."},"clientSecret":{"code":"validation_required","message":"Cannot be blank."}}}`},
		{"urls http(s) only", `{"oauth2":{"providers":[{"name":"oidc","clientId":"id","clientSecret":"s","authURL":"javascript:alert(1)","tokenURL":"/token","userInfoURL":"ftp://x/y"}]}}`,
			`{"0":{"authURL":{"code":"validation_is_url","message":"Must be a valid URL."},"tokenURL":{"code":"validation_is_url","message":"Must be a valid URL."},"userInfoURL":{"code":"validation_is_url","message":"Must be a valid URL."}}}`},
		{"urls with a host and no credentials", `{"oauth2":{"providers":[{"name":"gitlab","clientId":"id","clientSecret":"s","authURL":"https://user:pass@idp.test/auth","tokenURL":"file:///etc/passwd","userInfoURL":"http:///userinfo"}]}}`,
			`{"0":{"authURL":{"code":"validation_is_url","message":"Must be a valid URL."},"tokenURL":{"code":"validation_is_url","message":"Must be a valid URL."},"userInfoURL":{"code":"validation_is_url","message":"Must be a valid URL."}}}`},
		{"blank", `{"oauth2":{"providers":[{}]}}`,
			`{"0":{"clientId":{"code":"validation_required","message":"Cannot be blank."},"clientSecret":{"code":"validation_required","message":"Cannot be blank."},"name":{"code":"validation_required","message":"Cannot be blank."}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.UpdateCollection(users, input(t, tt.body))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("UpdateCollection(%s) = %v, want saved", tt.body, err)
				}
				return
			}
			var ce validation.Errors
			if !errors.As(err, &ce) {
				t.Fatalf("UpdateCollection(%s) = %v, want validation errors", tt.body, err)
			}
			got, _ := json.Marshal(ce["oauth2"].(validation.Errors)["providers"])
			if string(got) != tt.want {
				t.Errorf("UpdateCollection(%s): oauth2.providers errors\n got %s\nwant %s", tt.body, got, tt.want)
			}
		})
	}
}

// TestProviderSecretKept: a PATCH that sends a provider back without its
// clientSecret (as the API reports it) keeps the stored one; a provider
// list decoded over the stored one does not lend a secret to another
// provider at the same index.
func TestProviderSecretKept(t *testing.T) {
	s, _, path := newTestStore(t)
	users, _ := s.Collection(UsersName)
	users, err := s.UpdateCollection(users, input(t, `{"oauth2":{"enabled":true,"providers":[{"name":"google","clientId":"id","clientSecret":"g-secret","pkce":false}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := json.Marshal(users.Public().OAuth2)
	if want := `{"providers":[{"pkce":false,"name":"google","clientId":"id","authURL":"","tokenURL":"","userInfoURL":"","displayName":"","extra":null}],"mappedFields":{"id":"","name":"name","username":"","avatarURL":"avatar"},"enabled":true}`; string(pub) != want {
		t.Errorf("reported oauth2\n got %s\nwant %s", pub, want)
	}
	users, err = s.UpdateCollection(users, input(t, `{"oauth2":{"providers":[{"name":"google","clientId":"id2"}]}}`))
	if err != nil {
		t.Fatalf("PATCH without clientSecret: %v", err)
	}
	if p := users.OAuth2.Provider("google"); p.ClientSecret != "g-secret" || p.ClientID != "id2" || p.PKCE != nil {
		t.Errorf("google after PATCH = %+v, want the secret kept, clientId id2, pkce null", p)
	}
	_, err = s.UpdateCollection(users, input(t, `{"oauth2":{"providers":[{"name":"github","clientId":"id"}]}}`))
	var ce validation.Errors
	if !errors.As(err, &ce) {
		t.Fatalf("github without a secret = %v, want clientSecret required", err)
	}
	s.Close()
	s = openTestStore(t, path, &testClock{})
	defer s.Close()
	users, _ = s.Collection(UsersName)
	if p := users.OAuth2.Provider("google"); p == nil || p.ClientSecret != "g-secret" {
		t.Errorf("after reopen google = %+v, want the secret", p)
	}
}
