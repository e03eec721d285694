package authn

import "context"

// Superusers returns the _superusers collection.
func (s *Store) Superusers() *Collection {
	c, _ := s.Collection(SuperusersID)
	return c
}

// CreateSuperuser adds a superuser. It applies the same validation as the
// API (a valid, unused email; a password of 8 to 71 bytes).
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
// email without mailing it: the CLI's recovery path when mail is broken
// (pocketbase-auth.md §9.1). OTP must be enabled on _superusers, where it
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
