package api

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	netmail "net/mail"
	"strings"

	"strongbox/authn"
	"strongbox/authn/mail"
)

// The mails the API sends (the account flows', the OTP's, the login
// alert, the settings' test mail) are rendered here from the collection's
// or the settings' templates, and handed to the mail sender.

// renderMail renders template t of collection c for record r, to address
// to, with the placeholders of mail.Render: {APP_NAME}, {APP_URL}, the
// record's fields as its owner sees them ({RECORD:field}, HTML-escaped in
// the body), and extra (such as {TOKEN}, {OTP}). The subject is one
// header line: line breaks in values become spaces.
func (s *Server) renderMail(c *authn.Collection, r *authn.Record, t authn.Template, to string, extra map[string]string) *mail.Message {
	vars := make(map[string]string, len(extra)+8)
	for k, v := range r.Public(c, true, false) {
		vars[mail.VarRecordPrefix+k] = fmtValue(v)
	}
	maps.Copy(vars, extra)
	return s.mailFromTemplate(t, to, vars)
}

// mailFromTemplate renders t for the address to with vars, plus
// {APP_NAME} and {APP_URL} from the settings, from the settings' sender.
// The subject is one header line: line breaks in values become spaces.
func (s *Server) mailFromTemplate(t authn.Template, to string, vars map[string]string) *mail.Message {
	meta := s.settings.Get().Meta
	all := map[string]string{mail.VarAppName: meta.AppName, mail.VarAppURL: meta.AppURL}
	maps.Copy(all, vars)
	oneLine := strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ")
	subjectVars := make(map[string]string, len(all))
	for k, v := range all {
		subjectVars[k] = oneLine.Replace(v)
	}
	return &mail.Message{
		From:    netmail.Address{Name: meta.SenderName, Address: meta.SenderAddress},
		To:      []netmail.Address{{Address: to}},
		Subject: oneLine.Replace(mail.Render(t.Subject, subjectVars, false)),
		HTML:    mail.Render(t.Body, all, true),
	}
}

// renderFlowMail renders an account flow's mail, with its token.
func (s *Server) renderFlowMail(c *authn.Collection, r *authn.Record, t authn.Template, token, to string) *mail.Message {
	return s.renderMail(c, r, t, to, map[string]string{mail.VarToken: token})
}

// fmtValue is a record value as a template shows it.
func fmtValue(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case authn.Time:
		return v.String()
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = fmtValue(x)
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(v)
}

// sendFlowMail hands m to the mail sender. The sender queues it (a slow
// or failing transport is its to log, never the client's to see); with no
// sender the mail is dropped with a warning. Neither the token nor the
// address is logged.
func (s *Server) sendFlowMail(r *http.Request, kind string, c *authn.Collection, rec *authn.Record, m *mail.Message) error {
	if s.mail == nil {
		s.log.Warn("mail dropped: no mail transport configured", "mail", kind, "collection", c.Name, "record", rec.ID)
		return nil
	}
	err := s.mail.Send(context.WithoutCancel(r.Context()), m)
	if err != nil {
		s.log.Error("failed to send "+kind+" email", "collection", c.Name, "record", rec.ID, "err", err)
	}
	return err
}
