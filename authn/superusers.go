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
