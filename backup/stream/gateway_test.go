package stream

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"strongbox/backup/s3"
	"strongbox/backup/s3/s3test"
)

// gatewayClient returns an S3 client of g's bucket through endpoint.
func gatewayClient(t *testing.T, g s3test.Gateway, endpoint string) *s3.Client {
	t.Helper()
	c, err := s3.New(s3.Config{Endpoint: endpoint, Region: g.Region, Bucket: g.Bucket, AccessKey: g.AccessKey, Secret: g.Secret,
		ForcePathStyle: true, PartSize: 5 << 20, MaxRetries: 1, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// lockedDir is a dataDir whose writes and captures may run from two
// goroutines.
type lockedDir struct {
	mu sync.Mutex
	d  *dataDir
}

func (l *lockedDir) write(name string, p ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.d.write(name, p...)
}

func (l *lockedDir) capture() (*Capture, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.d.capture()
}

func (l *lockedDir) state() map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.d.state()
}

// logBuffer collects a logger's lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestGatewayFaults ships to versitygw through a fault proxy while
// writes go on: the bucket down (every PUT answered 503) for a while,
// then a multipart upload cut mid-part and its completion refused. The
// shipper warns, its status shows the error, the changes wait, and once
// the bucket is back it catches up: the restore is the data dir's latest
// state, and no partial upload is left in the bucket.
func TestGatewayFaults(t *testing.T) {
	g := s3test.Start(t)
	proxy := s3test.StartProxy(t, g.Endpoint, nil)
	d := &lockedDir{d: newDataDir(t)}
	var log logBuffer
	s := Start(Options{Bucket: gatewayClient(t, g, proxy.URL), Capture: d.capture, Interval: 50 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	d.write("auth.journal", "first")
	waitFor(t, "the base", func() bool { return !s.Status().LastShipped.IsZero() })

	down := func(r *http.Request, nth int) s3test.Fault {
		if r.Method == http.MethodPut {
			return s3test.Answer503
		}
		return s3test.Pass
	}
	proxy.SetRule(down)
	for i := range 20 {
		d.write("auth.journal", fmt.Sprintf("while down %d", i))
		time.Sleep(20 * time.Millisecond)
	}
	waitFor(t, "the error in the status", func() bool { return s.Status().LastError != "" && s.Status().Pending })
	// A change larger than one object (multipart), whose part is cut and
	// whose completion is refused once each.
	big := make([]byte, 6<<20)
	rand.Read(big)
	d.write("logs/0001", string(big))
	proxy.SetRule(func(r *http.Request, nth int) s3test.Fault {
		switch {
		case s3test.Step(r) == "PUT part 1" && nth == 0:
			return s3test.CutMidBody
		case s3test.Step(r) == "POST complete" && nth == 0:
			return s3test.Answer500
		}
		return s3test.Pass
	})
	back := time.Now()
	d.write("auth.journal", "back")
	want := d.state()
	// Shipped after the last write and nothing pending: caught up (a
	// window relative to the poll's own time would be missed by a poll
	// that runs late on a busy machine).
	waitFor(t, "the catch-up", func() bool {
		st := s.Status()
		return !st.Pending && st.LastShipped.After(back)
	})
	s.Stop()
	if n := proxy.Faults(); n < 2 {
		t.Errorf("the proxy cut %d uploads, want the part and the completion", n)
	}
	if !strings.Contains(log.String(), "cannot ship to the bucket") || !strings.Contains(log.String(), "caught up") {
		t.Errorf("the log holds no warning or no catch-up:\n%s", log.String())
	}
	out := filepath.Join(t.TempDir(), "r")
	res, err := Restore(context.Background(), RestoreOptions{Bucket: gatewayClient(t, g, g.Endpoint)}, out)
	if err != nil {
		t.Fatal(err)
	}
	if diff := sameState(want, readTree(t, out)); diff != "" || res.Damage != "" {
		t.Fatalf("restored: %s %s", diff, res.Damage)
	}
	for _, f := range g.Files(t) {
		if !strings.HasPrefix(f, "stream/") {
			t.Errorf("left in the bucket: %s", f)
		}
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
