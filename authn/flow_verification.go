package authn

import "strongbox/authn/validation"

// Email verification: request-verification mails a verification token to
// a record's email, confirm-verification takes it back and marks the
// record verified.

// RequestVerification is a request for the verification mail of the
// record of c with this email (already validated as an email). Every
// request gets the same TokenMail work, a token signed for the record or
// for a stand-in, whether or not its mail is to be sent: it is sent (Send)
// only to a record that exists, is not verified yet, and was not sent one
// in the last ResendWindow. Once an attempt to send it is made, failed or
// not, the record gets no other for ResendWindow, as in PocketBase.
func (s *Store) RequestVerification(c *Collection, email string) (*TokenMail, error) {
	r, found := s.requestByEmail(c, email)
	now, key := s.now(), resendKey(TokenVerification, c, r)
	token, err := s.NewVerificationToken(c, r)
	if err != nil {
		return nil, err
	}
	m := &TokenMail{Record: r, Token: token, To: r.Email,
		Send: found && !r.Verified && !s.resend.recent(key, now)}
	if m.Send {
		m.sent = func(error) { s.resend.mark(key, now) }
	}
	return m, nil
}

// VerifyEmail confirms a verification token of c and marks its record
// verified (a record already verified is fine, and unchanged). The
// token's failures, in PocketBase's order, are ErrInvalidInput on
// "token": required, no email claim (a token that does not parse lacks
// it too), invalid or expired, of another collection, for another email
// than the record's. A record changed or deleted since is ErrTokenStale
// or ErrNotFound; the journal's errors are returned as they are. The
// record gets verification mails again, should it ever need them.
func (s *Store) VerifyEmail(c *Collection, token string) (*Record, error) {
	rec, _, ferr := s.checkFlowToken(c, token, TokenVerification)
	if ferr != nil {
		return nil, invalidInput(validation.Errors{"token": ferr})
	}
	n, err := s.ConfirmVerification(c, rec)
	if err != nil {
		return nil, err
	}
	s.resend.forget(resendKey(TokenVerification, c, n))
	return n, nil
}

// ConfirmVerification marks record r of c verified, r being the record as
// its verification token was verified against. A record already verified
// is returned unchanged, nothing written.
func (s *Store) ConfirmVerification(c *Collection, r *Record) (*Record, error) {
	return s.changeRecord(c, r, func(n *Record) (bool, error) {
		if n.Verified {
			return false, nil
		}
		n.Verified = true
		return true, nil
	})
}
