package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// DefaultQueueSize is how many mails may wait for the worker of a Queue;
// past it, a mail is dropped (and logged): the newest of the recipient
// with the longest backlog.
const DefaultQueueSize = 256

// DefaultPerRecipient is how many mails to one recipient may wait in a
// Queue; past it, a new mail to that recipient is dropped (and logged).
// A real user asks for a mail or two at a time; a flood aimed at one
// address (or at a few) so stays in its own lane.
const DefaultPerRecipient = 8

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
	// PerRecipient bounds the mails waiting for one recipient (the
	// lower-cased addresses of To); 0 = DefaultPerRecipient, and never
	// more than Size.
	PerRecipient int
	// Now is the clock of the Date header and the outbox names; nil =
	// time.Now.
	Now func() time.Time
	// TLSConfig, if set, replaces the TLS configuration of every SMTP
	// exchange (tests trust their own certificate with it).
	TLSConfig *tls.Config
}

// Queue is the server's Sender. Send only checks and enqueues a mail; one
// worker delivers them through the transport of the moment. So an API
// answer never waits for SMTP, and its timing tells nothing of whether a
// mail was sent. A failed delivery is logged at error level with its
// reason; the API client never learns of it.
//
// The queue is fair per recipient: each recipient's mails wait in their
// own lane, in order, and the worker takes one mail from each lane in
// turn. A lane holds at most PerRecipient mails, and when the queue is
// full the mail dropped is the newest of the longest lane, so a flood of
// mails to some addresses delays and drops only their own mails, never
// another person's.
type Queue struct {
	cfg    QueueConfig
	log    *slog.Logger
	now    func() time.Time
	size   int             // capacity
	perRcp int             // capacity of one lane
	ctx    context.Context // ends deliveries when Close gives up
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	ready  *sync.Cond // signalled on a new mail and on Close
	lanes  map[string][]*Message
	order  []string // the lanes' keys, in the worker's turn
	n      int      // mails waiting
	closed bool

	// Totals since NewQueue (Stats), guarded by mu.
	sent, failed, dropped uint64
}

// QueueStats are a Queue's depth and totals, for the server's metrics.
type QueueStats struct {
	Queued, Capacity int // mails waiting, and how many may
	// Sent is the mails delivered (or written to the outbox), Failed those
	// whose delivery failed, Dropped those refused or dropped for a full
	// queue or lane (ErrQueueFull) or abandoned at Close.
	Sent, Failed, Dropped uint64
}

// Stats returns the queue's depth and totals now.
func (q *Queue) Stats() QueueStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	return QueueStats{Queued: q.n, Capacity: q.size, Sent: q.sent, Failed: q.failed, Dropped: q.dropped}
}

// count adds to one of the totals.
func (q *Queue) count(total *uint64) {
	q.mu.Lock()
	*total++
	q.mu.Unlock()
}

var _ SyncSender = (*Queue)(nil)

// NewQueue starts a Queue's worker; Close stops it.
func NewQueue(cfg QueueConfig) *Queue {
	size := cfg.Size
	if size <= 0 {
		size = DefaultQueueSize
	}
	per := cfg.PerRecipient
	if per <= 0 {
		per = DefaultPerRecipient
	}
	q := &Queue{cfg: cfg, log: cfg.Logger, now: cfg.Now, size: size, perRcp: min(per, size),
		lanes: map[string][]*Message{}, done: make(chan struct{})}
	q.ready = sync.NewCond(&q.mu)
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
// sent, ErrQueueFull (already logged) when the mail is dropped (its
// recipient's lane is full, or the queue is full and no other lane is
// longer), and ErrClosed once Close has begun. When the queue is full and
// another lane is longer, that lane's newest mail is dropped (and logged)
// instead.
func (q *Queue) Send(ctx context.Context, m *Message) error {
	cp, err := q.prepare(m)
	if err != nil {
		return err
	}
	k := strings.ToLower(recipients(cp))
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrClosed
	}
	if q.n >= q.size {
		long := q.longest()
		if len(q.lanes[long]) <= len(q.lanes[k])+1 {
			q.log.Error("mail: queue full: mail dropped", "to", recipients(cp), "queueSize", q.size)
			q.dropped++
			return ErrQueueFull
		}
		lane := q.lanes[long]
		q.log.Error("mail: queue full: newest mail of the longest backlog dropped", "to", recipients(lane[len(lane)-1]), "queueSize", q.size)
		q.lanes[long] = lane[:len(lane)-1]
		q.n--
		q.dropped++
	}
	if len(q.lanes[k]) >= q.perRcp {
		q.log.Error("mail: recipient's backlog full: mail dropped", "to", recipients(cp), "perRecipient", q.perRcp)
		q.dropped++
		return ErrQueueFull
	}
	if len(q.lanes[k]) == 0 {
		q.order = append(q.order, k)
	}
	q.lanes[k] = append(q.lanes[k], cp)
	q.n++
	q.ready.Signal()
	return nil
}

// longest returns the key of the longest lane (the first in turn among
// equals). The caller holds mu; there are at most size lanes.
func (q *Queue) longest() string {
	best := ""
	for _, k := range q.order {
		if len(q.lanes[k]) > len(q.lanes[best]) {
			best = k
		}
	}
	return best
}

// next waits for a mail and takes it from the lane whose turn it is; it
// returns nil once the queue is closed and empty.
func (q *Queue) next() *Message {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.n == 0 && !q.closed {
		q.ready.Wait()
	}
	if q.n == 0 {
		return nil
	}
	k := q.order[0]
	q.order = q.order[1:]
	lane := q.lanes[k]
	m := lane[0]
	lane[0] = nil
	if lane = lane[1:]; len(lane) > 0 {
		q.lanes[k] = lane
		q.order = append(q.order, k)
	} else {
		delete(q.lanes, k)
	}
	q.n--
	return m
}

// SendNow delivers m at once, on the caller's goroutine, through the
// current transport, and returns the delivery's error (an *SMTPError for
// a failed SMTP exchange) and, with SMTP disabled, the name of the outbox
// file it wrote (its base name: the folder is the server's to tell): for
// the test-email route, whose caller wants to know. It does not log.
func (q *Queue) SendNow(ctx context.Context, m *Message) (outbox string, err error) {
	cp, err := q.prepare(m)
	if err != nil {
		return "", err
	}
	path, err := q.deliver(ctx, cp)
	if err != nil || path == "" {
		return "", err
	}
	return filepath.Base(path), nil
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
	for m := q.next(); m != nil; m = q.next() {
		if q.ctx.Err() != nil {
			abandoned++
			q.count(&q.dropped)
			continue
		}
		path, err := q.deliver(q.ctx, m)
		if err != nil {
			q.count(&q.failed)
		} else {
			q.count(&q.sent)
		}
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
		q.ready.Broadcast()
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
