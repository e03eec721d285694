package authn

import (
	"context"
	"errors"

	"strongbox/authn/validation"
)

// Email change: request-email-change, by a signed-in record, mails an
// email-change token to the new address; confirm-email-change takes it
// back with the record's password and sets the email.

// maxEmailChangePasswordBytes is the longest password
// confirm-email-change takes, in bytes (PocketBase's form bound).
const maxEmailChangePasswordBytes = 100

// RequestEmailChange is a request by record r of c to change its email to
// newEmail (already validated as an email): the token to mail to
// newEmail, always to be sent (the caller proved who they are, so the
// answer may tell a taken address). The email r has already is
// ErrInvalidInput on "newEmail" (validation_not_in_invalid), and so is
// one another record of c has (validation_invalid_new_email).
func (s *Store) RequestEmailChange(c *Collection, r *Record, newEmail string) (*TokenMail, error) {
	var ferr *validation.Error
	if newEmail == r.Email {
		ferr = validation.NotInInvalid()
	} else if other, taken := s.FindByEmail(c, newEmail); taken && other.ID != r.ID {
		ferr = validation.InvalidNewEmail()
	}
	if ferr != nil {
		return nil, invalidInput(validation.Errors{"newEmail": ferr})
	}
	token, err := s.NewEmailChangeToken(c, r, newEmail)
	if err != nil {
		return nil, err
	}
	return &TokenMail{Record: r, Token: token, To: newEmail, Send: true}, nil
}

// EmailChange is the input of confirm-email-change.
type EmailChange struct {
	Token    string
	Password string // the record's
}

// ConfirmEmailChange checks in, an email change of collection c, and sets
// the record's email to the token's new one as ChangeEmail does. The
// form's failures are ErrInvalidInput, both fields checked (the first
// failure of each), in PocketBase's order: "token" (required, no newEmail
// claim, the new email already taken, invalid or expired, of another
// collection), "password" (required, at most 100 bytes, not the record's
// password). The password is checked with the same bcrypt work whether or
// not the token named a record. The new email taken between the checks
// and the change is ErrInvalidInput on "token" too; a record changed or
// deleted since is ErrTokenStale or ErrNotFound. The password check's
// ErrBusy and the journal's errors are returned as they are.
func (s *Store) ConfirmEmailChange(ctx context.Context, c *Collection, in EmailChange) (*Record, error) {
	errs := validation.Errors{}
	rec, newEmail, ferr := s.checkEmailChangeToken(c, in.Token)
	if ferr != nil {
		errs["token"] = ferr
	}
	switch {
	case in.Password == "":
		errs["password"] = errRequired
	case len(in.Password) > maxEmailChangePasswordBytes:
		errs["password"] = validation.LengthOutOfRange(1, maxEmailChangePasswordBytes)
	default:
		var owner *Record
		if ferr == nil {
			owner = rec
		}
		ok, err := s.CheckPassword(ctx, owner, in.Password)
		if err != nil {
			return nil, err
		}
		if !ok {
			errs["password"] = validation.InvalidPassword()
		}
	}
	if len(errs) > 0 {
		return nil, invalidInput(errs)
	}
	n, err := s.ChangeEmail(c, rec, newEmail)
	if errors.Is(err, ErrEmailTaken) {
		return nil, invalidInput(validation.Errors{"token": validation.ExistingTokenEmail(newEmail)})
	}
	return n, err
}

// checkEmailChangeToken checks an email-change token for collection c in
// PocketBase's order and returns the record it names, as verified, and
// the new email.
func (s *Store) checkEmailChangeToken(c *Collection, token string) (*Record, string, *validation.Error) {
	if token == "" {
		return nil, "", errRequired
	}
	var newEmail string
	if p, err := ParseUnverified(token); err == nil {
		newEmail = p.Claims.NewEmail
	}
	if newEmail == "" {
		return nil, "", validation.TokenMissingNewEmail()
	}
	if _, taken := s.FindByEmail(c, newEmail); taken {
		return nil, "", validation.ExistingTokenEmail(newEmail)
	}
	tc, rec, claims, err := s.VerifyToken(token, TokenEmailChange)
	if err != nil {
		return nil, "", validation.InvalidToken()
	}
	if tc.ID != c.ID {
		return nil, "", validation.TokenCollectionMismatch()
	}
	return rec, claims.NewEmail, nil
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
