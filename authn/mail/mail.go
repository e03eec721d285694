package mail

import (
	"context"
	"net/mail"
)

// Message is one outgoing mail.
//
// From may be left zero: the server's Sender then fills it from the
// settings' meta.senderName and meta.senderAddress. To holds one or more
// recipients. No address or subject may hold CR or LF (a Sender refuses
// the message: header injection is impossible).
type Message struct {
	From    mail.Address
	To      []mail.Address
	Subject string
	// HTML is the body. Text, if empty, is derived from it when sent.
	HTML string
	Text string
}

// Sender sends messages. A Sender may queue a message and send it later;
// it reports a failure it cannot see at once in the server's log, never to
// the API client (whose answer must not tell whether an address exists).
type Sender interface {
	Send(ctx context.Context, m *Message) error
}

// SyncSender is a Sender that can also deliver a message at once and
// report the outcome (the test-email route does, to show an SMTP error,
// or, with SMTP off, the outbox file that holds the mail instead).
type SyncSender interface {
	Sender
	// SendNow delivers m at once. outbox is the name of the file (in the
	// outbox folder, no directory) it wrote the mail to when SMTP is
	// disabled, "" when it handed the mail to SMTP.
	SendNow(ctx context.Context, m *Message) (outbox string, err error)
}
