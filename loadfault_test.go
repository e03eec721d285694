//go:build loadfault

// The load-and-fault tests (issue 8 §2) run the built binary as a child
// process on a loopback port and attack it with hostile clients while a
// well-behaved client measures GET /api/health. They are bounded in count
// and time, send traffic only to 127.0.0.1, and stop by themselves:
//
//	go test -tags loadfault -run TestLoadFault -v -timeout 5m .
//	go test -tags loadfault -run TestBodyMemory -v -timeout 5m .
//
// They are behind a build tag because they take a minute each and load both
// cores; the figures they log are the ones quoted in issue notes.
package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

const (
	lfEmail    = "load@example.com"
	lfPassword = "load-password-1"
)

// child is a strongbox binary serving a temporary data dir.
type child struct {
	base, addr string
	pid        int
	tmp        string // the child's TMPDIR
	stderr     *lockedWriter
}

// startChild builds the binary and starts `strongbox serve` on a free
// loopback port, with its own TMPDIR so leftover temp files can be counted.
func startChild(t *testing.T) *child {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "strongbox")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := &child{base: "http://" + addr, addr: addr, tmp: filepath.Join(dir, "tmp"), stderr: &lockedWriter{w: &bytes.Buffer{}}}
	if err := os.Mkdir(c.tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--http", addr, "--dir", filepath.Join(dir, "data"))
	cmd.Env = append(os.Environ(), "TMPDIR="+c.tmp,
		"STRONGBOX_SUPERUSER_EMAIL="+lfEmail, "STRONGBOX_SUPERUSER_PASSWORD="+lfPassword)
	cmd.Stdout = io.Discard
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.pid = cmd.Process.Pid
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		res, err := http.Get(c.base + "/api/health")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return c
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not ready after 20 s: %v", err)
		}
		<-tick.C
	}
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// procUsage is the child's resident memory and open descriptors.
type procUsage struct{ rssKiB, hwmKiB, fds int }

func (c *child) usage() procUsage {
	var u procUsage
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.pid)); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			k, v, _ := strings.Cut(line, ":")
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			switch k {
			case "VmRSS":
				u.rssKiB = n
			case "VmHWM":
				u.hwmKiB = n
			}
		}
	}
	if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", c.pid)); err == nil {
		u.fds = len(ents)
	}
	return u
}

// sampler records the child's peak RSS and descriptors every 100 ms.
type sampler struct {
	mu       sync.Mutex
	peakRSS  int
	peakFDs  int
	stop     chan struct{}
	finished chan struct{}
}

func (c *child) sample() *sampler {
	s := &sampler{stop: make(chan struct{}), finished: make(chan struct{})}
	go func() {
		defer close(s.finished)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			u := c.usage()
			s.mu.Lock()
			s.peakRSS, s.peakFDs = max(s.peakRSS, u.rssKiB), max(s.peakFDs, u.fds)
			s.mu.Unlock()
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *sampler) done() (rssKiB, fds int) {
	close(s.stop)
	<-s.finished
	return s.peakRSS, s.peakFDs
}

// probe is the well-behaved client: GET /api/health every 20 ms on one
// keep-alive connection (a new one when the server closes it), with a 5 s
// timeout per request. It connects from 127.0.0.2, so the server sees it
// as a client other than the attackers (who connect from 127.0.0.1), as a
// real user and an attacker are.
type probeResult struct {
	n, errs  int
	p50, p99 time.Duration
	firstErr string
}

func (c *child) probe(ctx context.Context) probeResult {
	return c.poll(ctx, 20*time.Millisecond, http.StatusOK, func(client *http.Client) (*http.Response, error) {
		return client.Get(c.base + "/api/health")
	})
}

// bodyProbe is the well-behaved client of a route that reads a body, from
// 127.0.0.2 as probe: POST /api/collections/users/records with a small
// invalid body every 50 ms, to be answered 400 (the validation failure).
// Any other answer (a 503 from a body budget the attackers fill) is an
// error. It did not catch the lock-out of bodies declared and not sent in
// the build before the budget charged bytes as they arrive: there, the
// other floods' small stalled bodies left crumbs of the budget free, in
// which its small bodies fit. httpapi/api's TestBodyBudgetLockOut does.
func (c *child) bodyProbe(ctx context.Context) probeResult {
	return c.poll(ctx, 50*time.Millisecond, http.StatusBadRequest, func(client *http.Client) (*http.Response, error) {
		return client.Post(c.base+"/api/collections/users/records", "application/json", strings.NewReader(`{"email":"x"}`))
	})
}

// poll sends a request every interval from 127.0.0.2, on one keep-alive
// connection (a new one when the server closes it) with a 5 s timeout,
// until ctx ends; an answer other than want, or no answer, is an error.
func (c *child) poll(ctx context.Context, interval time.Duration, want int, send func(*http.Client) (*http.Response, error)) probeResult {
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: 5 * time.Second}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1, DialContext: dialer.DialContext}}
	defer client.CloseIdleConnections()
	var lat []time.Duration
	var r probeResult
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for ctx.Err() == nil {
		start := time.Now()
		res, err := send(client)
		if err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != want {
				err = fmt.Errorf("status %d", res.StatusCode)
			}
		}
		if ctx.Err() != nil {
			break // a request the end of the run cut short
		}
		lat = append(lat, time.Since(start))
		r.n++
		if err != nil {
			r.errs++
			if r.firstErr == "" {
				r.firstErr = err.Error()
			}
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		r.p50, r.p99 = lat[len(lat)/2], lat[len(lat)*99/100]
	}
	return r
}

// counters are what the attackers did, for the log.
type counters struct {
	stalled, declared, idle, slow, huge, multipart, logins, objects atomic.Int64
	closedByServer                                                  atomic.Int64
	statuses                                                        sync.Map // int → *atomic.Int64
}

func (k *counters) status(code int) {
	v, _ := k.statuses.LoadOrStore(code, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

func (k *counters) String() string {
	var codes []string
	k.statuses.Range(func(key, v any) bool {
		codes = append(codes, fmt.Sprintf("%d×%d", key, v.(*atomic.Int64).Load()))
		return true
	})
	slices.Sort(codes)
	return fmt.Sprintf("stalled bodies %d, declared and unsent 1 MiB bodies %d, idle conns %d, slow readers %d, huge bodies %d, multipart %d, failed logins %d, 1 MiB bodies of {} %d, conns closed by the server %d; statuses %s",
		k.stalled.Load(), k.declared.Load(), k.idle.Load(), k.slow.Load(), k.huge.Load(), k.multipart.Load(), k.logins.Load(), k.objects.Load(), k.closedByServer.Load(), strings.Join(codes, " "))
}

// holdConns keeps up to n raw connections open from the loopback address
// from (nil: the system's choice, 127.0.0.1), each sent prefix once and
// then nothing, opening a new one whenever the server closes one.
func (c *child) holdConns(ctx context.Context, n int, from net.IP, prefix string, count *atomic.Int64, k *counters) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, n)
	for ctx.Err() == nil {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			continue
		}
		d := net.Dialer{Timeout: 2 * time.Second}
		if from != nil {
			d.LocalAddr = &net.TCPAddr{IP: from}
		}
		conn, err := d.DialContext(ctx, "tcp", c.addr)
		if err != nil {
			<-sem
			// Not a wait for a condition: a refused attacker backs off
			// a little before it dials again.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		count.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			defer conn.Close()
			stop := context.AfterFunc(ctx, func() { conn.Close() })
			defer stop()
			if prefix != "" {
				conn.Write([]byte(prefix))
			}
			// Whatever the server answers, if anything, it ends the wait
			// for the connection to close.
			io.Copy(io.Discard, conn)
			if ctx.Err() == nil {
				k.closedByServer.Add(1)
			}
		}()
	}
	wg.Wait()
}

// slowReaders pipeline many requests on each of n connections and never
// read the answers.
func (c *child) slowReaders(ctx context.Context, n int, k *counters) {
	var wg sync.WaitGroup
	req := []byte("GET /api/collections/users/auth-methods HTTP/1.1\r\nHost: x\r\n\r\n")
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				conn, err := net.DialTimeout("tcp", c.addr, 2*time.Second)
				if err != nil {
					// Not a wait for a condition: a refused attacker
					// backs off a little before it dials again.
					time.Sleep(10 * time.Millisecond)
					continue
				}
				k.slow.Add(1)
				stop := context.AfterFunc(ctx, func() { conn.Close() })
				for range 2000 {
					conn.SetWriteDeadline(time.Now().Add(time.Second))
					if _, err := conn.Write(req); err != nil {
						break
					}
				}
				// Hold the connection, unread, until the server gives up on
				// it: not a wait for a condition, the slow reader's
				// behaviour for 5 s.
				conn.SetReadDeadline(time.Now().Add(30 * time.Second))
				time.Sleep(5 * time.Second)
				stop()
				conn.Close()
			}
		}()
	}
	wg.Wait()
}

// post sends body to path with the content type, counting the status.
func (c *child) post(ctx context.Context, client *http.Client, path, ctype string, body io.Reader, k *counters) {
	req, err := http.NewRequestWithContext(ctx, "POST", c.base+path, body)
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", ctype)
	res, err := client.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			k.status(0)
		}
		return
	}
	io.Copy(io.Discard, io.LimitReader(res.Body, 1<<20))
	res.Body.Close()
	k.status(res.StatusCode)
}

// hugeJSON is a body of size bytes: a JSON object whose identity is long.
func hugeJSON(size int) []byte {
	b := make([]byte, 0, size)
	b = append(b, `{"identity":"`...)
	b = append(b, bytes.Repeat([]byte("a"), size-len(b)-len(`","password":"x"}`))...)
	return append(b, `","password":"x"}`...)
}

// emptyObjects is a records body of size bytes that decodes, if nothing
// stops it, to a map for each {}: {"email":"x","pad":[{},{},…]}.
func emptyObjects(size int) []byte {
	b := make([]byte, 0, size)
	b = append(b, `{"email":"x","pad":[{}`...)
	for len(b)+len(`,{}]}`) <= size {
		b = append(b, ",{}"...)
	}
	return append(b, "]}"...)
}

func multipartBody(fileSize int) (string, []byte) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("identity", "nobody@example.com")
	mw.WriteField("password", "wrong-password")
	fw, _ := mw.CreateFormFile("file", "big.bin")
	fw.Write(bytes.Repeat([]byte{'x'}, fileSize))
	mw.Close()
	return mw.FormDataContentType(), buf.Bytes()
}

// attack runs every hostile client against c until ctx ends.
func (c *child) attack(ctx context.Context, k *counters) {
	var wg sync.WaitGroup
	goDo := func(f func()) { wg.Add(1); go func() { defer wg.Done(); f() }() }
	loginPath := "/api/collections/_superusers/auth-with-password"

	goDo(func() {
		c.holdConns(ctx, 2000, nil, "POST "+loginPath+" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\"", &k.stalled, k)
	})
	// Bodies declared at the JSON routes' limit and never sent: 64 of
	// them declare twice the body budget. They come from 127.0.0.3, so
	// that the connection cap of 127.0.0.1, which the other floods reach,
	// lets them in.
	goDo(func() {
		c.holdConns(ctx, 64, net.IPv4(127, 0, 0, 3), fmt.Sprintf("POST /api/collections/users/records HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", 1<<20), &k.declared, k)
	})
	goDo(func() { c.holdConns(ctx, 6000, nil, "", &k.idle, k) })
	goDo(func() { c.slowReaders(ctx, 50, k) })

	huge := hugeJSON(31 << 20)
	for range 30 {
		goDo(func() {
			client := &http.Client{Timeout: 20 * time.Second}
			for ctx.Err() == nil {
				k.huge.Add(1)
				c.post(ctx, client, loginPath, "application/json", bytes.NewReader(huge), k)
			}
		})
	}
	objects := emptyObjects(1 << 20)
	for range 30 {
		goDo(func() {
			client := &http.Client{Timeout: 20 * time.Second}
			for ctx.Err() == nil {
				k.objects.Add(1)
				c.post(ctx, client, "/api/collections/users/records", "application/json", bytes.NewReader(objects), k)
			}
		})
	}
	ctype, mp := multipartBody(4 << 20)
	for range 10 {
		goDo(func() {
			client := &http.Client{Timeout: 20 * time.Second}
			for ctx.Err() == nil {
				k.multipart.Add(1)
				c.post(ctx, client, "/api/collections/users/auth-with-password", ctype, bytes.NewReader(mp), k)
			}
		})
	}
	for i := range 50 {
		goDo(func() {
			client := &http.Client{Timeout: 20 * time.Second}
			body := fmt.Sprintf(`{"identity":%q,"password":"wrong-%d"}`, lfEmail, i)
			for ctx.Err() == nil {
				k.logins.Add(1)
				c.post(ctx, client, loginPath, "application/json", strings.NewReader(body), k)
			}
		})
	}
	wg.Wait()
}

// TestLoadFault: 8 s of the health probe alone, then 30 s of the probe
// beside every hostile client, then a check that the server recovers.
func TestLoadFault(t *testing.T) {
	// The attackers' HTTP clients log every refusal that reaches an idle
	// connection; that is expected here.
	log.SetOutput(io.Discard)
	defer log.SetOutput(os.Stderr)
	c := startChild(t)
	t.Logf("server pid %d at %s; idle: %+v", c.pid, c.base, c.usage())

	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Second)
	s := c.sample()
	quiet := c.probe(ctx)
	cancel()
	rss, fds := s.done()
	t.Logf("alone:   health n=%d errors=%d p50=%v p99=%v; peak RSS %d MiB, peak fds %d", quiet.n, quiet.errs, quiet.p50, quiet.p99, rss>>10, fds)

	ctx, cancel = context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	k := &counters{}
	s = c.sample()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); c.attack(ctx, k) }()
	// Not a wait for a condition: the floods build up for 2 s before the
	// measure, as in the figures quoted in the issue notes.
	time.Sleep(2 * time.Second)
	var bodies probeResult
	wg.Add(1)
	go func() { defer wg.Done(); bodies = c.bodyProbe(ctx) }()
	loud := c.probe(ctx)
	wg.Wait()
	rss, fds = s.done()
	t.Logf("hostile: health n=%d errors=%d p50=%v p99=%v (first error: %q); peak RSS %d MiB, peak fds %d", loud.n, loud.errs, loud.p50, loud.p99, loud.firstErr, rss>>10, fds)
	t.Logf("hostile: body probe (POST records from another address, 400 expected) n=%d errors=%d p50=%v p99=%v (first error: %q)", bodies.n, bodies.errs, bodies.p50, bodies.p99, bodies.firstErr)
	t.Logf("hostile clients: %s", k)

	// Afterwards the server serves as before and has left no temp files.
	// Not a wait for a condition: the figures below (RSS, fds) are those
	// of 2 s after the attack, as quoted in the issue notes.
	time.Sleep(2 * time.Second)
	res, err := http.Get(c.base + "/api/health")
	if err != nil {
		t.Fatalf("health after the attack: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("health after the attack: %d", res.StatusCode)
	}
	tmp, _ := os.ReadDir(c.tmp)
	u := c.usage()
	t.Logf("after:   RSS %d MiB, fds %d, temp files %d", u.rssKiB>>10, u.fds, len(tmp))
	if len(tmp) != 0 {
		t.Errorf("%d temp files left in the server's TMPDIR", len(tmp))
	}
	logTail(t, c)

	if loud.errs > 0 {
		t.Errorf("the health probe failed %d of %d times under attack (first: %s)", loud.errs, loud.n, loud.firstErr)
	}
	if bodies.errs > 0 {
		t.Errorf("the body probe failed %d of %d times under attack (first: %s)", bodies.errs, bodies.n, bodies.firstErr)
	}
	if loud.p99 > time.Second {
		t.Errorf("health p99 under attack = %v, want under 1 s", loud.p99)
	}
	// Bodies hold at most ~150 MiB of heap (see httpapi/api/routes.go), and
	// the connections' headers are bounded apart.
	if rss>>10 > 400 {
		t.Errorf("peak RSS under attack = %d MiB, want under 400 MiB", rss>>10)
	}
}

// TestBodyMemory: 30 concurrent maximum-size bodies on an auth route, in
// three forms: 31 MiB (PocketBase's limit) declared in Content-Length, the
// same sent chunked with no declared length, and bodies of exactly the
// route's own limit (64 KiB) sent back to back for 5 s; then 30 concurrent
// 1 MiB bodies of {} on the records route for 5 s, each of which would
// decode to 350,000 maps; the server's RSS before, at its peak, just after
// and 60 s later.
func TestBodyMemory(t *testing.T) {
	c := startChild(t)
	before := c.usage()
	huge := hugeJSON(31 << 20)
	atLimit := hugeJSON(64 << 10)
	objects := emptyObjects(1 << 20)
	login, records := "/api/collections/users/auth-with-password", "/api/collections/users/records"
	rounds := []struct {
		name    string
		path    string
		body    func() io.Reader
		lasting time.Duration
	}{
		{"31 MiB declared", login, func() io.Reader { return bytes.NewReader(huge) }, 0},
		{"31 MiB chunked", login, func() io.Reader { return io.MultiReader(bytes.NewReader(huge)) }, 0},
		{"64 KiB (the limit), for 5 s", login, func() io.Reader { return bytes.NewReader(atLimit) }, 5 * time.Second},
		{"1 MiB of {} on the records route, for 5 s", records, func() io.Reader { return bytes.NewReader(objects) }, 5 * time.Second},
	}
	peakAll := 0
	for _, r := range rounds {
		k := &counters{}
		s := c.sample()
		end := time.Now().Add(r.lasting)
		var wg sync.WaitGroup
		for range 30 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				client := &http.Client{Timeout: 30 * time.Second}
				for {
					c.post(t.Context(), client, r.path, "application/json", r.body(), k)
					if time.Now().After(end) {
						return
					}
				}
			}()
		}
		wg.Wait()
		peak, _ := s.done()
		peakAll = max(peakAll, peak)
		t.Logf("%s: peak RSS %d MiB; %s", r.name, peak>>10, k)
	}
	after := c.usage()
	// Not a wait for a condition: the RSS figure of 60 s later.
	time.Sleep(60 * time.Second)
	later := c.usage()
	t.Logf("RSS before %d MiB, peak %d MiB, just after %d MiB, 60 s later %d MiB",
		before.rssKiB>>10, peakAll>>10, after.rssKiB>>10, later.rssKiB>>10)
	if peakAll>>10 > 512 {
		t.Errorf("peak RSS %d MiB under 30 maximum-size bodies, want under 512 MiB", peakAll>>10)
	}
}

// logTail logs the server's warnings and errors (the first 20), and the
// count of other lines.
func logTail(t *testing.T, c *child) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(c.stderr.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	shown, other := 0, 0
	for sc.Scan() {
		line := sc.Text()
		if (strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR")) && shown < 20 {
			t.Logf("server: %s", line)
			shown++
		} else {
			other++
		}
	}
	t.Logf("server: %d other log lines", other)
}
