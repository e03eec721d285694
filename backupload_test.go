//go:build loadfault

// TestBackupFigures measures the figures of the backups issue against the
// built binary, on a data dir of a million request logs (SB_FIG_LOGS sets
// another count):
//
//	go test -tags loadfault -run TestBackupFigures -v -count=1 -timeout 15m .
//
// It measures:
//
//   - an offline `strongbox backup create` under /usr/bin/time -v: wall
//     time, archive size, peak RSS;
//   - a served data dir under a steady stream of sign-ups (20/s) and
//     GET /api/health (100/s), each request timed by itself: the longest
//     and the 99th-percentile latency for 10 s without a backup, then while
//     POST /api/backups runs (plus a second after), and the server's RSS
//     before and at its peak during the backup;
//   - POST /api/backups/{key}/restore of that archive: the time from the
//     204 until the server answers on the restored data (the users
//     created after the backup are gone), and the RSS peak meanwhile.
//
// The load is open-loop (requests start on a clock, whatever the answers
// take), so a pause of the server shows as latency instead of as fewer
// requests. Everything goes to 127.0.0.1 and stops by itself.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"strongbox/httpapi/app/throwaway"
)

const (
	figEmail    = "figures@example.com"
	figPassword = "figures-password-1"
)

func TestBackupFigures(t *testing.T) {
	bin := strongboxBinary(t)
	n := 1_000_000
	if v := os.Getenv("SB_FIG_LOGS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	dir := t.TempDir()
	env := []string{"STRONGBOX_BCRYPT_COST=4", "STRONGBOX_SUPERUSER_EMAIL=" + figEmail, "STRONGBOX_SUPERUSER_PASSWORD=" + figPassword}
	ctx, cancel := context.WithTimeout(t.Context(), 12*time.Minute)
	defer cancel()

	run := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("strongbox %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("superuser", "upsert", figEmail, figPassword, "--dir", dir)
	t.Log(strings.TrimSpace(run("logs", "seed", "--n", strconv.Itoa(n), "--dir", dir)))

	// Offline create, measured by /usr/bin/time -v.
	if _, err := os.Stat("/usr/bin/time"); err == nil {
		cmd := exec.CommandContext(ctx, "/usr/bin/time", "-v", bin, "backup", "create", "offline.zip", "--dir", dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("backup create: %v\n%s", err, out)
		}
		wall := regexp.MustCompile(`Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)`).FindStringSubmatch(string(out))
		rss := regexp.MustCompile(`Maximum resident set size \(kbytes\): (\d+)`).FindStringSubmatch(string(out))
		fi, err := os.Stat(filepath.Join(dir, "backups", "offline.zip"))
		if err != nil || wall == nil || rss == nil {
			t.Fatalf("backup create: %v\n%s", err, out)
		}
		t.Logf("offline backup create of %d logs: wall %s, archive %.1f MiB, peak RSS %s KiB", n, wall[1], float64(fi.Size())/(1<<20), rss[1])
	} else {
		t.Log("no /usr/bin/time: offline create not measured")
	}

	// Serve it on a fixed free port (a restore re-executes the process).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	log := &syncBuffer{}
	c, err := throwaway.StartProcess(ctx, bin, addr, dir, env, log)
	if err != nil {
		t.Fatalf("serve: %v\n%s", err, log)
	}
	defer func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
		if t.Failed() {
			t.Logf("server log:\n%s", log)
		}
	}()
	pid := c.Cmd.Process.Pid
	base := "http://" + addr
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	token := figLogin(t, client, base)

	rssBefore := vmRSS(pid)
	t.Logf("server RSS before: %d KiB", rssBefore)

	// Baseline: 10 s of steady load, no backup.
	var seq atomic.Int64
	// Not a wait for a condition: the load's duration.
	base1 := figLoad(client, base, &seq, func() { time.Sleep(10 * time.Second) })
	t.Logf("no backup:     %s", base1)

	// The same load while POST /api/backups runs, and a second after.
	var created time.Duration
	peak := &rssPeak{pid: pid}
	stopPeak := peak.start()
	during := figLoad(client, base, &seq, func() {
		start := time.Now()
		res, body := figDo(t, client, "POST", base+"/api/backups", token, `{"name":"online.zip"}`)
		created = time.Since(start)
		if res != http.StatusNoContent {
			t.Errorf("POST /api/backups: %d %s", res, body)
		}
		// Not a wait for a condition: the load goes on a second after
		// the create.
		time.Sleep(time.Second)
	})
	stopPeak()
	fi, err := os.Stat(filepath.Join(dir, "backups", "online.zip"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("online backup create: %v, archive %.1f MiB; server RSS peak %d KiB (+%d KiB)", created.Round(time.Millisecond), float64(fi.Size())/(1<<20), peak.max, peak.max-rssBefore)
	t.Logf("during backup: %s", during)

	// Users now (the archive holds at most these: sign-ups went on during
	// the backup), then a few more that the restore must drop.
	usersAtBackup := figUsers(t, client, base, token)
	for range 20 {
		figSignUp(client, base, &seq)
	}
	if got := figUsers(t, client, base, token); got == usersAtBackup {
		t.Fatalf("sign-ups after the backup did not count: %d users", got)
	}

	peak = &rssPeak{pid: pid}
	stopPeak = peak.start()
	res, body := figDo(t, client, "POST", base+"/api/backups/online.zip/restore", token, "")
	start := time.Now()
	if res != http.StatusNoContent {
		t.Fatalf("restore: %d %s", res, body)
	}
	var back time.Duration
	var restored int
	tick := time.NewTicker(10 * time.Millisecond) // the resolution of back
	defer tick.Stop()
	for ; time.Since(start) < 5*time.Minute; <-tick.C {
		if n, ok := figUsersTry(client, base, token); ok && n <= usersAtBackup {
			restored = n
			back = time.Since(start)
			break
		}
	}
	stopPeak()
	if back == 0 {
		t.Fatal("the server did not come back on the restored data within 5 minutes")
	}
	if c.Cmd.Process.Pid != pid || vmRSS(pid) == 0 {
		t.Errorf("the process changed: pid %d", pid)
	}
	t.Logf("restore: %v from the 204 to answers on the restored data (%d users, %d before the restore); server RSS peak %d KiB (+%d KiB over before the backup)", back.Round(time.Millisecond), restored, usersAtBackup+20, peak.max, peak.max-rssBefore)
}

// figLoad sends sign-ups at 20/s and health checks at 100/s, each on its
// own clock tick, until during returns, then waits for the answers.
func figLoad(client *http.Client, base string, seq *atomic.Int64, during func()) figStats {
	var (
		mu      sync.Mutex
		signups []time.Duration
		health  []time.Duration
		errs    int
		wg      sync.WaitGroup
	)
	stop := make(chan struct{})
	tick := func(every time.Duration, do func() (time.Duration, bool), into *[]time.Duration) {
		defer wg.Done()
		tk := time.NewTicker(every)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				wg.Add(1)
				go func() {
					defer wg.Done()
					d, ok := do()
					mu.Lock()
					defer mu.Unlock()
					*into = append(*into, d)
					if !ok {
						errs++
					}
				}()
			}
		}
	}
	wg.Add(2)
	go tick(50*time.Millisecond, func() (time.Duration, bool) { return figSignUp(client, base, seq) }, &signups)
	go tick(10*time.Millisecond, func() (time.Duration, bool) {
		start := time.Now()
		res, err := client.Get(base + "/api/health")
		if err != nil {
			return time.Since(start), false
		}
		res.Body.Close()
		return time.Since(start), res.StatusCode == http.StatusOK
	}, &health)
	during()
	close(stop)
	wg.Wait()
	return figStats{signups: summarize(signups), health: summarize(health), errors: errs}
}

type figStats struct {
	signups, health latencies
	errors          int
}

func (s figStats) String() string {
	return fmt.Sprintf("sign-ups %s; health %s; errors %d", s.signups, s.health, s.errors)
}

type latencies struct {
	n             int
	p50, p99, max time.Duration
}

func (l latencies) String() string {
	return fmt.Sprintf("n=%d p50=%v p99=%v max=%v", l.n, l.p50.Round(10*time.Microsecond), l.p99.Round(10*time.Microsecond), l.max.Round(10*time.Microsecond))
}

func summarize(d []time.Duration) latencies {
	if len(d) == 0 {
		return latencies{}
	}
	slices.Sort(d)
	at := func(q float64) time.Duration { return d[min(len(d)-1, int(q*float64(len(d))))] }
	return latencies{n: len(d), p50: at(0.50), p99: at(0.99), max: d[len(d)-1]}
}

func figSignUp(client *http.Client, base string, seq *atomic.Int64) (time.Duration, bool) {
	body := fmt.Sprintf(`{"email":"fig%d_%d@example.com","password":"password123","passwordConfirm":"password123"}`, time.Now().UnixNano(), seq.Add(1))
	start := time.Now()
	res, err := client.Post(base+"/api/collections/users/records", "application/json", strings.NewReader(body))
	if err != nil {
		return time.Since(start), false
	}
	res.Body.Close()
	return time.Since(start), res.StatusCode == http.StatusOK
}

func figLogin(t *testing.T, client *http.Client, base string) string {
	t.Helper()
	res, body := figDo(t, client, "POST", base+"/api/collections/_superusers/auth-with-password", "", fmt.Sprintf(`{"identity":%q,"password":%q}`, figEmail, figPassword))
	var v struct{ Token string }
	if res != http.StatusOK || json.Unmarshal(body, &v) != nil || v.Token == "" {
		t.Fatalf("login: %d %s", res, body)
	}
	return v.Token
}

func figDo(t *testing.T, client *http.Client, method, url, token, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(res.Body)
	return res.StatusCode, buf.Bytes()
}

func figUsers(t *testing.T, client *http.Client, base, token string) int {
	t.Helper()
	n, ok := figUsersTry(client, base, token)
	if !ok {
		t.Fatal("cannot count users")
	}
	return n
}

func figUsersTry(client *http.Client, base, token string) (int, bool) {
	req, _ := http.NewRequest("GET", base+"/api/collections/users/records?perPage=1", nil)
	req.Header.Set("Authorization", token)
	c := *client
	c.Timeout = time.Second
	res, err := c.Do(req)
	if err != nil {
		return 0, false
	}
	defer res.Body.Close()
	var v struct {
		TotalItems *int `json:"totalItems"`
	}
	if res.StatusCode != http.StatusOK || json.NewDecoder(res.Body).Decode(&v) != nil || v.TotalItems == nil {
		return 0, false
	}
	return *v.TotalItems, true
}

// vmRSS is the resident set of pid in KiB (Linux), 0 if unknown.
func vmRSS(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return n
		}
	}
	return 0
}

// rssPeak samples the resident set of pid every 20 ms.
type rssPeak struct {
	pid int
	max int
}

func (p *rssPeak) start() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tk := time.NewTicker(20 * time.Millisecond)
		defer tk.Stop()
		for {
			p.max = max(p.max, vmRSS(p.pid))
			select {
			case <-done:
				return
			case <-tk.C:
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
