package conformance

import (
	"context"
	"time"

	"strongbox/conformance/smtpsink"
)

// The SMTP sink: the mailbox of the checks that read mail (mail.go), a
// listener of the suite's own on 127.0.0.1 and port 0 unless
// Config.SMTPHost names another address. It is package smtpsink, shared
// with the mail tests of the other packages; these names keep the checks'
// own. It offers no STARTTLS, so a client that upgrades whenever it can
// sends in clear, and it accepts any AUTH credentials without looking at
// them.

// sinkMail is one message the sink accepted.
type sinkMail = smtpsink.Mail

// smtpSink is a running sink. Close stops it.
type smtpSink struct {
	*smtpsink.Sink
	await time.Duration // how long awaitMail waits for a mail (Config.WaitTimeout)
}

// startSMTPSink listens on host (an IP address; "" means every
// interface) at a free port and serves until Close; awaitMail waits await
// for a mail to it.
func startSMTPSink(host string, await time.Duration) (*smtpSink, error) {
	if host == "" {
		host = "*"
	}
	s, err := smtpsink.New(smtpsink.Options{Host: host})
	if err != nil {
		return nil, err
	}
	return &smtpSink{s, await}, nil
}

// port is the port the sink listens on.
func (s *smtpSink) port() int { return s.Port }

// wait returns the first mail addressed to rcpt (case-insensitively) that
// no earlier wait returned, waiting at most d. It returns nil when none
// came in time or ctx ended.
func (s *smtpSink) wait(ctx context.Context, rcpt string, d time.Duration) *sinkMail {
	return s.Wait(ctx, rcpt, d)
}

// Close stops listening, ends the sessions in progress and waits for them.
func (s *smtpSink) Close() error {
	s.Sink.Close()
	return nil
}
