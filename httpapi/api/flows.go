package api

import (
	"errors"
	"net/http"

	"strongbox/authn"
	"strongbox/authn/validation"
)

// The routes of the account flows: email verification, password reset and
// email change, as PocketBase v0.31.0 has them (the interface document is
// silent on them). Each is a request, which mails a token, and a confirm,
// which takes it back. The flows themselves, their checks and their
// policy, are authn's (authn/flows.go says where each lives and where new
// ones go); these handlers decode the body, apply the mail limits, render
// and send the mails and turn the flows' errors into answers. Every
// answer that could tell whether an email address has an account is the
// same 204, after the same work: the token is signed and the mail rendered
// whether or not it is then sent.

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
// body's email. The client's mail limit is counted here, before the flow
// looks the email up, so its 429 tells nothing about the email.
func (s *Server) flowRequest(r *http.Request, closed closedWhen) (*authn.Collection, string, error) {
	c, b, err := s.authBody(r, closed)
	if err != nil {
		return nil, "", err
	}
	email, err := emailField(b, "email")
	if err != nil {
		return nil, "", err
	}
	if err := s.allowMailClient(r); err != nil {
		return nil, "", err
	}
	return c, email, nil
}

// mailQuietly renders the mail m of a request flow from template t,
// whether or not it is then sent, and sends it when the flow says so and
// its address is within the per-target mail limit, telling the flow how
// the attempt went. Over the limit the mail is not sent (and logged), and
// the request still gets its 204: a 429 here, counted only for existing
// records, would tell which emails have one.
func (s *Server) mailQuietly(r *http.Request, kind string, c *authn.Collection, t authn.Template, m *authn.TokenMail) {
	msg := s.renderFlowMail(c, m.Record, t, m.Token, m.To)
	if !m.Send {
		return
	}
	if !s.allowMailTarget(m.To) {
		s.log.Warn("mail not sent: its address is over the mail limit", "mail", kind, "collection", c.Name, "record", m.Record.ID)
		return
	}
	m.Sent(s.sendFlowMail(r, kind, c, m.Record, msg))
}

// flowInputError is the 400 of a flow's input that failed its checks
// (authn.ErrInvalidInput), with the failures under data; nil for any other
// error.
func flowInputError(err error) error {
	if !errors.Is(err, authn.ErrInvalidInput) {
		return nil
	}
	return errValidation(msgValidationFailed, validationData(err))
}

// isStorageError reports whether err is the store refusing a write (a full
// or failing disk) or the hasher too busy to check a password, which keep
// their own status (asError).
func isStorageError(err error) bool {
	e := asError(err)
	return e.Status == http.StatusInsufficientStorage || e.Status == http.StatusServiceUnavailable || e.Status == http.StatusTooManyRequests
}

// handleRequestVerification handles POST /api/collections/{collection}/request-verification.
// An unknown email, a record already verified and a record mailed in the
// last two minutes all get the 204 of a sent mail, and no mail
// (authn.Store.RequestVerification).
func (s *Server) handleRequestVerification(w http.ResponseWriter, r *http.Request) error {
	c, email, err := s.flowRequest(r, superusersVerified)
	if err != nil {
		return err
	}
	m, err := s.auth.RequestVerification(c, email)
	if err != nil {
		return err
	}
	s.mailQuietly(r, "verification", c, c.VerificationTemplate, m)
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
	_, err = s.auth.VerifyEmail(c, token)
	switch {
	case err == nil:
		return noContent(w)
	case errors.Is(err, authn.ErrInvalidInput):
		return flowInputError(err)
	case errors.Is(err, authn.ErrTokenStale), errors.Is(err, authn.ErrNotFound):
		return errBadRequest(msgVerifyTokenStale, err)
	case isStorageError(err):
		return err
	}
	return errBadRequest(msgVerifySaveFailed, err)
}

// handleRequestPasswordReset handles POST /api/collections/{collection}/request-password-reset.
// An unknown email and a record mailed successfully in the last two
// minutes get the 204 of a sent mail, and no mail
// (authn.Store.RequestPasswordReset).
func (s *Server) handleRequestPasswordReset(w http.ResponseWriter, r *http.Request) error {
	c, email, err := s.flowRequest(r, resetPasswordOff)
	if err != nil {
		return err
	}
	m, err := s.auth.RequestPasswordReset(c, email)
	if err != nil {
		return err
	}
	s.mailQuietly(r, "password reset", c, c.ResetPasswordTemplate, m)
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
	_, err = s.auth.ConfirmPasswordReset(r.Context(), c, authn.PasswordReset{Token: vals[0], Password: vals[1], PasswordConfirm: vals[2]})
	switch {
	case err == nil:
		return noContent(w)
	case errors.Is(err, authn.ErrInvalidInput):
		return flowInputError(err)
	case errors.Is(err, authn.ErrTokenStale), errors.Is(err, authn.ErrNotFound):
		return errBadRequest(msgResetTokenStale, err)
	case validationData(err) != nil:
		// The password field's rule, past the form's.
		return errValidation(msgResetFailed, validationData(err))
	}
	return err
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
	if ferr := checkEmailInput(newEmail); ferr != nil {
		return errValidation(msgValidationFailed, validation.Errors{"newEmail": ferr})
	}
	m, err := s.auth.RequestEmailChange(c, st.rec, newEmail)
	if err != nil {
		if e := flowInputError(err); e != nil {
			return e
		}
		return err
	}
	// The caller is signed in, and the answer above already tells a taken
	// address: the limits may answer 429.
	if err := s.allowMailClient(r); err != nil {
		return err
	}
	if !s.allowMailTarget(m.To) {
		return s.errMailTarget()
	}
	msg := s.renderFlowMail(c, m.Record, c.ConfirmEmailChangeTemplate, m.Token, m.To)
	// PocketBase sends this one before it answers, and reports a
	// failure: the caller already proved who they are.
	if err := s.sendFlowMail(r, "email change", c, m.Record, msg); err != nil {
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
	_, err = s.auth.ConfirmEmailChange(r.Context(), c, authn.EmailChange{Token: vals[0], Password: vals[1]})
	switch {
	case err == nil:
		return noContent(w)
	case errors.Is(err, authn.ErrInvalidInput):
		return flowInputError(err)
	case isStorageError(err):
		return err
	}
	return errBadRequest(msgEmailChangeFailed, err)
}
