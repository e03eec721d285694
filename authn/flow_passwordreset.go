package authn

import (
	"context"

	"strongbox/authn/validation"
)

// Password reset: request-password-reset mails a password-reset token to
// a record's email, confirm-password-reset takes it back with the new
// password.

// maxResetPasswordBytes is the longest password confirm-password-reset
// takes, in bytes: PocketBase's form bound, checked before the password
// field's own rule (checkPassword), which answers differently.
const maxResetPasswordBytes = 255

// RequestPasswordReset is a request for the password-reset mail of the
// record of c with this email (already validated as an email). Every
// request gets the same TokenMail work, a token signed for the record or
// for a stand-in, whether or not its mail is to be sent: it is sent (Send)
// only to a record that exists and was not sent one in the last
// ResendWindow. Only a send the transport accepted starts that window,
// as in PocketBase.
func (s *Store) RequestPasswordReset(c *Collection, email string) (*TokenMail, error) {
	r, found := s.requestByEmail(c, email)
	now, key := s.now(), resendKey(TokenPasswordReset, c, r)
	token, err := s.NewPasswordResetToken(c, r)
	if err != nil {
		return nil, err
	}
	m := &TokenMail{Record: r, Token: token, To: r.Email, Send: found && !s.resend.recent(key, now)}
	if m.Send {
		m.sent = func(err error) {
			if err == nil {
				s.resend.mark(key, now)
			}
		}
	}
	return m, nil
}

// PasswordReset is the input of confirm-password-reset.
type PasswordReset struct {
	Token           string
	Password        string
	PasswordConfirm string
}

// ConfirmPasswordReset checks in, a password reset of collection c, and
// sets the record's password as ResetPassword does. The form's failures
// are ErrInvalidInput, every field checked (its first failure each), as
// PocketBase checks them: "token" (required, invalid or expired, of
// another collection), "password" (required, PasswordMin(c) to 255
// bytes), "passwordConfirm" (required, equal to
// the password). A password the form takes but the password field's rule
// refuses is a bare validation.Errors on "password", which PocketBase
// reports as a failure to set the password, not of the form. A record
// changed or deleted since is ErrTokenStale or ErrNotFound.
func (s *Store) ConfirmPasswordReset(ctx context.Context, c *Collection, in PasswordReset) (*Record, error) {
	errs := validation.Errors{}
	rec, claims, ferr := s.checkFlowToken(c, in.Token, TokenPasswordReset)
	if ferr != nil {
		errs["token"] = ferr
	}
	// The form counts bytes (ozzo-validation's Length), the field
	// characters.
	if min := PasswordMin(c); in.Password == "" {
		errs["password"] = errRequired
	} else if len(in.Password) < min || len(in.Password) > maxResetPasswordBytes {
		errs["password"] = validation.LengthOutOfRange(min, maxResetPasswordBytes)
	}
	switch {
	case in.PasswordConfirm == "":
		errs["passwordConfirm"] = errRequired
	case in.PasswordConfirm != in.Password:
		errs["passwordConfirm"] = errMismatch
	}
	if len(errs) > 0 {
		return nil, invalidInput(errs)
	}
	n, err := s.ResetPassword(ctx, c, rec, claims, in.Password)
	if err != nil {
		return nil, err
	}
	// As PocketBase, a confirmed reset ends the record's resend window:
	// its owner may ask for another reset mail at once.
	s.resend.forget(resendKey(TokenPasswordReset, c, n))
	return n, nil
}

// ResetPassword sets the password of record r of c, r being the record as
// its password-reset token (claims) was verified against, and rotates its
// token key, which ends every token of the record, the reset token
// included. The record becomes verified too when the token was sent to the
// email it still has: the mail reached its owner. A password that breaks
// the collection's password rule (checkPassword) is a validation.Errors on
// "password".
func (s *Store) ResetPassword(ctx context.Context, c *Collection, r *Record, claims *Claims, password string) (*Record, error) {
	if ferr := checkPassword(c, password); ferr != nil {
		return nil, validation.Errors{"password": ferr}
	}
	hash, err := s.hasher.Hash(ctx, password)
	if err != nil {
		return nil, err
	}
	key, err := s.rnd.Password(50)
	if err != nil {
		return nil, err
	}
	return s.changeRecord(c, r, func(n *Record) (bool, error) {
		n.PasswordHash, n.TokenKey = hash, key
		if claims != nil && claims.Email != "" && claims.Email == n.Email {
			n.Verified = true
		}
		return true, nil
	})
}
