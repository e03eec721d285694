package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"strongbox/authn"
)

// newSignInBench serves the API in process (no sockets, so that the
// figures are the server's own) with one user, ann@example.com, whose
// password is hashed at bcrypt's minimum cost, so that the sign-in path
// around the hash weighs in the figures. authRule, when not "", is set
// on users (it must admit ann).
func newSignInBench(b *testing.B, authRule string) http.Handler {
	b.Helper()
	clk := &clock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	auth, set, logs := openBenchStores(b, bcrypt.MinCost, clk)
	users, _ := auth.Collection(authn.UsersName)
	if authRule != "" {
		var err error
		if users, err = auth.UpdateCollection(users, authn.CollectionInput{Values: map[string]any{"authRule": authRule}}); err != nil {
			b.Fatal(err)
		}
	}
	p := "password1"
	if _, err := auth.CreateRecord(b.Context(), users, authn.RecordInput{Values: map[string]any{
		"email": "ann@example.com", "password": p, "passwordConfirm": p,
	}}); err != nil {
		b.Fatal(err)
	}
	return NewServer(Config{Auth: auth, Logs: logs, Settings: set, Now: clk.Now})
}

// serveBench sends one request to h and returns the recorded answer,
// failing the benchmark on any status but 200.
func serveBench(b *testing.B, h http.Handler, path, token, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		b.Fatalf("%s: %d %s", path, w.Code, w.Body)
	}
	return w
}

// signInRules are the authRule variants BenchmarkSignIn runs with: none
// ("", anyone) and a filter over the record and the request, which ann
// satisfies. Compare them with benchstat:
//
//	go test ./httpapi/api -run - -bench SignIn -count 10 > signin.txt
//	benchstat -col /authRule signin.txt
var signInRules = []struct{ name, rule string }{
	{"unset", ""},
	{"set", "verified = false && email ~ '@example.com' && @request.context != 'otp' && @request.method = 'POST'"},
}

// BenchmarkSignIn measures the two sign-in paths every client takes, in
// process: a password login (bcrypt at its minimum cost) and an
// auth-refresh of the token it gave, with authRule unset and set.
//
//	go test ./httpapi/api -run - -bench SignIn -count 6
func BenchmarkSignIn(b *testing.B) {
	const login = `{"identity":"ann@example.com","password":"password1"}`
	for _, ar := range signInRules {
		b.Run("password/authRule="+ar.name, func(b *testing.B) {
			h := newSignInBench(b, ar.rule)
			for b.Loop() {
				serveBench(b, h, "/api/collections/users/auth-with-password", "", login)
			}
		})
	}
	for _, ar := range signInRules {
		b.Run("refresh/authRule="+ar.name, func(b *testing.B) {
			h := newSignInBench(b, ar.rule)
			w := serveBench(b, h, "/api/collections/users/auth-with-password", "", login)
			var res struct{ Token string }
			if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				serveBench(b, h, "/api/collections/users/auth-refresh", res.Token, "")
			}
		})
	}
}
