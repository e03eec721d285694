package authn

import (
	"context"
	"errors"
	"testing"

	"strongbox/authn/validation"
)

// enableOAuth2 turns OAuth2 on for the users collection with a google
// provider and returns the collection.
func enableOAuth2(t *testing.T, s *Store) *Collection {
	t.Helper()
	users, _ := s.Collection(UsersName)
	users, err := s.UpdateCollection(users, input(t, `{"oauth2":{"enabled":true,"providers":[{"name":"google","clientId":"id","clientSecret":"s"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	return users
}

// TestSignInOAuth2 covers the resolution order of SignInOAuth2 and what
// it does to the record it finds, both as in PocketBase.
func TestSignInOAuth2(t *testing.T) {
	ctx := context.Background()
	s, _, path := newTestStore(t)
	users := enableOAuth2(t, s)
	google := func(id, email string) OAuth2Identity {
		return OAuth2Identity{Provider: "google", ID: id, Name: "Ann", Email: email, AvatarURL: "https://img.test/a.png"}
	}

	// 4: a new record: the verified provider email, mapped name, verified.
	rec, isNew, err := s.SignInOAuth2(ctx, users, OAuth2SignIn{Identity: google("g1", "ann@example.com")})
	if err != nil || !isNew || rec.Email != "ann@example.com" || !rec.Verified || rec.Fields["name"] != "Ann" {
		t.Fatalf("new account = %+v, %v, %v; want a verified record named Ann", rec, isNew, err)
	}
	// 1: the link wins, whatever the email says now.
	again, isNew, err := s.SignInOAuth2(ctx, users, OAuth2SignIn{Identity: google("g1", "")})
	if err != nil || isNew || again.ID != rec.ID {
		t.Fatalf("linked account = %v, %v, %v; want %s", again, isNew, err, rec.ID)
	}

	// 3: a verified record with the provider's verified email is linked and
	// keeps its password.
	bob := signUp(t, s, "bob@example.com", "bob-password")
	if bob, err = s.UpdateRecord(ctx, users, bob.ID, RecordInput{Manager: true, Values: map[string]any{"verified": true}}); err != nil {
		t.Fatal(err)
	}
	got, isNew, err := s.SignInOAuth2(ctx, users, OAuth2SignIn{Identity: google("g2", "bob@example.com")})
	if err != nil || isNew || got.ID != bob.ID || got.PasswordHash != bob.PasswordHash || got.TokenKey != bob.TokenKey {
		t.Fatalf("verified email match = %+v, %v, %v; want bob unchanged", got, isNew, err)
	}

	// 3, unverified record: pre-registered by someone else; the sign-in
	// takes it over safely (new password, tokens ended, verified).
	eve := signUp(t, s, "carol@example.com", "squatter-password")
	got, isNew, err = s.SignInOAuth2(ctx, users, OAuth2SignIn{Identity: google("g3", "carol@example.com")})
	if err != nil || isNew || got.ID != eve.ID || !got.Verified || got.PasswordHash == eve.PasswordHash || got.TokenKey == eve.TokenKey {
		t.Fatalf("unverified email match = %+v, %v, %v; want the record verified with a new password and token key", got, isNew, err)
	}
	if _, err := s.AuthWithPassword(ctx, users, "carol@example.com", "", "squatter-password"); !errors.Is(err, ErrAuthFailed) {
		t.Errorf("the squatter's password after the takeover: %v, want ErrAuthFailed", err)
	}

	// An unverified provider email (dropped by the caller: Email "") never
	// matches: a separate record, which fails without an email.
	_, _, err = s.SignInOAuth2(ctx, users, OAuth2SignIn{Identity: google("g4", "")})
	var ve validation.Errors
	if !errors.As(err, &ve) || ve["email"] == nil {
		t.Errorf("no verified email, no createData = %v, want email required", err)
	}
	// createData supplies one: created, not verified (not the provider's).
	dan, isNew, err := s.SignInOAuth2(ctx, users, OAuth2SignIn{Identity: google("g4", ""), CreateData: map[string]any{"email": "dan@example.com", "name": "Dan"}})
	if err != nil || !isNew || dan.Verified || dan.Fields["name"] != "Dan" {
		t.Fatalf("createData sign-up = %+v, %v, %v; want an unverified record named Dan", dan, isNew, err)
	}
	// createData is validated as a sign-up is.
	_, _, err = s.SignInOAuth2(ctx, users, OAuth2SignIn{Identity: google("g5", "erin@example.com"), CreateData: map[string]any{"verified": true}})
	if !errors.As(err, &ve) || ve["verified"] == nil {
		t.Errorf("createData verified:true = %v, want refused", err)
	}

	// 2: the signed-in record is linked (and keeps its password although
	// unverified); a second google identity for it is a conflict.
	frank := signUp(t, s, "frank@example.com", "frank-password")
	got, isNew, err = s.SignInOAuth2(ctx, users, OAuth2SignIn{Identity: google("g6", "other@example.com"), Authed: frank})
	if err != nil || isNew || got.ID != frank.ID || got.PasswordHash != frank.PasswordHash {
		t.Fatalf("logged-in linking = %+v, %v, %v; want frank, password kept", got, isNew, err)
	}
	if _, _, err = s.SignInOAuth2(ctx, users, OAuth2SignIn{Identity: google("g7", ""), Authed: frank}); !errors.Is(err, ErrLinkConflict) {
		t.Errorf("second google link of frank = %v, want ErrLinkConflict", err)
	}

	// Links are durable, listed per record, and go with their record.
	if err := s.DeleteRecord(users, rec.ID); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openTestStore(t, path, &testClock{})
	defer s.Close()
	users, _ = s.Collection(UsersName)
	if l := s.ExternalAuths(users, frank.ID); len(l) != 1 || l[0].Provider != "google" || l[0].ProviderID != "g6" {
		t.Errorf("frank's links after reopen = %+v, want google g6", l)
	}
	if l := s.ExternalAuths(users, rec.ID); len(l) != 0 {
		t.Errorf("links of a deleted record = %+v, want none", l)
	}
	// g1's record is gone: a new sign-in creates a new one.
	got, isNew, err = s.SignInOAuth2(ctx, users, OAuth2SignIn{Identity: google("g1", "ann@example.com")})
	if err != nil || !isNew || got.ID == rec.ID {
		t.Errorf("sign-in after the linked record's deletion = %v, %v, %v; want a new record", got, isNew, err)
	}
	if err := s.DeleteExternalAuth(users, frank.ID, "google"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteExternalAuth(users, frank.ID, "google"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second unlink = %v, want ErrNotFound", err)
	}
	if err := s.compact(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openTestStore(t, path, &testClock{})
	defer s.Close()
	users, _ = s.Collection(UsersName)
	if l := s.ExternalAuths(users, frank.ID); len(l) != 0 {
		t.Errorf("frank's links after unlink, compaction and reopen = %+v, want none", l)
	}
	if l := s.ExternalAuths(users, got.ID); len(l) != 1 {
		t.Errorf("the new g1 record's links after compaction = %+v, want one", l)
	}
}

// TestSignInOAuth2Off: OAuth2 off, and _superusers, refuse.
func TestSignInOAuth2Off(t *testing.T) {
	s, _, _ := newTestStore(t)
	users, _ := s.Collection(UsersName)
	for _, c := range []*Collection{users, s.Superusers()} {
		if _, _, err := s.SignInOAuth2(context.Background(), c, OAuth2SignIn{Identity: OAuth2Identity{Provider: "google", ID: "x"}}); !errors.Is(err, ErrOAuth2Off) {
			t.Errorf("SignInOAuth2(%s) = %v, want ErrOAuth2Off", c.Name, err)
		}
	}
}

// TestSignInOAuth2Concurrent: first sign-ins of one identity at once make
// one record and one link; every one of them signs in to it.
func TestSignInOAuth2Concurrent(t *testing.T) {
	s, _, _ := newTestStore(t)
	users := enableOAuth2(t, s)
	const n = 8
	ids := make(chan string, n)
	errs := make(chan error, n)
	for range n {
		go func() {
			r, _, err := s.SignInOAuth2(context.Background(), users, OAuth2SignIn{
				Identity: OAuth2Identity{Provider: "google", ID: "g1", Email: "ann@example.com"}})
			if err != nil {
				errs <- err
				return
			}
			ids <- r.ID
		}()
	}
	seen := map[string]bool{}
	for range n {
		select {
		case err := <-errs:
			t.Errorf("concurrent sign-in: %v", err)
		case id := <-ids:
			seen[id] = true
		}
	}
	if len(seen) != 1 || len(s.Records(users)) != 1 {
		t.Errorf("records signed in to: %v; records stored: %d; want one", seen, len(s.Records(users)))
	}
}
