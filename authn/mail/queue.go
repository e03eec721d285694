package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"strings"
	"sync"
	"time"
)

// DefaultQueueSize is how many mails may wait for the worker of a Queue;
// past it, a new mail is dropped (and logged).
const DefaultQueueSize = 256

var (
	// ErrQueueFull is returned by Queue.Send when the queue holds
	// QueueConfig.Size mails: the mail is dropped, and the Queue has
	// logged it.
	ErrQueueFull = errors.New("mail: queue full: mail dropped")
	// ErrClosed is returned by Queue.Send once Close has begun.
	ErrClosed = errors.New("mail: queue closed")
)

// Transport is how mail goes out at one moment: the settings' smtp object
// (SMTP used when SMTPEnabled, else the outbox) and the default sender
// (meta.senderName and meta.senderAddress).
type Transport struct {
	SMTPEnabled bool
	SMTP        SMTPConfig
	From        mail.Address
}

// QueueConfig configures a Queue.
type QueueConfig struct {
	// Transport returns the current transport; it is called for every
	// mail, so that a settings change applies to the next one. Required.
	Transport func() Transport
	// Outbox receives the mails while SMTP is disabled. Required.
	Outbox *Outbox
	// Logger logs each mail written to the outbox (info, with its path)
	// and each failure (error, with the reason); nil = discard. Never the
	// subject or body, which may hold a code or a token.
	Logger *slog.Logger
	// Size is the queue's capacity; 0 = DefaultQueueSize.
	Size int
	// Now is the clock of the Date header and the outbox names; nil =
	// time.Now.
	Now func() time.Time
	// TLSConfig, if set, replaces the TLS configuration of every SMTP
	// exchange (tests trust their own certificate with it).
	TLSConfig *tls.Config
}

// Queue is the server's Sender. Send only checks and enqueues a mail; one
// worker delivers them in order through the transport of the moment. So
// an API answer never waits for SMTP, and its timing tells nothing of
// whether a mail was sent. A failed delivery is logged at error level
// with its reason; the API client never learns of it.
type Queue struct {
	cfg    QueueConfig
	log    *slog.Logger
	now    func() time.Time
	ch     chan *Message
	ctx    context.Context // ends deliveries when Close gives up
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	closed bool
}

var _ SyncSender = (*Queue)(nil)

// NewQueue starts a Queue's worker; Close stops it.
func NewQueue(cfg QueueConfig) *Queue {
	size := cfg.Size
	if size <= 0 {
		size = DefaultQueueSize
	}
	q := &Queue{cfg: cfg, log: cfg.Logger, now: cfg.Now, ch: make(chan *Message, size), done: make(chan struct{})}
	if q.log == nil {
		q.log = slog.New(slog.DiscardHandler)
	}
	if q.now == nil {
		q.now = time.Now
	}
	q.ctx, q.cancel = context.WithCancel(context.Background())
	go q.work()
	return q
}

// Send checks m, fills its From from the transport when it is zero, and
// enqueues a copy: it returns before the mail is delivered. It returns
// ErrHeaderInjection or ErrInvalidMessage for a message that cannot be
// sent, ErrQueueFull (already logged) when the queue is full, and
// ErrClosed once Close has begun.
func (q *Queue) Send(ctx context.Context, m *Message) error {
	cp, err := q.prepare(m)
	if err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrClosed
	}
	select {
	case q.ch <- cp:
		return nil
	default:
		q.log.Error("mail: queue full: mail dropped", "to", recipients(cp), "queueSize", cap(q.ch))
		return ErrQueueFull
	}
}

// SendNow delivers m at once, on the caller's goroutine, through the
// current transport, and returns the delivery's error (an *SMTPError for
// a failed SMTP exchange): for the test-email route, whose caller wants to
// know. It does not log.
func (q *Queue) SendNow(ctx context.Context, m *Message) error {
	cp, err := q.prepare(m)
	if err != nil {
		return err
	}
	_, err = q.deliver(ctx, cp)
	return err
}

func (q *Queue) prepare(m *Message) (*Message, error) {
	cp := *m
	cp.To = append([]mail.Address(nil), m.To...)
	if cp.From == (mail.Address{}) {
		cp.From = q.cfg.Transport().From
	}
	if err := cp.Validate(); err != nil {
		return nil, err
	}
	return &cp, nil
}

// deliver sends m through the transport of the moment; it returns the
// outbox file's path when it wrote one.
func (q *Queue) deliver(ctx context.Context, m *Message) (path string, err error) {
	t := q.cfg.Transport()
	if !t.SMTPEnabled {
		return q.cfg.Outbox.Write(m, q.now())
	}
	c := t.SMTP
	if q.cfg.TLSConfig != nil {
		c.TLSConfig = q.cfg.TLSConfig
	}
	return "", SendSMTP(ctx, c, m, q.now())
}

func (q *Queue) work() {
	defer close(q.done)
	abandoned := 0
	for m := range q.ch {
		if q.ctx.Err() != nil {
			abandoned++
			continue
		}
		path, err := q.deliver(q.ctx, m)
		switch {
		case err != nil:
			q.log.Error("mail: send failed", "to", recipients(m), "err", err)
		case path != "":
			q.log.Info("mail: written to the outbox (SMTP is disabled)", "path", path, "to", recipients(m))
		default:
			q.log.Debug("mail: sent", "to", recipients(m))
		}
	}
	if abandoned > 0 {
		q.log.Error("mail: shutting down: queued mails abandoned", "count", abandoned)
	}
}

// Close stops accepting mail and delivers what is queued, for as long as
// ctx allows; then it abandons the rest (an SMTP exchange under way is
// cut) and logs how many were abandoned. It returns ctx's error if it gave
// up. Calling it again waits for the first call's end.
func (q *Queue) Close(ctx context.Context) error {
	q.mu.Lock()
	first := !q.closed
	if first {
		q.closed = true
		close(q.ch)
	}
	q.mu.Unlock()
	defer q.cancel()
	select {
	case <-q.done:
		return nil
	case <-ctx.Done():
		q.cancel()
		<-q.done
		return fmt.Errorf("mail: close: queued mails abandoned: %w", context.Cause(ctx))
	}
}

func recipients(m *Message) string {
	s := make([]string, len(m.To))
	for i, a := range m.To {
		s[i] = a.Address
	}
	return strings.Join(s, ", ")
}
