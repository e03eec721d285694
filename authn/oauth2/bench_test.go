package oauth2_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"strongbox/authn/oauth2"
	"strongbox/conformance/oauth2provider"
)

// BenchmarkExchange measures whole exchanges against the loopback
// provider: google (token + user info) and oidc (token with a signed
// id_token, verified against the cached JWKS), serial and parallel.
// Metrics: exchanges/s, p50 and p99 of one exchange, and the provider's
// own mean handler time per request (provider-µs/req), so that what the
// client costs can be told from what the provider costs.
//
//	go test -run - -bench Exchange ./authn/oauth2/
func BenchmarkExchange(b *testing.B) {
	p := oauth2provider.Start(b)
	c := oauth2.NewClient(oauth2.Options{AllowPrivate: true}) // the provider is on 127.0.0.1
	user := obj(`{"sub":"1093","name":"Ada","email":"ada@example.com","email_verified":true}`)
	const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	cases := []struct {
		name  string
		cfg   oauth2.Config
		grant oauth2provider.Grant
	}{
		{"google-userinfo", config(p, "google"), oauth2provider.Grant{Challenge: oauth2.Challenge(verifier), User: user}},
		{"oidc-id_token", oidcIDToken(p), oauth2provider.Grant{Challenge: oauth2.Challenge(verifier), IDToken: map[string]any{"sub": "1093", "email": "ada@example.com", "email_verified": true}}},
	}
	for _, tc := range cases {
		for _, parallel := range []bool{false, true} {
			name := tc.name + "/serial"
			if parallel {
				name = tc.name + "/parallel"
			}
			b.Run(name, func(b *testing.B) {
				var mu sync.Mutex
				lat := make([]time.Duration, 0, b.N)
				one := func() {
					code := p.Grant(tc.grant)
					start := time.Now()
					if _, err := c.Exchange(b.Context(), tc.cfg, code, verifier, ""); err != nil {
						b.Error(err)
						return
					}
					d := time.Since(start)
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
				one() // warm the connection pool and the JWKS cache
				lat = lat[:0]
				p.ResetStats()
				b.ResetTimer()
				start := time.Now()
				if parallel {
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							one()
						}
					})
				} else {
					for range b.N {
						one()
					}
				}
				elapsed := time.Since(start)
				b.StopTimer()
				if len(lat) == 0 {
					return
				}
				slices.Sort(lat)
				_, mean := p.Stats()
				b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "exchanges/s")
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
				b.ReportMetric(float64(mean.Microseconds()), "provider-µs/req")
			})
		}
	}
}
