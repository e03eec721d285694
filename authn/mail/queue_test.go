package mail_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	strongmail "strongbox/authn/mail"
	"strongbox/conformance/smtpsink"
)

// logBuffer is a concurrency-safe log sink.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type queueEnv struct {
	q         *strongmail.Queue
	log       *logBuffer
	transport atomic.Pointer[strongmail.Transport]
	dir       string
}

func newQueue(t *testing.T, size int, tr strongmail.Transport, sink *smtpsink.Sink) *queueEnv {
	t.Helper()
	e := &queueEnv{log: &logBuffer{}, dir: t.TempDir()}
	e.transport.Store(&tr)
	cfg := strongmail.QueueConfig{
		Transport: func() strongmail.Transport { return *e.transport.Load() },
		Outbox:    &strongmail.Outbox{Dir: e.dir},
		Logger:    slog.New(slog.NewTextHandler(e.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Size:      size,
		Now:       func() time.Time { return testDate },
	}
	if sink != nil {
		cfg.TLSConfig = sink.ClientTLS
	}
	e.q = strongmail.NewQueue(cfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		e.q.Close(ctx)
	})
	return e
}

// closeQueue drains the queue, with a deadline.
func (e *queueEnv) close(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := e.q.Close(ctx); err != nil {
		t.Fatalf("Close = %v", err)
	}
}

var sender = mail.Address{Name: "Support", Address: "support@example.com"}

// TestQueueFollowsTransport sends through SMTP while the transport says
// so and through the outbox once SMTP is disabled, filling From.
func TestQueueFollowsTransport(t *testing.T) {
	sink := smtpsink.Start(t, smtpsink.Options{StartTLS: true})
	e := newQueue(t, 0, strongmail.Transport{From: sender, SMTPEnabled: true, SMTP: strongmail.SMTPConfig{Host: sink.Host, Port: sink.Port}}, sink)
	m := testMessage()
	m.From = mail.Address{}
	if err := e.q.Send(t.Context(), m); err != nil {
		t.Fatalf("Send = %v", err)
	}
	got := sink.Next(t) // delivered: the worker is idle again
	if got.From != "support@example.com" || !got.TLS {
		t.Errorf("SMTP mail from %q TLS %v, want support@example.com over TLS", got.From, got.TLS)
	}
	e.transport.Store(&strongmail.Transport{From: sender})
	if err := e.q.Send(t.Context(), m); err != nil {
		t.Fatalf("Send = %v", err)
	}
	name, err := e.q.SendNow(t.Context(), m)
	if err != nil {
		t.Fatalf("SendNow = %v", err)
	}
	e.close(t)
	// SendNow's mail is its caller's: not counted.
	if got := e.q.Stats(); got.Sent != 2 || got.Failed != 0 || got.Queued != 0 {
		t.Errorf("Stats() = %+v, want 2 sent", got)
	}
	if files := list(t, e.dir); len(files) != 2 || !slices.Contains(files, name) {
		t.Errorf("outbox holds %q, want 2 mails, one of them SendNow's %q", files, name)
	}
	if n := sink.Pending(); n != 0 {
		t.Errorf("sink got %d more mails, want 0", n)
	}
	log := e.log.String()
	if c := strings.Count(log, "level=INFO msg=\"mail: written to the outbox (SMTP is disabled)\" path="+e.dir); c != 1 {
		t.Errorf("log has %d outbox lines for the queued mail, want 1:\n%s", c, log)
	}
	if strings.Contains(log, "12345678") || strings.Contains(log, "OTP for") {
		t.Errorf("log holds the code or the subject:\n%s", log)
	}
}

// TestQueueFailureLogged checks that a failed delivery is logged at error
// level with its reason, and neither the password nor the code.
func TestQueueFailureLogged(t *testing.T) {
	sink := smtpsink.Start(t, smtpsink.Options{StartTLS: true, Username: "u", Password: "right"})
	e := newQueue(t, 0, strongmail.Transport{From: sender, SMTPEnabled: true, SMTP: strongmail.SMTPConfig{
		Host: sink.Host, Port: sink.Port, Username: "u", Password: "s3cret-wrong",
	}}, sink)
	if err := e.q.Send(t.Context(), testMessage()); err != nil {
		t.Fatalf("Send = %v, want nil (the failure is the worker's)", err)
	}
	e.close(t)
	if got := e.q.Stats(); got.Failed != 1 || got.Sent != 0 {
		t.Errorf("Stats() = %+v, want 1 failed", got)
	}
	log := e.log.String()
	want := `level=ERROR msg="mail: send failed" to=user@example.com err="mail: smtp auth: 535 5.7.8 authentication credentials invalid"`
	if !strings.Contains(log, want) {
		t.Errorf("log = %q, want it to contain %q", log, want)
	}
	for _, secret := range []string{"s3cret", "12345678"} {
		if strings.Contains(log, secret) {
			t.Errorf("log holds %q:\n%s", secret, log)
		}
	}
}

// TestQueueFull fills a queue of one behind a delivery that hangs: the
// next mail is dropped and logged, and Close, out of time, abandons the
// queued one and cuts the one under way.
func TestQueueFull(t *testing.T) {
	sink := smtpsink.Start(t, smtpsink.Options{Hang: smtpsink.HangGreeting})
	e := newQueue(t, 1, strongmail.Transport{From: sender, SMTPEnabled: true, SMTP: strongmail.SMTPConfig{
		Host: sink.Host, Port: sink.Port, StepTimeout: time.Hour,
	}}, sink)
	if err := e.q.Send(t.Context(), testMessage()); err != nil {
		t.Fatalf("Send 1 = %v", err)
	}
	sink.WaitSession(t) // the worker holds mail 1
	if err := e.q.Send(t.Context(), testMessage()); err != nil {
		t.Fatalf("Send 2 = %v", err)
	}
	if err := e.q.Send(t.Context(), testMessage()); !errors.Is(err, strongmail.ErrQueueFull) {
		t.Fatalf("Send 3 = %v, want ErrQueueFull", err)
	}
	if got, want := e.q.Stats(), (strongmail.QueueStats{Queued: 1, Capacity: 1, Dropped: 1}); got != want {
		t.Errorf("Stats() = %+v, want %+v", got, want)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := e.q.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Close = %v, want context.Canceled", err)
	}
	if err := e.q.Send(t.Context(), testMessage()); !errors.Is(err, strongmail.ErrClosed) {
		t.Errorf("Send after Close = %v, want ErrClosed", err)
	}
	// The one under way failed (cut); the queued one was abandoned.
	if got, want := e.q.Stats(), (strongmail.QueueStats{Capacity: 1, Failed: 1, Dropped: 2}); got != want {
		t.Errorf("Stats() after Close = %+v, want %+v", got, want)
	}
	log := e.log.String()
	for _, want := range []string{
		`level=ERROR msg="mail: queue full: mail dropped" to=user@example.com queueSize=1`,
		// hello, or dial if the sink accepted before the dial returned
		`level=ERROR msg="mail: send failed" to=user@example.com err="mail: smtp `,
		`: context canceled`,
		`level=ERROR msg="mail: shutting down: queued mails abandoned" count=1`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log = %q, want it to contain %q", log, want)
		}
	}
}

func TestQueueSendRefusesInvalid(t *testing.T) {
	e := newQueue(t, 0, strongmail.Transport{From: sender}, nil)
	m := testMessage()
	m.Subject = "x\nBcc: y@example.com"
	if err := e.q.Send(t.Context(), m); !errors.Is(err, strongmail.ErrHeaderInjection) {
		t.Errorf("Send = %v, want ErrHeaderInjection", err)
	}
	if _, err := e.q.SendNow(t.Context(), m); !errors.Is(err, strongmail.ErrHeaderInjection) {
		t.Errorf("SendNow = %v, want ErrHeaderInjection", err)
	}
	e.close(t)
	if _, err := os.Stat(e.dir); err != nil {
		t.Fatal(err)
	}
	if n := len(list(t, e.dir)); n != 0 {
		t.Errorf("outbox holds %d mails, want 0", n)
	}
}

// TestQueueFairPerRecipient holds the worker on a first mail and floods the
// queue: one address far past its lane, then ten addresses past the whole
// queue. Each lane stays bounded, and a real user's mail sent during the
// flood is queued (a flood mail gives way) and delivered.
func TestQueueFairPerRecipient(t *testing.T) {
	release := make(chan struct{})
	var held atomic.Bool
	e := &queueEnv{log: &logBuffer{}, dir: t.TempDir()}
	e.q = strongmail.NewQueue(strongmail.QueueConfig{
		Transport: func() strongmail.Transport {
			if held.CompareAndSwap(false, true) {
				<-release // the worker's first delivery waits for the flood
			}
			return strongmail.Transport{From: sender}
		},
		Outbox:       &strongmail.Outbox{Dir: e.dir},
		Logger:       slog.New(slog.NewTextHandler(e.log, nil)),
		Size:         16,
		PerRecipient: 4,
		Now:          func() time.Time { return testDate },
	})
	to := func(addr string) *strongmail.Message {
		m := testMessage()
		m.To = []mail.Address{{Address: addr}}
		return m
	}
	if err := e.q.Send(t.Context(), to("first@example.com")); err != nil {
		t.Fatalf("Send first = %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !held.Load() && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	accepted := map[string]int{}
	send := func(addr string) {
		if err := e.q.Send(t.Context(), to(addr)); err == nil {
			accepted[addr]++
		} else if !errors.Is(err, strongmail.ErrQueueFull) {
			t.Fatalf("Send to %s = %v", addr, err)
		}
	}
	for range 50 {
		send("Flood@example.com")
	}
	if n := accepted["Flood@example.com"]; n != 4 {
		t.Errorf("one address's flood: %d mails queued, want its lane's 4", n)
	}
	for i := range 200 {
		send(fmt.Sprintf("flood%d@example.com", i%10))
	}
	send("real@example.com")
	if accepted["real@example.com"] != 1 {
		t.Fatalf("the real user's mail was dropped during the flood")
	}
	close(release)
	e.close(t)
	real := 0
	for _, name := range list(t, e.dir) {
		b, err := os.ReadFile(filepath.Join(e.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "real@example.com") {
			real++
		}
	}
	if n := len(list(t, e.dir)); real != 1 || n != 1+16 {
		t.Errorf("outbox: %d mails, %d to the real user; want 17 (the first and a full queue), 1", n, real)
	}
}
