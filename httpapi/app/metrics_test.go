package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"strongbox/httpapi/metrics"
	"strongbox/logstore/otlp"
)

// startMetricsServer starts a server with metrics on 127.0.0.1:0 and
// returns it with the base URL of its metrics listener.
func startMetricsServer(t *testing.T) (*testServer, string) {
	t.Helper()
	var maddr net.Addr
	ts := startServer(t, t.TempDir(), func(c *Config) {
		c.MetricsAddr = "127.0.0.1:0"
		c.OnReady = func(r Ready) { maddr = r.Metrics }
	}, nil)
	if maddr == nil {
		t.Fatal("Ready.Metrics is nil with MetricsAddr set")
	}
	return ts, "http://" + maddr.String()
}

func scrape(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != metrics.ContentType {
		t.Fatalf("GET /metrics = %d %q, want 200 %q", resp.StatusCode, resp.Header.Get("Content-Type"), metrics.ContentType)
	}
	return string(b)
}

// TestMetricsOffByDefault: without MetricsAddr there is no listener, no
// registry, and the API records nothing.
func TestMetricsOffByDefault(t *testing.T) {
	t.Parallel()
	var ready Ready
	ts := startServer(t, t.TempDir(), func(c *Config) { c.OnReady = func(r Ready) { ready = r } }, nil)
	if ready.Metrics != nil || ts.Metrics() != nil || ts.metrics != nil {
		t.Errorf("metrics without MetricsAddr: Ready.Metrics %v, Metrics() %v", ready.Metrics, ts.Metrics())
	}
	if a := ts.apiServer.Load(); a == nil {
		t.Fatal("no API serving")
	}
	// The API serves no /metrics either: its JSON 404.
	if code, body, _ := ts.do(t, "GET", "/metrics", "", ""); code != 404 || !strings.Contains(string(body), `"status":404`) {
		t.Errorf("API GET /metrics = %d %s, want the JSON 404", code, body)
	}
}

// TestMetricsOn scrapes a server with metrics: the families of every
// part, the requests made counted under their route, 404 and 405.
func TestMetricsOn(t *testing.T) {
	t.Parallel()
	ts, mbase := startMetricsServer(t)
	for range 3 {
		if code, _, err := ts.do(t, "GET", "/api/health", "", ""); err != nil || code != 200 {
			t.Fatalf("GET /api/health = %d, %v", code, err)
		}
	}
	ts.do(t, "GET", "/api/collections/users/records/"+strings.Repeat("x", 30), "", "")
	ts.do(t, "POST", "/api/collections/_superusers/auth-with-password", "", `{"identity":"`+testEmail+`","password":"wrong"}`)
	out := scrape(t, mbase)
	for _, want := range []string{
		`http_server_request_duration_seconds_count{http_request_method="GET",http_response_status_code="200",http_route="/api/health"} 3`,
		`http_server_request_duration_seconds_count{http_request_method="GET",http_response_status_code="404",http_route="/api/collections/{collection}/records/{id}"} 1`,
		`strongbox_auth_sign_ins_total{method="password",outcome="failure"} 1`,
		"# TYPE strongbox_logs_entries gauge\n",
		"# TYPE strongbox_logs_retention_deleted_entries_total counter\n",
		"strongbox_mail_queue_depth 0\n",
		"strongbox_backups_failed_total 0\n",
		"strongbox_realtime_connections 0\n",
		"strongbox_stores_open 1\n",
		"# TYPE go_goroutines gauge\n",
		"# TYPE process_start_time_seconds gauge\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, strings.Repeat("x", 30)) {
		t.Errorf("a raw path became a label value:\n%s", out)
	}
	for _, tt := range []struct {
		method, path string
		status       int
	}{{"POST", "/metrics", 405}, {"GET", "/", 404}, {"GET", "/api/health", 404}} {
		req, _ := http.NewRequest(tt.method, mbase+tt.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%s %s on the metrics listener = %d, want %d", tt.method, tt.path, resp.StatusCode, tt.status)
		}
	}
	// A backup is counted, with its size and time.
	if code, body, _ := ts.do(t, "POST", "/api/backups", ts.login(t), `{"name":"m.zip"}`); code != 204 {
		t.Fatalf("POST /api/backups = %d %s", code, body)
	}
	out = scrape(t, mbase)
	for _, want := range []string{"strongbox_backups_succeeded_total 1\n", "# TYPE strongbox_backup_last_size_bytes gauge\n", "# TYPE strongbox_backup_last_success_timestamp_seconds gauge\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape after a backup lacks %q:\n%s", want, out)
		}
	}
	if tool := promtoolPath(); tool != "" {
		cmd := exec.Command(tool, "check", "metrics")
		cmd.Stdin = strings.NewReader(out)
		if msg, err := cmd.CombinedOutput(); err != nil || len(msg) > 0 {
			t.Errorf("promtool check metrics: %v\n%s", err, msg)
		}
	} else {
		t.Log("promtool not found (STRONGBOX_PROMTOOL, PATH): the output is not linted")
	}
	// The listener stops with the server.
	if err := ts.stop(); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.Get(mbase + "/metrics"); err == nil {
		resp.Body.Close()
		t.Errorf("the metrics listener still answers after Run returned")
	}
}

// TestMetricsBadAddress: an address that cannot be bound fails the start,
// naming the setting, before the data dir is created.
func TestMetricsBadAddress(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, addr := range []string{"no-port", "127.0.0.1:99999", busy.Addr().String()} {
		dir := filepath.Join(t.TempDir(), "data")
		s := New(Config{Options: Options{Dir: dir, BcryptCost: 4}, Addr: "127.0.0.1:0", MetricsAddr: addr})
		err := s.Run(t.Context())
		if err == nil || !strings.Contains(err.Error(), "STRONGBOX_METRICS_ADDR") || !strings.Contains(err.Error(), strconv.Quote(addr)) {
			t.Errorf("Run with MetricsAddr %q = %v, want an error naming the setting and the address", addr, err)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("MetricsAddr %q: the data dir was created", addr)
		}
	}
}

func promtoolPath() string {
	if p := os.Getenv("STRONGBOX_PROMTOOL"); p != "" {
		return p
	}
	p, _ := exec.LookPath("promtool")
	return p
}

// TestPrometheusScrapes runs a real Prometheus (STRONGBOX_PROMETHEUS, the
// binary of Debian's prometheus package) that scrapes the server's
// /metrics every second, and asks its query API for the HTTP histogram's
// count of the requests made.
func TestPrometheusScrapes(t *testing.T) {
	t.Parallel()
	bin := os.Getenv("STRONGBOX_PROMETHEUS")
	if bin == "" {
		t.Skip("STRONGBOX_PROMETHEUS (the prometheus binary) not set")
	}
	ts, mbase := startMetricsServer(t)
	const n = 7
	for range n {
		if code, _, err := ts.do(t, "GET", "/api/health", "", ""); err != nil || code != 200 {
			t.Fatalf("GET /api/health = %d, %v", code, err)
		}
	}
	promURL := startPrometheus(t, bin, strings.TrimPrefix(mbase, "http://"))
	query := `sum(http_server_request_duration_seconds_count{http_route="/api/health",http_request_method="GET",http_response_status_code="200"})`
	deadline := time.Now().Add(60 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		v, err := promQuery(promURL, query)
		if err == nil && v == strconv.Itoa(n) {
			return
		}
		last = fmt.Sprintf("%q, %v", v, err)
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("Prometheus query %s = %s, want %d within 60 s", query, last, n)
}

// startPrometheus runs bin scraping target every second, on a free port
// of 127.0.0.1, and returns its base URL once ready.
func startPrometheus(t *testing.T, bin, target string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: strongbox\n    static_configs:\n      - targets: [%q]\n", target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus output:\n%s", stderr.String())
		}
	})
	base := "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if resp, err := http.Get(base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return base
			}
		}
	}
	t.Fatalf("prometheus not ready within 30 s:\n%s", stderr.String())
	return ""
}

// promQuery returns the value of an instant query's single sample.
func promQuery(base, q string) (string, error) {
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var r struct {
		Status string
		Data   struct {
			Result []struct {
				Value [2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return "", err
	}
	if r.Status != "success" || len(r.Data.Result) != 1 {
		return "", fmt.Errorf("status %q, %d results", r.Status, len(r.Data.Result))
	}
	v, _ := r.Data.Result[0].Value[1].(string)
	return v, nil
}

// TestMetricsExport: the export's families, as a receiver is down (the
// lag in entries and seconds), then refuses a batch (400: failed counts
// its logs), then takes the rest (exported, no lag).
func TestMetricsExport(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	status := 503
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		defer mu.Unlock()
		w.WriteHeader(status)
	}))
	defer recv.Close()
	set := func(s int) { mu.Lock(); status = s; mu.Unlock() }
	var maddr net.Addr
	ts := startServer(t, t.TempDir(), func(c *Config) {
		c.MetricsAddr = "127.0.0.1:0"
		c.OnReady = func(r Ready) { maddr = r.Metrics }
		c.Export = &otlp.Config{Endpoint: recv.URL, Protocol: otlp.ProtoProtobuf, Timeout: 5 * time.Second}
	}, nil)
	mbase := "http://" + maddr.String()
	value := func(out, name string) float64 {
		for line := range strings.Lines(out) {
			if v, ok := strings.CutPrefix(line, name+" "); ok {
				f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
				return f
			}
		}
		t.Fatalf("scrape lacks %s:\n%s", name, out)
		return 0
	}
	var out string
	waitUntil(t, "a lag while the receiver is down", func() bool {
		out = scrape(t, mbase)
		return value(out, "strongbox_logs_export_lag_entries") > 0 && value(out, "strongbox_logs_export_lag_seconds") > 0
	})
	if value(out, "strongbox_logs_exported_total") != 0 || value(out, "strongbox_logs_export_failed_total") != 0 || value(out, "strongbox_logs_export_lost_total") != 0 {
		t.Errorf("receiver down:\n%s", out)
	}
	for _, want := range []string{"# TYPE strongbox_logs_exported_total counter\n", "# TYPE strongbox_logs_export_lag_seconds gauge\n", "(not batches)"} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %q:\n%s", want, out)
		}
	}
	set(400)
	waitUntil(t, "the batch refused", func() bool { return value(scrape(t, mbase), "strongbox_logs_export_failed_total") > 0 })
	set(200)
	if code, _, err := ts.do(t, "GET", "/api/health", "", ""); err != nil || code != 200 {
		t.Fatalf("GET /api/health = %d, %v", code, err)
	}
	waitUntil(t, "the rest exported, no lag", func() bool {
		out = scrape(t, mbase)
		return value(out, "strongbox_logs_exported_total") > 0 && value(out, "strongbox_logs_export_lag_entries") == 0
	})
	if v := value(out, "strongbox_logs_export_lag_seconds"); v != 0 {
		t.Errorf("caught up: lag_seconds %v, want 0", v)
	}
	if tool := promtoolPath(); tool != "" {
		cmd := exec.Command(tool, "check", "metrics")
		cmd.Stdin = strings.NewReader(out)
		if msg, err := cmd.CombinedOutput(); err != nil || len(msg) > 0 {
			t.Errorf("promtool check metrics: %v\n%s", err, msg)
		}
	}
}
