package httpapi

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	netmail "net/mail"
	"strings"
	"sync"
	"time"

	"strongbox/authn"
	"strongbox/authn/mail"
	"strongbox/authn/validation"
)

// The account flows: email verification, password reset and email change
// (as PocketBase v0.31.0 has them; the interface document is silent on
// them). Each is a request, which mails a token, and a confirm,
// which takes it back. Every answer that could tell whether an email
// address has an account is the same 204, after the same work: the token
// is signed and the mail rendered whether or not it is then sent.

// Messages of the account flows, PocketBase v0.31.0's.
const (
	msgSuperusersVerified    = "All superusers are verified by default."
	msgSuperusersEmail       = "All superusers can change their emails directly."
	msgVerifySaveFailed      = "An error occurred while saving the verified state."
	msgVerifyTokenStale      = "Invalid or expired verification token."
	msgResetTokenStale       = "Invalid or expired password reset token."
	msgResetFailed           = "Failed to set new password."
	msgEmailChangeFailed     = "Failed to confirm email change."
	msgEmailChangeRequestErr = "Failed to request email change."
)

// resendWindow is how long after a verification or password-reset mail to
// a record another request sends none (PocketBase's in-memory throttle).
const resendWindow = 2 * time.Minute

// resendGuard remembers, in memory, which records were recently sent a
// verification or password-reset mail. Entries expire after resendWindow
// and are pruned as new ones are added, so it holds at most about twice
// the records mailed in the last two minutes.
type resendGuard struct {
	mu      sync.Mutex
	sent    map[string]time.Time // kind + " " + collection id + " " + record id → when
	pruneAt int                  // prune expired entries when sent reaches this size
}

func resendKey(kind string, c *authn.Collection, r *authn.Record) string {
	return kind + " " + c.ID + " " + r.ID
}

// recent reports whether key was marked less than resendWindow before now.
func (g *resendGuard) recent(key string, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	t, ok := g.sent[key]
	return ok && now.Sub(t) < resendWindow && !now.Before(t)
}

// mark records that key was mailed at now.
func (g *resendGuard) mark(key string, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.sent == nil {
		g.sent = map[string]time.Time{}
	}
	if len(g.sent) >= g.pruneAt {
		// Pruned when the map has doubled since the last pruning, so
		// that each mark costs O(1) amortised however many records are
		// mailed.
		for k, t := range g.sent {
			if now.Sub(t) >= resendWindow || now.Before(t) {
				delete(g.sent, k)
			}
		}
		g.pruneAt = max(64, 2*len(g.sent))
	}
	g.sent[key] = now
}

// forget removes key (a verified record needs no more reminders).
func (g *resendGuard) forget(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.sent, key)
}

// placeholderRecord stands in for the record of an unknown email, so that
// a request for it signs a token and renders a mail just as for a known
// one (and then sends nothing).
func placeholderRecord(c *authn.Collection, email string) *authn.Record {
	return &authn.Record{ID: "000000000000000", CollectionID: c.ID, Email: email,
		TokenKey: "00000000000000000000000000000000000000000000000000"}
}

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

// checkEmailInput validates a required email of at most 255 bytes, as
// PocketBase's request forms do (required, length 1..255, email format; the
// first failing rule only).
func checkEmailInput(v string) *validation.Error {
	switch {
	case v == "":
		return validation.Required()
	case len(v) > 255:
		return validation.LengthOutOfRange(1, 255)
	case !authn.ValidEmail(v):
		return validation.IsEmail()
	}
	return nil
}

// emailField returns the key field of body b, validated as an email.
func emailField(b *body, key string) (string, error) {
	v, err := b.str(key)
	if err != nil {
		return "", err
	}
	if ferr := checkEmailInput(v); ferr != nil {
		return "", errValidation(msgValidationFailed, validation.Errors{key: ferr})
	}
	return v, nil
}

// flowRequest is the start of request-verification and
// request-password-reset: the collection (refused as closed says) and the
// record of the body's email, or, for an email no record has (found
// false), a placeholder that gets the same work (a token signed, a mail
// rendered) and no mail. The client's mail limit is counted for both, so
// its 429 tells nothing about the email.
func (s *Server) flowRequest(r *http.Request, closed closedWhen) (c *authn.Collection, rec *authn.Record, found bool, err error) {
	c, b, err := s.authBody(r, closed)
	if err != nil {
		return nil, nil, false, err
	}
	email, err := emailField(b, "email")
	if err != nil {
		return nil, nil, false, err
	}
	if err := s.allowMailClient(r); err != nil {
		return nil, nil, false, err
	}
	if rec, found = s.auth.FindByEmail(c, email); !found {
		rec = placeholderRecord(c, email)
	}
	return c, rec, found, nil
}

// quietMailTarget counts a mail to rec's email against the per-target
// limit and reports whether it may be sent; over the limit the mail is not
// sent (and logged), and the request still gets its 204: a 429 here,
// counted only for existing records, would tell which emails have one.
func (s *Server) quietMailTarget(kind string, c *authn.Collection, rec *authn.Record) bool {
	if s.allowMailTarget(rec.Email) {
		return true
	}
	s.log.Warn("mail not sent: its address is over the mail limit", "mail", kind, "collection", c.Name, "record", rec.ID)
	return false
}

// handleRequestVerification handles POST /api/collections/{collection}/request-verification.
// An unknown email, a record already verified and a record mailed in the
// last two minutes all get the 204 of a sent mail, and no mail.
func (s *Server) handleRequestVerification(w http.ResponseWriter, r *http.Request) error {
	c, target, found, err := s.flowRequest(r, superusersVerified)
	if err != nil {
		return err
	}
	now := s.now()
	send := found && !target.Verified && !s.flows.recent(resendKey("verification", c, target), now) &&
		s.quietMailTarget("verification", c, target)
	token, err := s.auth.NewVerificationToken(c, target)
	if err != nil {
		return err
	}
	m := s.renderFlowMail(c, target, c.VerificationTemplate, token, target.Email)
	if send {
		s.sendFlowMail(r, "verification", c, target, m)
		// Marked after the attempt, even a failed one, as PocketBase does.
		s.flows.mark(resendKey("verification", c, target), now)
	}
	return noContent(w)
}

// handleConfirmVerification handles POST /api/collections/{collection}/confirm-verification.
func (s *Server) handleConfirmVerification(w http.ResponseWriter, r *http.Request) error {
	c, b, err := s.authBody(r, superusersVerified)
	if err != nil {
		return err
	}
	token, err := b.str("token")
	if err != nil {
		return err
	}
	rec, _, ferr := s.checkFlowToken(c, token, authn.TokenVerification)
	if ferr != nil {
		return errValidation(msgValidationFailed, validation.Errors{"token": ferr})
	}
	n, err := s.auth.ConfirmVerification(c, rec)
	switch {
	case errors.Is(err, authn.ErrTokenStale), errors.Is(err, authn.ErrNotFound):
		return errBadRequest(msgVerifyTokenStale, err)
	case isStorageError(err):
		return err
	case err != nil:
		return errBadRequest(msgVerifySaveFailed, err)
	}
	s.flows.forget(resendKey("verification", c, n))
	return noContent(w)
}

// checkFlowToken checks a verification or password-reset token for
// collection c in PocketBase's order, and returns the record it names
// as it was verified, and the token's claims. The failures are the
// validation errors of "token".
func (s *Server) checkFlowToken(c *authn.Collection, token string, typ authn.TokenType) (*authn.Record, *authn.Claims, *validation.Error) {
	if token == "" {
		return nil, nil, validation.Required()
	}
	var email string
	if typ == authn.TokenVerification {
		// PocketBase reads the claim before anything else, so a token
		// that does not even parse lacks it too.
		if p, err := authn.ParseUnverified(token); err == nil {
			email = p.Claims.Email
		}
		if email == "" {
			return nil, nil, validation.TokenMissingEmail()
		}
	}
	tc, rec, claims, err := s.auth.VerifyToken(token, typ)
	if err != nil {
		return nil, nil, validation.InvalidToken()
	}
	if tc.ID != c.ID {
		return nil, nil, validation.TokenCollectionMismatch()
	}
	if typ == authn.TokenVerification && rec.Email != email {
		return nil, nil, validation.TokenEmailMismatch()
	}
	return rec, claims, nil
}

// isStorageError reports whether err is the store refusing a write (a full
// or failing disk), which keeps its own status (asError).
func isStorageError(err error) bool {
	e := asError(err)
	return e.Status == http.StatusInsufficientStorage || e.Status == http.StatusServiceUnavailable || e.Status == http.StatusTooManyRequests
}

// handleRequestPasswordReset handles POST /api/collections/{collection}/request-password-reset.
// An unknown email and a record mailed successfully in the last two
// minutes get the 204 of a sent mail, and no mail.
func (s *Server) handleRequestPasswordReset(w http.ResponseWriter, r *http.Request) error {
	c, target, found, err := s.flowRequest(r, resetPasswordOff)
	if err != nil {
		return err
	}
	now := s.now()
	send := found && !s.flows.recent(resendKey("passwordReset", c, target), now) &&
		s.quietMailTarget("password reset", c, target)
	token, err := s.auth.NewPasswordResetToken(c, target)
	if err != nil {
		return err
	}
	m := s.renderFlowMail(c, target, c.ResetPasswordTemplate, token, target.Email)
	if send {
		// Marked only after a send the transport accepted, as
		// PocketBase does.
		if s.sendFlowMail(r, "password reset", c, target, m) == nil {
			s.flows.mark(resendKey("passwordReset", c, target), now)
		}
	}
	return noContent(w)
}

// handleConfirmPasswordReset handles POST /api/collections/{collection}/confirm-password-reset.
// It is not gated on password auth being enabled, as in PocketBase.
func (s *Server) handleConfirmPasswordReset(w http.ResponseWriter, r *http.Request) error {
	c, b, err := s.authBody(r, closedWhen{})
	if err != nil {
		// An unsupported body (never the collection's 404) is wrapped
		// here, as PocketBase does.
		if e, ok := errors.AsType[*Error](err); ok && e.Message == msgUnsupportedType {
			return errBadRequest(msgLoadFailed, e)
		}
		return err
	}
	vals, err := b.strs("token", "password", "passwordConfirm")
	if err != nil {
		return err
	}
	token, password, confirm := vals[0], vals[1], vals[2]
	data := validation.Errors{}
	rec, claims, ferr := s.checkFlowToken(c, token, authn.TokenPasswordReset)
	if ferr != nil {
		data["token"] = ferr
	}
	if min := authn.PasswordMin(c); password == "" {
		data["password"] = validation.Required()
	} else if len(password) < min || len(password) > 255 {
		data["password"] = validation.LengthOutOfRange(min, 255)
	}
	switch {
	case confirm == "":
		data["passwordConfirm"] = validation.Required()
	case confirm != password:
		data["passwordConfirm"] = validation.ValuesMismatch()
	}
	if len(data) > 0 {
		return errValidation(msgValidationFailed, data)
	}
	_, err = s.auth.ResetPassword(r.Context(), c, rec, claims, password)
	switch {
	case errors.Is(err, authn.ErrTokenStale), errors.Is(err, authn.ErrNotFound):
		return errBadRequest(msgResetTokenStale, err)
	case validationData(err) != nil:
		return errValidation(msgResetFailed, validationData(err))
	case err != nil:
		return err
	}
	return noContent(w)
}

// handleRequestEmailChange handles POST /api/collections/{collection}/request-email-change.
// It needs the auth token of a record of the collection, and mails the
// confirmation to the new address.
func (s *Server) handleRequestEmailChange(w http.ResponseWriter, r *http.Request) error {
	c, st, err := s.ownAuthCollection(r)
	if err != nil {
		return err
	}
	if c.IsSuperusers() {
		return errBadRequest(msgSuperusersEmail, nil)
	}
	b, err := bind(r)
	if err != nil {
		return err
	}
	newEmail, err := b.str("newEmail")
	if err != nil {
		return err
	}
	ferr := checkEmailInput(newEmail)
	if ferr == nil && newEmail == st.rec.Email {
		ferr = validation.NotInInvalid()
	}
	if ferr == nil {
		if other, taken := s.auth.FindByEmail(c, newEmail); taken && other.ID != st.rec.ID {
			ferr = validation.InvalidNewEmail()
		}
	}
	if ferr != nil {
		return errValidation(msgValidationFailed, validation.Errors{"newEmail": ferr})
	}
	// The caller is signed in, and the answer above already tells a taken
	// address: the limits may answer 429.
	if err := s.allowMailClient(r); err != nil {
		return err
	}
	if !s.allowMailTarget(newEmail) {
		return s.errMailTarget()
	}
	token, err := s.auth.NewEmailChangeToken(c, st.rec, newEmail)
	if err != nil {
		return err
	}
	m := s.renderFlowMail(c, st.rec, c.ConfirmEmailChangeTemplate, token, newEmail)
	// PocketBase sends this one before it answers, and reports a
	// failure: the caller already proved who they are.
	if err := s.sendFlowMail(r, "email change", c, st.rec, m); err != nil {
		return errBadRequest(msgEmailChangeRequestErr, err)
	}
	return noContent(w)
}

// handleConfirmEmailChange handles POST /api/collections/{collection}/confirm-email-change.
// No auth header is needed: the token and the record's password are the
// proof.
func (s *Server) handleConfirmEmailChange(w http.ResponseWriter, r *http.Request) error {
	c, b, err := s.authBody(r, superusersEmail)
	if err != nil {
		return err
	}
	vals, err := b.strs("token", "password")
	if err != nil {
		return err
	}
	token, password := vals[0], vals[1]
	data := validation.Errors{}
	rec, newEmail, ferr := s.checkEmailChangeToken(c, token)
	if ferr != nil {
		data["token"] = ferr
	}
	switch {
	case password == "":
		data["password"] = validation.Required()
	case len(password) > 100:
		data["password"] = validation.LengthOutOfRange(1, 100)
	default:
		// The password is checked, with the same bcrypt work, whether or
		// not the token named a record.
		var owner *authn.Record
		if ferr == nil {
			owner = rec
		}
		ok, err := s.auth.CheckPassword(r.Context(), owner, password)
		if err != nil {
			return err
		}
		if !ok {
			data["password"] = validation.InvalidPassword()
		}
	}
	if len(data) > 0 {
		return errValidation(msgValidationFailed, data)
	}
	_, err = s.auth.ChangeEmail(c, rec, newEmail)
	switch {
	case err == nil:
	case isStorageError(err):
		return err
	case errors.Is(err, authn.ErrEmailTaken):
		return errValidation(msgValidationFailed, validation.Errors{"token": validation.ExistingTokenEmail(newEmail)})
	default:
		return errBadRequest(msgEmailChangeFailed, err)
	}
	return noContent(w)
}

// checkEmailChangeToken checks an email-change token for collection c in
// PocketBase's order and returns the record it names, as verified, and
// the new email.
func (s *Server) checkEmailChangeToken(c *authn.Collection, token string) (*authn.Record, string, *validation.Error) {
	if token == "" {
		return nil, "", validation.Required()
	}
	var newEmail string
	if p, err := authn.ParseUnverified(token); err == nil {
		newEmail = p.Claims.NewEmail
	}
	if newEmail == "" {
		return nil, "", validation.TokenMissingNewEmail()
	}
	if _, taken := s.auth.FindByEmail(c, newEmail); taken {
		return nil, "", validation.ExistingTokenEmail(newEmail)
	}
	tc, rec, claims, err := s.auth.VerifyToken(token, authn.TokenEmailChange)
	if err != nil {
		return nil, "", validation.InvalidToken()
	}
	if tc.ID != c.ID {
		return nil, "", validation.TokenCollectionMismatch()
	}
	return rec, claims.NewEmail, nil
}
