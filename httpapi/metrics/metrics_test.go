package metrics

import (
	"bytes"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// sampleWriter is a scrape with every kind of sample, given out of order.
func sampleWriter() *Writer {
	w := NewWriter()
	w.Gauge("b_gauge", "A gauge.", 2.5, "z", "1", "a", "2")
	w.Counter("a_total", "A counter\\ with a backslash\nand a line feed.", 3, "path", `C:\dir "quoted"`+"\nnext")
	w.Counter("a_total", "ignored help", 1, "path", "plain")
	w.Gauge("a_total", "a gauge under a counter's name: dropped", 9)
	h := NewHistogram([]float64{0.1, 1})
	for _, v := range []float64{0.05, 0.1, 0.5, 2} {
		h.Observe(v)
	}
	w.Histogram("c_seconds", "A histogram.", h.Snapshot(), "route", "/x")
	w.Gauge("d_inf", "Infinities.", posInf())
	return w
}

func posInf() float64 { return 1 / zero }

var zero = 0.0

func TestWriterGolden(t *testing.T) {
	var b bytes.Buffer
	if _, err := sampleWriter().WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "writer.golden")
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("WriteTo =\n%s\nwant\n%s", got, want)
	}
	// Stable: a second gather of the same values writes the same bytes.
	var again bytes.Buffer
	sampleWriter().WriteTo(&again)
	if again.String() != b.String() {
		t.Errorf("second WriteTo differs:\n%s", again.String())
	}
}

func TestEscapeLabel(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{`a\b`, `a\\b`},
		{`say "hi"`, `say \"hi\"`},
		{"two\nlines", `two\nlines`},
		{"\\\"\n", `\\\"\n`},
		{"tab\tand ünïcode", "tab\tand ünïcode"},
	}
	for _, tt := range tests {
		if got := escapeLabel(tt.in); got != tt.want {
			t.Errorf("escapeLabel(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestHistogramBuckets(t *testing.T) {
	h := NewHistogram(DurationBuckets)
	tests := []struct {
		v      float64
		bucket int // index in Counts; len(DurationBuckets) = +Inf
	}{
		{0, 0}, {0.005, 0}, {0.0051, 1}, {0.01, 1}, {0.3, 7}, {10, 13}, {10.01, 14}, {1e9, 14},
	}
	for _, tt := range tests {
		before := h.Snapshot()
		h.Observe(tt.v)
		after := h.Snapshot()
		got := -1
		for i := range after.Counts {
			if after.Counts[i] != before.Counts[i] {
				got = i
			}
		}
		if got == -1 && after.Count == before.Count+1 {
			got = len(DurationBuckets)
		}
		if got != tt.bucket {
			t.Errorf("Observe(%v) went to bucket %d, want %d", tt.v, got, tt.bucket)
		}
	}
	s := h.Snapshot()
	if s.Count != uint64(len(tests)) {
		t.Errorf("Count = %d, want %d", s.Count, len(tests))
	}
	if want := 0 + 0.005 + 0.0051 + 0.01 + 0.3 + 10 + 10.01 + 1e9; s.Sum != want {
		t.Errorf("Sum = %v, want %v", s.Sum, want)
	}
	if len(DurationBuckets) != 14 || DurationBuckets[0] != 0.005 || DurationBuckets[13] != 10 {
		t.Errorf("DurationBuckets = %v, want OTel's 0.005 … 10", DurationBuckets)
	}
}

func TestAPIBoundsLabels(t *testing.T) {
	a := NewAPI()
	a.Request("GET", "/api/health", 200, 3*time.Millisecond)
	a.Request("BREW", "", 999, time.Second)
	a.SignIn("password", "success")
	a.Refused("login")
	var b bytes.Buffer
	w := NewWriter()
	a.Gather(w)
	w.WriteTo(&b)
	out := b.String()
	for _, want := range []string{
		`http_server_request_duration_seconds_bucket{http_request_method="GET",http_response_status_code="200",http_route="/api/health",le="0.005"} 1`,
		`http_server_request_duration_seconds_count{http_request_method="_OTHER",http_response_status_code="_OTHER",http_route="_OTHER"} 1`,
		`strongbox_auth_sign_ins_total{method="password",outcome="success"} 1`,
		`strongbox_throttle_refusals_total{limit="login"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("Gather lacks %s\n%s", want, out)
		}
	}
	// Past MaxSeries, new label sets count under _OTHER.
	for i := range MaxSeries + 10 {
		a.Refused(strings.Repeat("x", i))
	}
	if n := a.refusals.n.Load(); n != MaxSeries+1 && n != MaxSeries {
		t.Errorf("refusals hold %d label sets, want at most MaxSeries+1", n)
	}
}

func TestRoutePattern(t *testing.T) {
	for in, want := range map[string]string{
		"GET /api/health":             "/api/health",
		"POST /api/collections/{c}/x": "/api/collections/{c}/x",
		"/":                           "/",
		"GET /_/{path...}":            "/_/{path...}",
	} {
		if got := RoutePattern(in); got != want {
			t.Errorf("RoutePattern(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRegistryServeHTTP(t *testing.T) {
	r := NewRegistry()
	r.Register(func(w *Writer) { w.Gauge("up_gauge", "One.", 1) })
	tests := []struct {
		method, path string
		status       int
		ctype, body  string
	}{
		{"GET", "/metrics", 200, ContentType, "# HELP up_gauge One.\n# TYPE up_gauge gauge\nup_gauge 1\n"},
		{"HEAD", "/metrics", 200, ContentType, ""},
		{"POST", "/metrics", 405, "text/plain; charset=utf-8", "405 method not allowed\n"},
		{"GET", "/", 404, "text/plain; charset=utf-8", "404 page not found: metrics are at /metrics\n"},
		{"GET", "/api/health", 404, "text/plain; charset=utf-8", "404 page not found: metrics are at /metrics\n"},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
		if rec.Code != tt.status || rec.Header().Get("Content-Type") != tt.ctype || rec.Body.String() != tt.body {
			t.Errorf("%s %s = %d %q %q, want %d %q %q", tt.method, tt.path, rec.Code, rec.Header().Get("Content-Type"), rec.Body.String(), tt.status, tt.ctype, tt.body)
		}
		if tt.status == http.StatusMethodNotAllowed && rec.Header().Get("Allow") != "GET, HEAD" {
			t.Errorf("405 Allow = %q", rec.Header().Get("Allow"))
		}
	}
}

// promtool returns Prometheus's promtool, from STRONGBOX_PROMTOOL or PATH,
// or skips.
func promtool(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("STRONGBOX_PROMTOOL"); p != "" {
		return p
	}
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not found: set STRONGBOX_PROMTOOL or put promtool (Debian's prometheus) on PATH")
	}
	return p
}

// TestPromtoolCheckMetrics lints a full scrape (the API's families, the
// runtime's and the sample writer's) with promtool check metrics.
func TestPromtoolCheckMetrics(t *testing.T) {
	tool := promtool(t)
	a := NewAPI()
	a.Request("GET", "/api/health", 200, time.Millisecond)
	a.SignIn("otp", "failure")
	a.Refused("rate_limit")
	r := NewRegistry()
	r.Register(a.Gather)
	r.Register(Runtime(time.Now()))
	var b bytes.Buffer
	r.Gather().WriteTo(&b)
	cmd := exec.Command(tool, "check", "metrics")
	cmd.Stdin = &b
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("promtool check metrics: %v\n%s\ninput:\n%s", err, out, b.String())
	}
}

// BenchmarkAPIRequest is the cost recording adds to a request.
func BenchmarkAPIRequest(b *testing.B) {
	a := NewAPI()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			a.Request("GET", "/api/health", 200, 3*time.Millisecond)
		}
	})
}
