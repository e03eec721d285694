package authn

import (
	"context"
	"errors"
	"time"

	"strongbox/authn/validation"
)

// The account flows, as in PocketBase: a mail carries a
// token of type verification, passwordReset or emailChange; confirming it
// verifies the record, sets its password or sets its email. Each token is
// signed with the record's token key and the collection's secret for its
// type, and carries the email it was sent for (and, for an email change,
// the new one). Setting the password or the email rotates the token key, so
// a confirmed reset or email-change token, and every other token of the
// record, stops verifying: tokens are single-use in effect, with no state
// kept for them.

// Errors of the account flows.
var (
	// ErrTokenStale: the record changed (its token key or email) between
	// the token's verification and the change it confirms.
	ErrTokenStale = errors.New("authn: the record changed since its token was verified")
	// ErrEmailTaken: another record of the collection has the email.
	ErrEmailTaken = errors.New("authn: the email belongs to another record")
)

// NewVerificationToken issues a verification token for record r of c,
// bound to r's current email.
func (s *Store) NewVerificationToken(c *Collection, r *Record) (string, error) {
	return s.signFlow(c, r, TokenVerification, "")
}

// NewPasswordResetToken issues a password-reset token for record r of c,
// bound to r's current email.
func (s *Store) NewPasswordResetToken(c *Collection, r *Record) (string, error) {
	return s.signFlow(c, r, TokenPasswordReset, "")
}

// NewEmailChangeToken issues a token that changes the email of record r
// of c to newEmail.
func (s *Store) NewEmailChangeToken(c *Collection, r *Record, newEmail string) (string, error) {
	return s.signFlow(c, r, TokenEmailChange, newEmail)
}

// signFlow signs a token of an account flow. These tokens always expire:
// after the collection's duration for the type, or PocketBase's default
// if that is somehow unset.
func (s *Store) signFlow(c *Collection, r *Record, typ TokenType, newEmail string) (string, error) {
	d := c.Token(typ).Duration
	if d <= 0 {
		d = defaultTokenDuration(c, typ)
	}
	exp := s.now().Add(time.Duration(d) * time.Second).Unix()
	claims := Claims{CollectionID: c.ID, Email: r.Email, Exp: &exp, ID: r.ID, NewEmail: newEmail, Type: typ}
	return Sign(claims, signingKey(c, r, typ))
}

// CheckPassword reports whether password is the password of r. A nil r
// never matches but costs the same bcrypt work, so that the answer's time
// does not tell whether there was a record.
func (s *Store) CheckPassword(ctx context.Context, r *Record, password string) (bool, error) {
	hash := ""
	if r != nil {
		hash = r.PasswordHash
	}
	return s.hasher.Check(ctx, hash, password)
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

// ChangeEmail sets the email of record r of c to newEmail, r being the
// record as its email-change token was verified against, marks it verified
// (the new address received the token) and rotates its token key, which
// ends every token of the record. An email another record of c has is
// ErrEmailTaken.
func (s *Store) ChangeEmail(c *Collection, r *Record, newEmail string) (*Record, error) {
	key, err := s.rnd.Password(50)
	if err != nil {
		return nil, err
	}
	return s.changeRecord(c, r, func(n *Record) (bool, error) {
		if other, ok := s.byEmail[c.ID][newEmail]; ok && other.ID != n.ID {
			return false, ErrEmailTaken
		}
		n.Email, n.Verified, n.TokenKey = newEmail, true, key
		return true, nil
	})
}

// changeRecord applies change to a copy of the current state of record r
// of c and commits it durably (fsynced before it returns), under the
// store's lock. r is the record as a token was verified against: if the
// record's token key or email has changed since, the token no longer
// holds and the change is ErrTokenStale. change reports whether there is
// anything to write; it runs with s.mu held.
func (s *Store) changeRecord(c *Collection, r *Record, change func(n *Record) (bool, error)) (*Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.cols[c.ID]; !ok {
		return nil, ErrNotFound
	}
	cur, ok := s.byCol[c.ID][r.ID]
	if !ok {
		return nil, ErrNotFound
	}
	if cur.TokenKey != r.TokenKey || cur.Email != r.Email {
		return nil, ErrTokenStale
	}
	n := cur.clone()
	write, err := change(n)
	if err != nil || !write {
		return cur, err
	}
	n.Updated = s.now().UTC()
	if err := s.commit(&op{Op: "record", Record: n}); err != nil {
		return nil, err
	}
	return n, nil
}
