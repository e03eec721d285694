package api

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"strongbox/authn"
	strongmail "strongbox/authn/mail"
	"strongbox/authn/validation"
)

// The templates POST /api/settings/test/email can send (PocketBase's
// forms/test_email_send.go).
var testEmailTemplates = []string{"verification", "password-reset", "email-change", "otp", "login-alert"}

const msgTestEmailFailed = "Failed to send the test email."

// outboxHeader names, on the 204 of a test email that SMTP did not take
// (smtp.enabled off), the file of the outbox (<data dir>/mail/) the mail
// was written to instead: its name only, never a path on the server. A
// PocketBase client sees the 204 it expects; the dashboard tells "not
// sent, in the outbox: mail/<name>" from "sent".
const outboxHeader = "Strongbox-Outbox-File"

// handleSettingsTestEmail handles POST /api/settings/test/email
// (superusers): body {"email", "template", "collection"} (collection
// optional, _superusers by default). It renders the collection's template
// for a made-up record whose visible fields hold "__pb_test_<field>__"
// and whose email is the one given (the OTP mail carries the code 123456,
// the links a token that is not valid), and sends it at once through the
// configured transport (SMTP, or the outbox while SMTP is disabled),
// waiting for the outcome: 204 once the server accepted the mail, or
// once it is in the outbox (then with the file's name in the header
// Strongbox-Outbox-File); 400 "Failed to send the test email." with the field
// errors for a bad body; 400 "Failed to send the test email: <reason>."
// when the transport failed, the reason being the SMTP step and the
// server's reply (never the password). PocketBase answers the last case
// without the reason.
func (s *Server) handleSettingsTestEmail(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	b, err := bind(r)
	if err != nil {
		return err
	}
	vals, err := b.strs("email", "template", "collection")
	if err != nil {
		return err
	}
	email, tpl, col := vals[0], vals[1], vals[2]
	data := validation.Errors{}
	var c *authn.Collection
	switch {
	case col == "":
		c = s.auth.Superusers()
	case len(col) > 255:
		data["collection"] = validation.LengthOutOfRange(1, 255)
	default:
		if found, ok := s.auth.Collection(col); ok && found.IsAuth() {
			c = found
		} else {
			data["collection"] = validation.New(validation.CodeInvalidAuthCollection, "Must be a valid auth collection id or name.")
		}
	}
	if ferr := checkEmailInput(email); ferr != nil {
		data["email"] = ferr
	}
	switch {
	case tpl == "":
		data["template"] = validation.Required()
	case !slices.Contains(testEmailTemplates, tpl):
		data["template"] = validation.InInvalid(nil)
	}
	if len(data) > 0 {
		return errValidation(msgTestEmailFailed, data)
	}

	o := c.AuthOptions
	var t authn.Template
	switch tpl {
	case "verification":
		t = o.VerificationTemplate
	case "password-reset":
		t = o.ResetPasswordTemplate
	case "email-change":
		t = o.ConfirmEmailChangeTemplate
	case "otp":
		t = o.OTP.EmailTemplate
	case "login-alert":
		t = o.AuthAlert.EmailTemplate
	}
	vars := map[string]string{
		strongmail.VarToken: "__pb_test_token__",
		strongmail.VarOTP:   "123456",
		strongmail.VarOTPID: "_PB_TEST_OTP_ID_",
	}
	for _, f := range c.Fields {
		if !f.Hidden {
			vars[strongmail.VarRecordPrefix+f.Name] = "__pb_test_" + f.Name + "__"
		}
	}
	vars[strongmail.VarRecordPrefix+"email"] = email
	m := s.mailFromTemplate(t, email, vars)
	outbox, err := s.sendNow(r, m)
	if err != nil {
		s.log.Warn("mail: test email failed", auditAttrs(r, "template", tpl, "err", err)...)
		return errBadRequest("Failed to send the test email: "+err.Error()+".", err)
	}
	if outbox != "" {
		w.Header().Set(outboxHeader, outbox)
	}
	return noContent(w)
}

// testEmailTimeout bounds the whole SMTP exchange of a test email (each
// step has its own 10 s), within the route's 30 s response deadline.
const testEmailTimeout = 25 * time.Second

// sendNow sends m at once when the Sender can (a mail.SyncSender), else
// queues it; outbox is the outbox file's name when SMTP is off (see
// mail.SyncSender).
func (s *Server) sendNow(r *http.Request, m *strongmail.Message) (outbox string, err error) {
	ctx, cancel := context.WithTimeout(r.Context(), testEmailTimeout)
	defer cancel()
	switch snd := s.mail.(type) {
	case nil:
		return "", errors.New("mail: no mail transport is configured")
	case strongmail.SyncSender:
		return snd.SendNow(ctx, m)
	default:
		return "", snd.Send(ctx, m)
	}
}
