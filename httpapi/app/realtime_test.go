package app

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// openStream opens GET /api/realtime on ts and reads its first line,
// with a deadline so that a stream the server never ends fails the test.
func openStream(t *testing.T, ts *testServer) (*bufio.Reader, func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	req, err := http.NewRequestWithContext(ctx, "GET", ts.base+"/api/realtime", nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	res, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	closeIt := func() { cancel(); res.Body.Close() }
	t.Cleanup(closeIt)
	rd := bufio.NewReader(res.Body)
	if line, err := rd.ReadString('\n'); err != nil || !strings.HasPrefix(line, "id:") {
		t.Fatalf("first line of the stream = %q, %v; want its id", line, err)
	}
	return rd, closeIt
}

// wantEnded asserts that the stream rd has been ended by the server.
func wantEnded(t *testing.T, rd *bufio.Reader) {
	t.Helper()
	if _, err := io.Copy(io.Discard, rd); err != nil {
		t.Errorf("reading the stream to its end: %v, want the server to end it", err)
	}
}

// TestRealtimeRestartStop: an open realtime stream delays neither a
// restart (the gate ends the streams before it waits for the requests in
// flight) nor a graceful stop (Shutdown ends them).
func TestRealtimeRestartStop(t *testing.T) {
	t.Parallel()
	ts := startServer(t, t.TempDir(), func(c *Config) { c.ShutdownTimeout = 20 * time.Second }, nil)
	rd, _ := openStream(t, ts)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	start := time.Now()
	if err := ts.Restart(ctx, nil); err != nil {
		t.Fatalf("Restart with a stream open = %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Restart took %v with a stream open, want it not to wait for the stream", took)
	}
	wantEnded(t, rd)

	rd, _ = openStream(t, ts)
	start = time.Now()
	if err := ts.stop(); err != nil {
		t.Fatalf("graceful stop with a stream open: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the stop took %v with a stream open, want it not to wait for the stream", took)
	}
	wantEnded(t, rd)
}
