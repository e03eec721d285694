package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"strongbox/authn"
	"strongbox/authn/oauth2"
	"strongbox/conformance/oauth2provider"
)

// oauth2Bench is strongbox as it runs (bcrypt at authn.DefaultCost, the
// request log on, NewHTTPServer, the real OAuth2 client with its default
// options) with an oidc provider on users pointing at a loopback
// provider.
type oauth2Bench struct {
	b      *testing.B
	base   string
	client *http.Client
	p      *oauth2provider.Provider
}

// benchVerifier is the PKCE verifier of every benchmark sign-in (RFC 7636
// Appendix B).
const benchVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"

func newOAuth2Bench(b *testing.B) *oauth2Bench {
	b.Helper()
	p := oauth2provider.Start(b)
	clk := &clock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	auth, set, logs := openBenchStores(b, authn.DefaultCost, clk)
	users, _ := auth.Collection(authn.UsersName)
	if _, err := auth.UpdateCollection(users, authn.CollectionInput{Values: map[string]any{"oauth2": map[string]any{
		"enabled": true, "providers": []any{map[string]any{
			"name": "oidc", "clientId": p.ClientID, "clientSecret": p.ClientSecret,
			"authURL": p.URL + oauth2provider.PathAuthorize, "tokenURL": p.URL + oauth2provider.PathToken,
			"userInfoURL": p.URL + oauth2provider.PathUserInfo,
		}},
	}}}); err != nil {
		b.Fatal(err)
	}
	api := NewServer(Config{Auth: auth, Logs: logs, Settings: set, Now: clk.Now, OAuth2: oauth2.NewClient(oauth2.Options{AllowPrivate: true})})
	srv := httptest.NewUnstartedServer(nil)
	srv.Config, srv.Listener = NewHTTPServer(api, srv.Listener, HTTPConfig{})
	srv.Start()
	b.Cleanup(srv.Close)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64 // the clients of the parallel runs keep their connections
	b.Cleanup(tr.CloseIdleConnections)
	return &oauth2Bench{b: b, base: srv.URL, client: &http.Client{Transport: tr, Timeout: 30 * time.Second}, p: p}
}

// signIn has the provider grant a code for user (with the PKCE challenge
// of benchVerifier) and posts auth-with-oauth2 for it; it returns the
// time the answer took and whether it was a 200 with the record isNew
// says. Grant is not timed.
func (o *oauth2Bench) signIn(user map[string]any, wantNew bool) (time.Duration, error) {
	code := o.p.Grant(oauth2provider.Grant{Challenge: oauth2.Challenge(benchVerifier), User: user})
	body, _ := json.Marshal(map[string]string{"provider": "oidc", "code": code, "codeVerifier": benchVerifier, "redirectURL": o.base + "/api/oauth2-redirect"})
	start := time.Now()
	res, err := o.client.Post(o.base+"/api/collections/users/auth-with-oauth2", "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	raw, err := io.ReadAll(res.Body)
	res.Body.Close()
	took := time.Since(start)
	if err != nil {
		return 0, err
	}
	var m struct {
		Token string
		Meta  struct{ IsNew bool }
	}
	if err := json.Unmarshal(raw, &m); err != nil || res.StatusCode != 200 || m.Token == "" || m.Meta.IsNew != wantNew {
		return 0, fmt.Errorf("auth-with-oauth2 = %d %s, want 200 with isNew %v", res.StatusCode, raw, wantNew)
	}
	return took, nil
}

// BenchmarkAuthWithOAuth2 measures POST auth-with-oauth2 end to end
// against the loopback provider (token exchange with PKCE, then user
// info): a provider user already linked to a record (linked), and a new
// user each time, who gets a record (new-account: a record with a random
// password hashed at bcrypt cost 10, and its link, in one journal
// commit); each serial and parallel (GOMAXPROCS clients). Metrics:
// sign-ins/s, p50 and p99 of one request, and the provider's own mean
// handler time per request (provider-µs/req) with its requests per
// sign-in, so that strongbox's cost can be told from the provider's.
//
//	go test ./httpapi/api -run - -bench AuthWithOAuth2 -benchtime 2s
func BenchmarkAuthWithOAuth2(b *testing.B) {
	for _, newAccount := range []bool{false, true} {
		for _, parallel := range []bool{false, true} {
			name := "linked"
			if newAccount {
				name = "new-account"
			}
			if parallel {
				name += "/parallel"
			} else {
				name += "/serial"
			}
			b.Run(name, func(b *testing.B) {
				o := newOAuth2Bench(b)
				linked := map[string]any{"sub": "linked-1", "name": "Ada", "email": "ada@example.com", "email_verified": true}
				var n atomic.Int64
				one := func() (time.Duration, error) {
					if !newAccount {
						return o.signIn(linked, false)
					}
					i := n.Add(1)
					return o.signIn(map[string]any{"sub": fmt.Sprint("new-", i), "email": fmt.Sprintf("new%d@example.com", i), "email_verified": true}, true)
				}
				// Warm up: the link of the linked user, the connections.
				if _, err := o.signIn(linked, true); err != nil {
					b.Fatal(err)
				}
				var mu sync.Mutex
				lat := make([]time.Duration, 0, b.N)
				record := func() {
					d, err := one()
					if err != nil {
						b.Error(err)
						return
					}
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
				o.p.ResetStats()
				b.ResetTimer()
				start := time.Now()
				if parallel {
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							record()
						}
					})
				} else {
					for range b.N {
						record()
					}
				}
				elapsed := time.Since(start)
				b.StopTimer()
				if len(lat) == 0 {
					return
				}
				slices.Sort(lat)
				reqs, mean := o.p.Stats()
				b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "sign-ins/s")
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
				b.ReportMetric(float64(mean.Microseconds()), "provider-µs/req")
				b.ReportMetric(float64(reqs)/float64(len(lat)), "provider-req/op")
			})
		}
	}
}
