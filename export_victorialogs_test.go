package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"strongbox/httpapi/app/throwaway"
)

// victoriaLogs is a VictoriaLogs server run by a test on loopback.
type victoriaLogs struct {
	bin, addr, data string
	cmd             *exec.Cmd
	done            chan struct{}
}

// startVictoriaLogs runs the VictoriaLogs binary that STRONGBOX_VICTORIALOGS
// names (.ci/run installs v1.52.1), or skips the test.
func startVictoriaLogs(t *testing.T) *victoriaLogs {
	t.Helper()
	bin := os.Getenv("STRONGBOX_VICTORIALOGS")
	if bin == "" {
		t.Skip("STRONGBOX_VICTORIALOGS does not name a VictoriaLogs binary (.ci/run installs v1.52.1)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	vl := &victoriaLogs{bin: bin, addr: ln.Addr().String(), data: t.TempDir()}
	ln.Close()
	vl.start(t)
	t.Cleanup(vl.stop)
	return vl
}

func (vl *victoriaLogs) start(t *testing.T) {
	t.Helper()
	vl.cmd = exec.Command(vl.bin, "-httpListenAddr="+vl.addr, "-storageDataPath="+vl.data, "-loggerLevel=ERROR", "-retentionPeriod=100y")
	vl.done = make(chan struct{})
	if err := vl.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func(cmd *exec.Cmd, done chan struct{}) { cmd.Wait(); close(done) }(vl.cmd, vl.done)
	waitFor(t, "VictoriaLogs to serve", 30*time.Second, func() bool {
		res, err := http.Get("http://" + vl.addr + "/health")
		if err == nil {
			res.Body.Close()
		}
		return err == nil && res.StatusCode == 200
	})
}

// stop stops VictoriaLogs gracefully (it flushes what it holds).
func (vl *victoriaLogs) stop() {
	vl.cmd.Process.Signal(os.Interrupt)
	select {
	case <-vl.done:
	case <-time.After(20 * time.Second):
		vl.cmd.Process.Kill()
		<-vl.done
	}
}

func (vl *victoriaLogs) endpoint() string {
	return "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT=http://" + vl.addr + "/insert/opentelemetry/v1/logs"
}

// query runs a LogsQL query and returns its rows.
func (vl *victoriaLogs) query(t *testing.T, q string) []map[string]string {
	t.Helper()
	res, err := http.PostForm("http://"+vl.addr+"/select/logsql/query", url.Values{"query": {q}})
	if err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	defer res.Body.Close()
	var rows []map[string]string
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var row map[string]string
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("query %s: %v: %s", q, err, sc.Text())
		}
		rows = append(rows, row)
	}
	if res.StatusCode != 200 {
		t.Fatalf("query %s: %s", q, res.Status)
	}
	return rows
}

// counts returns how many rows VictoriaLogs holds and how many distinct
// log.record.uid.
func (vl *victoriaLogs) counts(t *testing.T) (rows, uniq int) {
	t.Helper()
	r := vl.query(t, `* | stats count() rows, count_uniq("log.record.uid") uniq`)
	if len(r) != 1 {
		return 0, 0
	}
	rows, _ = strconv.Atoi(r[0]["rows"])
	uniq, _ = strconv.Atoi(r[0]["uniq"])
	return rows, uniq
}

const (
	vlEmail    = "admin@example.com"
	vlPassword = "password123"
)

func vlLogin(t *testing.T, client *http.Client, base string) string {
	t.Helper()
	res, body := vlDo(t, client, "POST", base+"/api/collections/_superusers/auth-with-password", "", fmt.Sprintf(`{"identity":%q,"password":%q}`, vlEmail, vlPassword))
	var v struct{ Token string }
	if res != http.StatusOK || json.Unmarshal(body, &v) != nil || v.Token == "" {
		t.Fatalf("login: %d %s", res, body)
	}
	return v.Token
}

func vlDo(t *testing.T, client *http.Client, method, url, token, body string) (int, []byte) {
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
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
	}
}

// storedIDs returns the ids of every log the server holds.
func storedIDs(t *testing.T, client *http.Client, base, token string) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	for page := 1; ; page++ {
		code, body := vlDo(t, client, "GET", fmt.Sprintf("%s/api/logs?perPage=1000&page=%d&skipTotal=1&fields=id", base, page), token, "")
		var p struct{ Items []struct{ ID string } }
		if code != 200 || json.Unmarshal(body, &p) != nil {
			t.Fatalf("GET /api/logs: %d %s", code, body)
		}
		for _, it := range p.Items {
			ids[it.ID] = true
		}
		if len(p.Items) < 1000 {
			return ids
		}
	}
}

// TestExportVictoriaLogs ships the logs of a real strongbox to a real
// VictoriaLogs: the fields arrive as the export maps them; a kill -9 in the
// middle of a burst loses none of the stored logs and sends at most one
// batch twice; and VictoriaLogs stopped for 15 s, then started again,
// receives everything logged meanwhile.
func TestExportVictoriaLogs(t *testing.T) {
	const outage = 15 * time.Second
	vl := startVictoriaLogs(t)
	bin := strongboxBinary(t)
	dir := t.TempDir()
	env := []string{"STRONGBOX_BCRYPT_COST=4", "STRONGBOX_SUPERUSER_EMAIL=" + vlEmail, "STRONGBOX_SUPERUSER_PASSWORD=" + vlPassword,
		vl.endpoint(), "OTEL_SERVICE_NAME=shop", "OTEL_RESOURCE_ATTRIBUTES=deployment.environment=ci"}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	log := &syncBuffer{}
	defer func() {
		if t.Failed() {
			t.Logf("the server's log:\n%s", log)
		}
	}()
	start := func() (*throwaway.Process, string) {
		c, err := throwaway.StartProcess(ctx, bin, "127.0.0.1:0", dir, env, log)
		if err != nil {
			t.Fatalf("serve: %v\n%s", err, log)
		}
		t.Cleanup(func() { c.Stop() })
		return c, c.Base
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}

	// The fields.
	c, base := start()
	vlDo(t, client, "GET", base+"/api/health?probe=1&token=s3cret", "", "")
	var rows []map[string]string
	waitFor(t, "the probe in VictoriaLogs", 30*time.Second, func() bool {
		rows = vl.query(t, `url.path:="/api/health" url.query:~"probe"`)
		return len(rows) == 1
	})
	want := map[string]string{"_msg": "GET /api/health?probe=1&token=REDACTED", "http.request.method": "GET", "url.query": "probe=1&token=REDACTED",
		"http.response.status_code": "200", "client.address": "127.0.0.1", "user_agent.original": "Go-http-client/1.1",
		"severity_text": "INFO", "severity_number": "9", "service.name": "shop", "deployment.environment": "ci",
		"service.version": version, "strongbox.type": "request"}
	for k, v := range want {
		if rows[0][k] != v {
			t.Errorf("field %s = %q, want %q (row %v)", k, rows[0][k], v, rows[0])
		}
	}
	if len(rows[0]["log.record.uid"]) != 15 || rows[0]["strongbox.exec_time"] == "" {
		t.Errorf("row %v", rows[0])
	}

	// kill -9 in the middle of a burst.
	var sent atomic.Int64
	var wg sync.WaitGroup
	killed := make(chan struct{})
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-killed:
					return
				default:
				}
				res, err := client.Get(fmt.Sprintf("%s/api/health?burst=%d-%d", base, w, i))
				if err != nil {
					return
				}
				res.Body.Close()
				sent.Add(1)
			}
		}()
	}
	waitFor(t, "3000 requests", time.Minute, func() bool { return sent.Load() >= 3000 })
	c.Cmd.Process.Kill()
	close(killed)
	wg.Wait()
	<-c.Done
	c, base = start()
	token := vlLogin(t, client, base)
	ids := storedIDs(t, client, base, token)
	waitFor(t, "every stored log in VictoriaLogs", time.Minute, func() bool {
		_, uniq := vl.counts(t)
		return uniq >= len(ids)
	})
	got := map[string]int{}
	for _, r := range vl.query(t, `* | fields "log.record.uid"`) {
		got[r["log.record.uid"]]++
	}
	missing, dups := 0, 0
	for id := range ids {
		if got[id] == 0 {
			missing++
		}
	}
	for _, n := range got {
		dups += n - 1
	}
	t.Logf("kill -9 after %d requests: %d logs stored, %d in VictoriaLogs, %d missing, %d duplicates", sent.Load(), len(ids), len(got), missing, dups)
	if missing > 0 || dups > 1000 {
		t.Errorf("%d stored logs missing, %d duplicates (at most a batch, 1000)", missing, dups)
	}

	// VictoriaLogs down for 15 s (the figure), requests logged
	// all along.
	vl.stop()
	down := time.Now()
	for i := range 300 {
		vlDo(t, client, "GET", fmt.Sprintf("%s/api/health?outage=%d", base, i), "", "")
		time.Sleep(time.Until(down.Add(time.Duration(i+1) * outage / 300)))
	}
	_, body := vlDo(t, client, "GET", base+"/api/logs/export", token, "")
	if !strings.Contains(string(body), `"lastError":"POST http://`+vl.addr) {
		t.Errorf("export state during the outage: %s", body)
	}
	vl.start(t)
	up := time.Now()
	waitFor(t, "the outage's 300 requests in VictoriaLogs", time.Minute, func() bool {
		return len(vl.query(t, `url.query:~"outage=" | stats count_uniq(url.query) n`)) == 1 &&
			vl.query(t, `url.query:~"outage=" | stats count_uniq(url.query) n`)[0]["n"] == "300"
	})
	_, body = vlDo(t, client, "GET", base+"/api/logs/export", token, "")
	t.Logf("outage of %v: everything in VictoriaLogs %v after its start; export state: %s", up.Sub(down).Round(time.Millisecond), time.Since(up).Round(time.Millisecond), body)
	if _, err := os.Stat(filepath.Join(dir, "export.cursor")); err != nil {
		t.Errorf("no cursor: %v", err)
	}
}
