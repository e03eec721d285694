package app

import (
	"context"
	"net/mail"
	"path/filepath"
	"time"

	strongmail "strongbox/authn/mail"
	"strongbox/httpapi/settings"
)

// DefaultMailDrain bounds how long a graceful stop waits for the mails
// still queued: past it, they are abandoned (and the count logged).
const DefaultMailDrain = 10 * time.Second

// MailDir is the outbox folder, in the data dir, that holds the mails sent
// while SMTP is disabled.
const MailDir = "mail"

// startMail starts the server's mail queue. It lives as long as the
// process serves, across restarts: the stores it reads its transport
// from come and go, and a mail queued during a restart goes out with the
// settings last seen. The caller holds life.
func (s *Server) startMail() {
	s.mailTransport.Store(&strongmail.Transport{})
	s.mail = strongmail.NewQueue(strongmail.QueueConfig{
		Transport: func() strongmail.Transport { return *s.mailTransport.Load() },
		Outbox:    &strongmail.Outbox{Dir: filepath.Join(s.cfg.Dir, MailDir)},
		Logger:    s.log,
		TLSConfig: s.cfg.MailTLSConfig,
	})
}

// followMail is the mail queue's subscriber to the settings: smtp and the
// sender of meta make the transport of the next mail.
func (s *Server) followMail(v settings.Settings) {
	s.mailTransport.Store(&strongmail.Transport{
		SMTPEnabled: v.SMTP.Enabled,
		SMTP: strongmail.SMTPConfig{
			Host: v.SMTP.Host, Port: v.SMTP.Port,
			Username: v.SMTP.Username, Password: v.SMTP.Password, AuthMethod: v.SMTP.AuthMethod,
			TLS: v.SMTP.TLS, LocalName: v.SMTP.LocalName,
		},
		From: mail.Address{Name: v.Meta.SenderName, Address: v.Meta.SenderAddress},
	})
}

// stopMail delivers the queued mails for at most Config.MailDrain.
func (s *Server) stopMail() error {
	if s.mail == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.MailDrain)
	defer cancel()
	return s.mail.Close(ctx)
}
