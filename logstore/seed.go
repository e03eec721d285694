package logstore

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"
)

// Seed adds n synthetic request logs to the store in dir (created if
// missing), for benchmarks and demos (`strongbox logs seed --n N`). The
// entries spread evenly over the 24 hours before opts.Now, oldest first,
// with a realistic mix: mostly record reads and lists from a few thousand
// clients and a few dozen user agents, about one failed request in seven
// (400, 401, 403, 404, the odd 500) with its error and details, and
// execution times from a long-tailed distribution. The mix is the same for
// the same opts.Rand bytes (a fixed seed when opts.Rand is nil).
//
// opts.MaxDays 0 means the default retention of 5 days here, since seeding
// a store that drops everything would be pointless; the seeded entries
// must lie within the retention window to be kept. The size cap
// (opts.MaxBytes, 1 GiB by default: about 4.5 million entries of the mix)
// applies too: past it the oldest entries make room for the newest.
func Seed(dir string, n int, opts Options) error {
	if n < 0 {
		return fmt.Errorf("logstore: seed: negative count %d", n)
	}
	if opts.MaxDays == 0 {
		opts.MaxDays = 5
	}
	seed := [2]uint64{0x5eed, 0x10c5}
	if opts.Rand != nil {
		var b [16]byte
		if _, err := io.ReadFull(opts.Rand, b[:]); err != nil {
			return fmt.Errorf("logstore: seed: %w", err)
		}
		seed = [2]uint64{binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])}
	}
	s, err := Open(dir, opts)
	if err != nil {
		return err
	}
	g := newGenerator(rand.New(rand.NewPCG(seed[0], seed[1])))
	now := s.now()
	start := now.Add(-24 * time.Hour)
	step := 24 * time.Hour
	if n > 0 {
		step /= time.Duration(n)
	}
	for i := range n {
		e := g.entry(start.Add(time.Duration(i) * step))
		s.Add(e)
		if i%(MaxPending/4) == MaxPending/4-1 {
			if err := s.Flush(); err != nil {
				s.Close()
				return err
			}
		}
	}
	if err := s.Flush(); err != nil {
		s.Close()
		return err
	}
	return s.Close()
}

// generator produces synthetic request logs.
type generator struct {
	r          *rand.Rand
	ips        []string
	proxies    []string
	agents     []string
	referers   []string
	records    []string
	files      []string
	users      []string
	collection []string
}

func newGenerator(r *rand.Rand) *generator {
	g := &generator{r: r, collection: []string{"posts", "comments", "users", "products"}}
	for range 2000 {
		g.ips = append(g.ips, fmt.Sprintf("%d.%d.%d.%d", 1+r.IntN(223), r.IntN(256), r.IntN(256), 1+r.IntN(254)))
	}
	for i := range 4 {
		g.proxies = append(g.proxies, fmt.Sprintf("10.0.0.%d", 2+i))
	}
	browsers := []string{
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/%d.0.0.0 Safari/537.36",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.%d Safari/605.1.15",
		"Mozilla/5.0 (X11; Linux x86_64; rv:%d.0) Gecko/20100101 Firefox/%[1]d.0",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_%d like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148",
		"Mozilla/5.0 (Linux; Android 14; Pixel %d) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36",
	}
	for i, b := range browsers {
		for v := range 7 {
			g.agents = append(g.agents, fmt.Sprintf(b, 110+v+i))
		}
	}
	g.agents = append(g.agents, "curl/8.5.0", "PostmanRuntime/7.37.3", "pocketbase-js-sdk/0.21", "Go-http-client/1.1", "python-requests/2.31.0")
	g.referers = []string{"https://app.example.com/", "https://app.example.com/dashboard",
		"https://app.example.com/posts", "https://www.google.com/", "http://127.0.0.1:8090/_/"}
	for range 5000 {
		g.records = append(g.records, g.randomID())
	}
	for range 3000 {
		g.files = append(g.files, fmt.Sprintf("%s/%s/photo_%s.jpg", g.pick(g.collection), g.pick(g.records), g.randomID()[:10]))
	}
	for range 800 {
		g.users = append(g.users, g.randomID())
	}
	return g
}

func (g *generator) pick(s []string) string { return s[g.r.IntN(len(s))] }

func (g *generator) randomID() string {
	b := make([]byte, idLen)
	for i := range b {
		b[i] = digits36[g.r.IntN(36)]
	}
	return string(b)
}

// entry returns one synthetic request log created at t.
func (g *generator) entry(t time.Time) Entry {
	r := g.r
	req := &Request{Method: "GET", Status: 200}
	col := g.pick(g.collection)
	p := r.Float64()
	switch {
	case p < 0.08:
		req.URL = "/api/health"
	case p < 0.33:
		req.URL = fmt.Sprintf("/api/collections/%s/records?page=%d&perPage=30&sort=-created", col, 1+r.IntN(20))
	case p < 0.58:
		req.URL = "/api/collections/" + col + "/records/" + g.pick(g.records)
		if r.IntN(20) == 0 {
			req.Status = 404
		}
	case p < 0.66:
		req.Method, req.URL = "POST", "/api/collections/"+col+"/records"
		if r.IntN(8) == 0 {
			req.Status = 400
		}
	case p < 0.71:
		req.Method, req.URL = "PATCH", "/api/collections/"+col+"/records/"+g.pick(g.records)
		if r.IntN(10) == 0 {
			req.Status = 403
		}
	case p < 0.73:
		req.Method, req.URL, req.Status = "DELETE", "/api/collections/"+col+"/records/"+g.pick(g.records), 204
	case p < 0.78:
		req.Method, req.URL = "POST", "/api/collections/users/auth-with-password"
		if r.IntN(6) == 0 {
			req.Status = 400
		}
	case p < 0.83:
		req.Method, req.URL = "POST", "/api/collections/users/auth-refresh"
	case p < 0.95:
		req.URL = "/api/files/" + g.pick(g.files) + "?thumb=100x100"
	default:
		req.URL = "/api/realtime"
	}
	switch a := r.IntN(100); {
	case a < 50:
	case a < 95:
		req.Auth = "users"
	default:
		req.Auth = "_superusers"
	}
	if req.Status < 400 {
		switch e := r.IntN(100); {
		case e < 4 && req.URL != "/api/health":
			req.Status, req.Auth = 401, ""
		case e == 4:
			req.Status = 500
		}
	}
	switch req.Status {
	case 400:
		req.Error = "Failed to create record."
		if req.URL == "/api/collections/users/auth-with-password" {
			req.Error = "Failed to authenticate."
		}
		req.Details = map[string]any{"title": map[string]any{"code": "validation_required", "message": "Cannot be blank."}}
	case 401:
		req.Error = "The request requires valid record authorization token."
	case 403:
		req.Error = "The authorized record is not allowed to perform this action."
	case 404:
		req.Error = "The requested resource wasn't found."
		req.Details = "sql: no rows in result set"
	case 500:
		req.Error = "Something went wrong while processing your request."
		req.Details = "context deadline exceeded"
	}
	client := g.pick(g.ips)
	req.UserIP, req.RemoteIP = client, client
	if r.IntN(3) == 0 {
		req.RemoteIP = g.pick(g.proxies)
	}
	req.UserAgent = g.pick(g.agents)
	if r.IntN(5) < 2 {
		req.Referer = g.pick(g.referers)
	}
	// Long-tailed execution times: median about 1.6 ms, a few seconds at most.
	req.ExecTime = math.Round(math.Min(math.Exp(0.5+r.NormFloat64()), 5000)*1e6) / 1e6
	level := 0
	if req.Error != "" {
		level = 8
	}
	return Entry{
		Created: t,
		Level:   level,
		Message: req.Method + " " + req.URL,
		Request: req,
	}
}
