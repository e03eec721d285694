package authn

import (
	"context"
	"errors"
	"fmt"

	"strongbox/authn/validation"
)

// Superusers returns the _superusers collection.
func (s *Store) Superusers() *Collection {
	c, _ := s.Collection(SuperusersID)
	return c
}

// CreateSuperuser adds a superuser. It applies the same validation as the
// API (a valid, unused email; a password of 8 to 71 characters and at most
// 72 bytes).
func (s *Store) CreateSuperuser(ctx context.Context, email, password string) (*Record, error) {
	return s.CreateRecord(ctx, s.Superusers(), RecordInput{Manager: true, Values: map[string]any{
		"email": email, "password": password, "passwordConfirm": password,
	}})
}

// UpsertSuperuser sets the password of the superuser with this email, or
// creates one.
func (s *Store) UpsertSuperuser(ctx context.Context, email, password string) (*Record, error) {
	su := s.Superusers()
	if r, ok := s.FindByEmail(su, email); ok {
		return s.SetPassword(ctx, su, r.ID, password)
	}
	return s.CreateSuperuser(ctx, email, password)
}

// SuperuserOTP issues a one-time password for the superuser with this
// email without mailing it: the CLI's recovery path when mail is broken, as
// PocketBase v0.31.0's `superuser otp` command is. OTP must be enabled on _superusers, where it
// is a second factor only (MFA is on with it), so the code never signs in
// alone; ErrOTPOff otherwise, ErrNotFound for an unknown email. The OTP
// is durable when SuperuserOTP returns, and valid otp.duration seconds.
func (s *Store) SuperuserOTP(email string) (id, code string, err error) {
	su := s.Superusers()
	r, ok := s.FindByEmail(su, email)
	if !ok {
		return "", "", ErrNotFound
	}
	return s.CreateOTP(su, r)
}

// The actions of `strongbox superuser` (see ApplySuperuserAction).
const (
	SuperuserUpsert = "upsert" // set the password, creating the superuser if need be
	SuperuserCreate = "create" // create a superuser; refused if the email is taken
	SuperuserUpdate = "update" // set the password; refused for an unknown email
	SuperuserDelete = "delete" // delete; an unknown email is not an error
	SuperuserOTPFor = "otp"    // print a fresh OTP without mailing it (SuperuserOTP)
)

// ApplySuperuserAction applies one of the actions above to the superuser
// with this email, with the rules and messages of PocketBase v0.31.0's
// `superuser` command, and returns what to tell the operator. password is
// used by upsert, create and update only. An invalid password or email is
// an error that starts "invalid" and carries the API's field messages.
func (s *Store) ApplySuperuserAction(ctx context.Context, action, email, password string) (string, error) {
	su := s.Superusers()
	rec, exists := s.FindByEmail(su, email)
	switch {
	case action == SuperuserCreate && exists:
		return "", fmt.Errorf("superuser %q already exists", email)
	case action == SuperuserUpdate && !exists:
		return "", fmt.Errorf("superuser %q doesn't exist", email)
	case action == SuperuserDelete && !exists:
		return fmt.Sprintf("Superuser %q is missing or already deleted.\n", email), nil
	case action == SuperuserDelete:
		if err := s.DeleteRecord(su, rec.ID); err != nil {
			return "", err
		}
		return fmt.Sprintf("Successfully deleted superuser %q.\n", email), nil
	case action == SuperuserOTPFor:
		return s.superuserOTPMessage(email)
	}
	if _, err := s.UpsertSuperuser(ctx, email, password); err != nil {
		if ve, ok := errors.AsType[validation.Errors](err); ok {
			return "", fmt.Errorf("invalid %w", ve)
		}
		return "", err
	}
	return fmt.Sprintf("Successfully saved superuser %q.\n", email), nil
}

// superuserOTPMessage issues a fresh OTP of the superuser with this email
// (SuperuserOTP, which sends no mail: recovery when mail is broken) and
// says how to use it.
func (s *Store) superuserOTPMessage(email string) (string, error) {
	id, code, err := s.SuperuserOTP(email)
	switch {
	case errors.Is(err, ErrNotFound):
		return "", fmt.Errorf("superuser %q doesn't exist", email)
	case errors.Is(err, ErrOTPOff):
		return "", errors.New("OTP auth is not enabled for the _superusers collection: enable otp (which brings MFA) on _superusers first")
	case err != nil:
		return "", err
	}
	return fmt.Sprintf("Successfully created OTP for superuser %q:\n  otpId:    %s\n  password: %s\n  valid for %d seconds; it is a second factor: sign in with the password first, then auth-with-otp with the mfaId\n",
		email, id, code, s.Superusers().OTP.Duration), nil
}
