package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"strongbox/authn"
	"strongbox/authn/totp"
)

// BenchmarkTOTPSignIn compares a password sign-in with a password sign-in
// completed by a TOTP code (auth-with-password's 401 {"mfaId"}, then
// auth-with-totp), in process, at bcrypt's minimum cost and at its
// default (10, bcrypt-bound as a real server is). Each iteration moves the
// clock a step on, so that every code is a fresh one.
//
//	go test ./httpapi/api -run - -bench TOTPSignIn -count 6
func BenchmarkTOTPSignIn(b *testing.B) {
	for _, cost := range []int{bcrypt.MinCost, bcrypt.DefaultCost} {
		for _, withTOTP := range []bool{false, true} {
			name := "password"
			if withTOTP {
				name = "password+totp"
			}
			b.Run(name+"/cost="+strconv.Itoa(cost), func(b *testing.B) {
				h, clk, key := newTOTPBench(b, cost, withTOTP)
				const login = `{"identity":"ann@example.com","password":"password1"}`
				for b.Loop() {
					clk.Add(totp.Period)
					w := serveStatus(h, "/api/collections/users/auth-with-password", login)
					if !withTOTP {
						if w.Code != http.StatusOK {
							b.Fatalf("password: %d %s", w.Code, w.Body)
						}
						continue
					}
					var m struct {
						MFAID string `json:"mfaId"`
					}
					if w.Code != http.StatusUnauthorized || json.Unmarshal(w.Body.Bytes(), &m) != nil {
						b.Fatalf("password: %d %s", w.Code, w.Body)
					}
					w = serveStatus(h, "/api/collections/users/auth-with-totp?mfaId="+m.MFAID, `{"code":"`+totp.Code(key, clk.Now())+`"}`)
					if w.Code != http.StatusOK {
						b.Fatalf("totp: %d %s", w.Code, w.Body)
					}
				}
			})
		}
	}
}

// newTOTPBench is newSignInBench with users' totp on and, withTOTP, ann's
// TOTP confirmed; it returns the key of it.
func newTOTPBench(b *testing.B, cost int, withTOTP bool) (http.Handler, *clock, []byte) {
	b.Helper()
	clk := &clock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	auth, set, logs := openBenchStores(b, cost, clk)
	users, _ := auth.Collection(authn.UsersName)
	users, err := auth.UpdateCollection(users, authn.CollectionInput{Values: map[string]any{"totp": map[string]any{"enabled": true}}})
	if err != nil {
		b.Fatal(err)
	}
	p := "password1"
	ann, err := auth.CreateRecord(b.Context(), users, authn.RecordInput{Values: map[string]any{
		"email": "ann@example.com", "password": p, "passwordConfirm": p,
	}})
	if err != nil {
		b.Fatal(err)
	}
	var key []byte
	if withTOTP {
		secret, _, err := auth.SetupTOTP(users, ann, "bench")
		if err != nil {
			b.Fatal(err)
		}
		key, _ = totp.DecodeSecret(secret)
		if _, err := auth.ConfirmTOTP(users, ann, totp.Code(key, clk.Now())); err != nil {
			b.Fatal(err)
		}
	}
	return NewServer(Config{Auth: auth, Logs: logs, Settings: set, Now: clk.Now}), clk, key
}

// serveStatus sends one POST to h and returns the recorded answer.
func serveStatus(h http.Handler, path, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}
