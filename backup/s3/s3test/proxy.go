package s3test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
)

// Fault is what a FaultProxy does with a request.
type Fault int

const (
	Pass        Fault = iota
	CutMidBody        // read 1 MiB of the request's body, then drop the connection
	CutMidReply       // pass the request, then drop the connection after 64 KiB of the answer's body
	Answer500         // answer 500 InternalError
	Answer503         // answer 503 SlowDown
	StallAnswer       // read the body, then say nothing until the client leaves
)

// Rule says what to do with a request, given how many requests of the
// same step (see Step) came before it.
type Rule func(r *http.Request, nth int) Fault

// FaultProxy is a loopback proxy in front of a gateway that applies its
// rule to each request.
type FaultProxy struct {
	URL string // "http://127.0.0.1:PORT": the endpoint to give the client

	rp       *httputil.ReverseProxy
	mu       sync.Mutex
	rule     Rule
	seen     map[string]int
	injected int // faults applied
}

// StartProxy starts a FaultProxy in front of target (an endpoint such as
// Gateway.Endpoint) that applies rule; it stops when the test ends.
func StartProxy(t testing.TB, target string, rule Rule) *FaultProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &FaultProxy{rp: httputil.NewSingleHostReverseProxy(u), rule: rule, seen: map[string]int{}}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// SetRule replaces the rule and starts counting steps and faults afresh.
func (p *FaultProxy) SetRule(rule Rule) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rule, p.seen, p.injected = rule, map[string]int{}, 0
}

// Faults returns how many faults the proxy applied.
func (p *FaultProxy) Faults() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.injected
}

// Step names a request's kind: "PUT part 2", "POST complete",
// "GET /bucket/key".
func Step(r *http.Request) string {
	q := r.URL.Query()
	switch {
	case q.Has("partNumber"):
		return r.Method + " part " + q.Get("partNumber")
	case r.Method == http.MethodPost && q.Has("uploadId"):
		return "POST complete"
	}
	return r.Method + " " + r.URL.Path
}

// On returns a rule that applies f to the requests of step s whose rank
// (from 0) is below times, and lets everything else pass.
func On(s string, times int, f Fault) Rule {
	return func(r *http.Request, nth int) Fault {
		if Step(r) == s && nth < times {
			return f
		}
		return Pass
	}
}

func (p *FaultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	s := Step(r)
	nth := p.seen[s]
	p.seen[s]++
	f := Pass
	if p.rule != nil {
		f = p.rule(r, nth)
	}
	if f != Pass {
		p.injected++
	}
	p.mu.Unlock()
	switch f {
	case Pass:
		p.rp.ServeHTTP(w, r)
	case CutMidBody:
		_, _ = io.CopyN(io.Discard, r.Body, 1<<20)
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
	case CutMidReply:
		// The reverse proxy aborts the connection when writing the answer
		// fails.
		p.rp.ServeHTTP(&cutWriter{ResponseWriter: w, left: 64 << 10}, r)
	case Answer500, Answer503:
		_, _ = io.Copy(io.Discard, r.Body)
		code, status := "InternalError", http.StatusInternalServerError
		if f == Answer503 {
			code, status = "SlowDown", http.StatusServiceUnavailable
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, "<Error><Code>%s</Code><Message>injected</Message></Error>", code)
	case StallAnswer:
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}
}

// cutWriter passes left bytes of an answer's body, then fails.
type cutWriter struct {
	http.ResponseWriter
	left int
}

func (c *cutWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func (c *cutWriter) Write(b []byte) (int, error) {
	if len(b) > c.left {
		n, _ := c.ResponseWriter.Write(b[:c.left])
		c.left = 0
		return n, errors.New("s3test: answer cut")
	}
	c.left -= len(b)
	return c.ResponseWriter.Write(b)
}
