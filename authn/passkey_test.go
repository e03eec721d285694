package authn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"strongbox/authn/webauthn"
	"strongbox/authn/webauthntest"
)

var passkeyRP = webauthn.RelyingParty{ID: "localhost", Origin: "http://localhost:8090", Name: "test"}

// enablePasskeys turns passkeys on for users and returns it.
func enablePasskeys(t *testing.T, s *Store) *Collection {
	t.Helper()
	users, _ := s.Collection(UsersName)
	c, err := s.UpdateCollection(users, input(t, `{"passkey":{"enabled":true}}`))
	if err != nil {
		t.Fatalf("enable passkeys: %v", err)
	}
	return c
}

// registerPasskey registers a new ES256 passkey for r.
func registerPasskey(t *testing.T, s *Store, c *Collection, r *Record) (*webauthntest.Authenticator, *Passkey) {
	t.Helper()
	a, err := webauthntest.New(webauthn.AlgES256, passkeyRP)
	if err != nil {
		t.Fatal(err)
	}
	id, opts, err := s.PasskeyRegisterOptions(c, r, passkeyRP)
	if err != nil {
		t.Fatalf("PasskeyRegisterOptions: %v", err)
	}
	resp, err := webauthn.ParseRegistrationResponse(a.Register(opts.Challenge, opts.User.ID))
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.RegisterPasskey(c, r, passkeyRP, id, resp, "laptop")
	if err != nil {
		t.Fatalf("RegisterPasskey: %v", err)
	}
	return a, p
}

// assert asks for sign-in options (for identity) and answers them with a.
func assert(t *testing.T, s *Store, c *Collection, a *webauthntest.Authenticator, identity string) (string, *webauthn.AuthenticationResponse) {
	t.Helper()
	id, opts, err := s.PasskeyRequestOptions(c, identity, passkeyRP)
	if err != nil {
		t.Fatalf("PasskeyRequestOptions: %v", err)
	}
	resp, err := webauthn.ParseAuthenticationResponse(a.Assert(opts.Challenge))
	if err != nil {
		t.Fatal(err)
	}
	return id, resp
}

func TestPasskeyRegisterAndSignIn(t *testing.T) {
	s, clk, path := newTestStore(t)
	c := enablePasskeys(t, s)
	ann := signUp(t, s, "ann@example.com", "password1")
	bob := signUp(t, s, "bob@example.com", "password1")
	a, p := registerPasskey(t, s, c, ann)
	if p.Name != "laptop" || p.RecordID != ann.ID || !bytes.Equal(p.CredentialID, a.CredentialID) {
		t.Fatalf("RegisterPasskey = %+v", p)
	}
	// The record's passkeys are excluded from the next registration.
	_, opts, _ := s.PasskeyRegisterOptions(c, ann, passkeyRP)
	if len(opts.ExcludeCredentials) != 1 || !bytes.Equal(opts.ExcludeCredentials[0].ID, a.CredentialID) || string(opts.User.ID) != ann.ID {
		t.Fatalf("creation options = %+v", opts)
	}
	for _, identity := range []string{"", "ann@example.com"} {
		id, resp := assert(t, s, c, a, identity)
		got, err := s.AuthWithPasskey(c, passkeyRP, id, resp)
		if err != nil || got.ID != ann.ID {
			t.Fatalf("AuthWithPasskey(identity %q) = %v, %v, want ann", identity, got, err)
		}
		// The same challenge and response again: refused.
		if _, err := s.AuthWithPasskey(c, passkeyRP, id, resp); !errors.Is(err, ErrPasskeyChallenge) {
			t.Fatalf("replayed AuthWithPasskey = %v, want ErrPasskeyChallenge", err)
		}
	}
	// Options for bob's identity: ann's passkey cannot answer them.
	id, resp := assert(t, s, c, a, "bob@example.com")
	if _, err := s.AuthWithPasskey(c, passkeyRP, id, resp); !errors.Is(err, ErrPasskeyInvalid) {
		t.Fatalf("ann's passkey on bob's options = %v, want ErrPasskeyInvalid", err)
	}
	// A user handle naming another record is refused.
	id, resp = assert(t, s, c, a, "")
	resp.Response.UserHandle = []byte(bob.ID)
	if _, err := s.AuthWithPasskey(c, passkeyRP, id, resp); !errors.Is(err, ErrPasskeyInvalid) {
		t.Fatalf("wrong user handle = %v, want ErrPasskeyInvalid", err)
	}
	// A counter that does not grow is refused.
	a.Counter = s.Passkeys(c, ann.ID)[0].SignCount - 1 // the next assertion signs the stored counter
	id, resp = assert(t, s, c, a, "")
	if _, err := s.AuthWithPasskey(c, passkeyRP, id, resp); !errors.Is(err, ErrPasskeyCounter) {
		t.Fatalf("counter regression = %v, want ErrPasskeyCounter", err)
	}
	a.Counter += 5
	// A challenge past its lifetime is refused.
	id, resp = assert(t, s, c, a, "")
	clk.t = clk.t.Add(PasskeyChallengeTTL)
	if _, err := s.AuthWithPasskey(c, passkeyRP, id, resp); !errors.Is(err, ErrPasskeyChallenge) {
		t.Fatalf("expired challenge = %v, want ErrPasskeyChallenge", err)
	}
	// A registration challenge does not serve a sign-in.
	rid, _, _ := s.PasskeyRegisterOptions(c, ann, passkeyRP)
	_, resp = assert(t, s, c, a, "")
	if _, err := s.AuthWithPasskey(c, passkeyRP, rid, resp); !errors.Is(err, ErrPasskeyChallenge) {
		t.Fatalf("registration challenge for a sign-in = %v, want ErrPasskeyChallenge", err)
	}

	// The passkey and its counter survive a restart.
	count := s.Passkeys(c, ann.ID)[0].SignCount
	s.Close()
	s = openTestStore(t, path, clk)
	defer s.Close()
	c, _ = s.Collection(UsersName)
	ps := s.Passkeys(c, ann.ID)
	if len(ps) != 1 || ps[0].SignCount != count || ps[0].Name != "laptop" || ps[0].LastUsed.IsZero() {
		t.Fatalf("after reopen Passkeys = %+v, want one with counter %d", ps, count)
	}
	id, resp = assert(t, s, c, a, "")
	if got, err := s.AuthWithPasskey(c, passkeyRP, id, resp); err != nil || got.ID != ann.ID {
		t.Fatalf("after reopen AuthWithPasskey = %v, %v", got, err)
	}
	// Compaction keeps it.
	s.mu.Lock()
	err := s.compact()
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openTestStore(t, path, clk)
	defer s.Close()
	c, _ = s.Collection(UsersName)
	if ps := s.Passkeys(c, ann.ID); len(ps) != 1 {
		t.Fatalf("after compaction Passkeys = %+v", ps)
	}
	// Deleting it: bob cannot, ann can; then it no longer signs in.
	if err := s.DeletePasskey(c, bob.ID, ps[0].ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("DeletePasskey by bob = %v, want ErrNotFound", err)
	}
	if err := s.DeletePasskey(c, ann.ID, ps[0].ID); err != nil {
		t.Fatal(err)
	}
	id, resp = assert(t, s, c, a, "")
	if _, err := s.AuthWithPasskey(c, passkeyRP, id, resp); !errors.Is(err, ErrPasskeyInvalid) {
		t.Fatalf("deleted passkey = %v, want ErrPasskeyInvalid", err)
	}
}

func TestPasskeyGoesWithRecord(t *testing.T) {
	s, clk, path := newTestStore(t)
	c := enablePasskeys(t, s)
	ann := signUp(t, s, "ann@example.com", "password1")
	a, _ := registerPasskey(t, s, c, ann)
	if err := s.DeleteRecord(c, ann.ID); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openTestStore(t, path, clk)
	defer s.Close()
	c, _ = s.Collection(UsersName)
	if n := len(s.pk.byID); n != 0 {
		t.Fatalf("%d passkeys left after the record's deletion", n)
	}
	id, resp := assert(t, s, c, a, "")
	if _, err := s.AuthWithPasskey(c, passkeyRP, id, resp); !errors.Is(err, ErrPasskeyInvalid) {
		t.Fatalf("passkey of a deleted record = %v, want ErrPasskeyInvalid", err)
	}
}

// The sign-in options tell nothing about who has an account or a
// passkey: an unknown identity and a record without passkeys get one
// credential, the same each time, shaped as a real one.
func TestPasskeyOptionsNoEnumeration(t *testing.T) {
	s, _, _ := newTestStore(t)
	c := enablePasskeys(t, s)
	signUp(t, s, "nokey@example.com", "password1")
	ann := signUp(t, s, "ann@example.com", "password1")
	registerPasskey(t, s, c, ann)
	shape := func(identity string) (string, []byte) {
		_, o, err := s.PasskeyRequestOptions(c, identity, passkeyRP)
		if err != nil {
			t.Fatal(err)
		}
		o.Challenge = nil
		if len(o.AllowCredentials) != 1 {
			t.Fatalf("options for %q allow %d credentials, want 1", identity, len(o.AllowCredentials))
		}
		id := o.AllowCredentials[0].ID
		o.AllowCredentials[0].ID, o.AllowCredentials[0].Transports = nil, nil
		b, _ := json.Marshal(o)
		return string(b), id
	}
	real, _ := shape("ann@example.com")
	for _, identity := range []string{"nobody@example.com", "nokey@example.com"} {
		got, id := shape(identity)
		_, again := shape(identity)
		if got != real || len(id) != 32 || !bytes.Equal(id, again) {
			t.Errorf("options for %s = %s with id %x then %x, want %s and a stable 32-byte id", identity, got, id, again, real)
		}
	}
}

func TestPasskeyOffAndLimits(t *testing.T) {
	s, _, _ := newTestStore(t)
	users, _ := s.Collection(UsersName)
	ann := signUp(t, s, "ann@example.com", "password1")
	if _, _, err := s.PasskeyRegisterOptions(users, ann, passkeyRP); !errors.Is(err, ErrPasskeyOff) {
		t.Fatalf("PasskeyRegisterOptions with passkeys off = %v, want ErrPasskeyOff", err)
	}
	if _, _, err := s.PasskeyRequestOptions(users, "", passkeyRP); !errors.Is(err, ErrPasskeyOff) {
		t.Fatalf("PasskeyRequestOptions with passkeys off = %v, want ErrPasskeyOff", err)
	}
	c := enablePasskeys(t, s)
	first, _, _ := s.PasskeyRequestOptions(c, "", passkeyRP)
	for range MaxPasskeyChallenges {
		if _, _, err := s.PasskeyRequestOptions(c, "", passkeyRP); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(s.pk.challenges); n != MaxPasskeyChallenges {
		t.Fatalf("%d challenges outstanding, want at most %d", n, MaxPasskeyChallenges)
	}
	if _, ok := s.pk.challenges[first]; ok {
		t.Fatal("the oldest challenge was kept past the bound")
	}
	if len(s.pk.order) > 2*MaxPasskeyChallenges+1 {
		t.Fatalf("order holds %d ids", len(s.pk.order))
	}
	// Registering the same credential twice is refused.
	a, _ := registerPasskey(t, s, c, ann)
	id, opts, _ := s.PasskeyRegisterOptions(c, ann, passkeyRP)
	resp, _ := webauthn.ParseRegistrationResponse(a.Register(opts.Challenge, opts.User.ID))
	if _, err := s.RegisterPasskey(c, ann, passkeyRP, id, resp, "again"); !errors.Is(err, ErrPasskeyExists) {
		t.Fatalf("RegisterPasskey twice = %v, want ErrPasskeyExists", err)
	}
	// Another record's registration challenge is refused.
	bob := signUp(t, s, "bob@example.com", "password1")
	id, opts, _ = s.PasskeyRegisterOptions(c, ann, passkeyRP)
	b2, _ := webauthntest.New(webauthn.AlgES256, passkeyRP)
	resp, _ = webauthn.ParseRegistrationResponse(b2.Register(opts.Challenge, []byte(bob.ID)))
	if _, err := s.RegisterPasskey(c, bob, passkeyRP, id, resp, ""); !errors.Is(err, ErrPasskeyChallenge) {
		t.Fatalf("RegisterPasskey on ann's challenge for bob = %v, want ErrPasskeyChallenge", err)
	}
}

// A passkey is a first factor like the others: with MFA on, it opens an
// MFA session that another method completes.
func TestPasskeyMFA(t *testing.T) {
	s, _, _ := newTestStore(t)
	users, _ := s.Collection(UsersName)
	c, err := s.UpdateCollection(users, input(t, `{"passkey":{"enabled":true},"mfa":{"enabled":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	ann := signUp(t, s, "ann@example.com", "password1")
	a, _ := registerPasskey(t, s, c, ann)
	id, resp := assert(t, s, c, a, "")
	r, err := s.AuthWithPasskey(c, passkeyRP, id, resp)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.SignIn(context.Background(), SignIn{Collection: c, Record: r, Method: MethodPasskey})
	if err != nil || out.MFAID == "" {
		t.Fatalf("SignIn by passkey = %+v, %v, want an MFA session", out, err)
	}
	id, resp = assert(t, s, c, a, "")
	r, _ = s.AuthWithPasskey(c, passkeyRP, id, resp)
	if _, err := s.SignIn(context.Background(), SignIn{Collection: c, Record: r, Method: MethodPasskey, MFAID: out.MFAID}); !errors.Is(err, ErrMFASameMethod) {
		t.Fatalf("passkey twice = %v, want ErrMFASameMethod", err)
	}
	pw, err := s.AuthWithPassword(context.Background(), c, "ann@example.com", "", "password1")
	if err != nil {
		t.Fatal(err)
	}
	if done, err := s.SignIn(context.Background(), SignIn{Collection: c, Record: pw, Method: MethodPassword, MFAID: out.MFAID}); err != nil || done.Token == "" {
		t.Fatalf("password after passkey = %+v, %v, want a token", done, err)
	}
}
