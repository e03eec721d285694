package authn

import (
	"errors"
	"testing"
	"time"

	"strongbox/authn/validation"
)

// wantFields checks that err is ErrInvalidInput with exactly the field
// failures want (by code and message).
func wantFields(t *testing.T, what string, err error, want map[string]*validation.Error) {
	t.Helper()
	if !errors.Is(err, ErrInvalidInput) {
		t.Errorf("%s = %v, want ErrInvalidInput", what, err)
		return
	}
	wantRule(t, what, err, want)
}

// wantRule checks that err holds exactly the field failures want.
func wantRule(t *testing.T, what string, err error, want map[string]*validation.Error) {
	t.Helper()
	got, _ := errors.AsType[validation.Errors](err)
	if len(got) != len(want) {
		t.Errorf("%s = %v, want %v", what, err, want)
		return
	}
	for k, w := range want {
		if g, _ := got[k].(*validation.Error); !sameError(g, w) {
			t.Errorf("%s: %s = %v, want %v", what, k, got[k], w)
		}
	}
}

// TestRequestVerification: which requests get their mail sent, by the
// injected clock. Every request gets a token and an address, a stand-in's
// for an unknown email; only an existing, unverified record that was not
// sent one in the last ResendWindow gets the mail, and an attempt to send,
// even a failed one, starts the window.
func TestRequestVerification(t *testing.T) {
	s, clk, _ := newTestStore(t)
	users, _ := s.Collection(UsersName)
	r := signUp(t, s, "a@example.com", "password1")
	v := signUp(t, s, "v@example.com", "password1")
	if _, err := s.ConfirmVerification(users, v); err != nil {
		t.Fatal(err)
	}
	refused := errors.New("smtp: refused")
	for _, tt := range []struct {
		name     string
		advance  time.Duration
		email    string
		sendErr  error // the outcome reported with Sent, when sent
		wantSend bool
	}{
		{"unknown email", 0, "nobody@example.com", nil, false},
		{"lookups are case-sensitive", 0, "A@example.com", nil, false},
		{"already verified", 0, "v@example.com", nil, false},
		{"first", 0, "a@example.com", refused, true},
		{"failed send still counts", time.Second, "a@example.com", nil, false},
		{"just inside the window", ResendWindow - 2*time.Second, "a@example.com", nil, false},
		{"window over", time.Second, "a@example.com", nil, true},
		{"clock went back", -time.Minute, "a@example.com", nil, true},
		{"the earlier mark holds", ResendWindow, "a@example.com", nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk.t = clk.t.Add(tt.advance)
			m, err := s.RequestVerification(users, tt.email)
			if err != nil {
				t.Fatal(err)
			}
			if m.Send != tt.wantSend || m.To != tt.email || m.Record.Email != tt.email {
				t.Errorf("RequestVerification(%q) = send %v to %q for %q, want send %v to the email", tt.email, m.Send, m.To, m.Record.Email, tt.wantSend)
			}
			p, err := ParseUnverified(m.Token)
			if err != nil || p.Claims.Type != TokenVerification || p.Claims.Email != tt.email || p.Claims.ID != m.Record.ID {
				t.Errorf("token claims = %+v, %v", p, err)
			}
			_, vr, _, err := s.VerifyToken(m.Token, TokenVerification)
			if known := m.Record.ID == r.ID || m.Record.ID == v.ID; known != (err == nil) || known && vr.ID != m.Record.ID {
				t.Errorf("VerifyToken of the mail's token: %v (record %q)", err, m.Record.ID)
			}
			if m.Send {
				m.Sent(tt.sendErr)
			}
		})
	}

	// Confirming forgets the record's window.
	m, _ := s.RequestVerification(users, "a@example.com")
	if m.Send || !s.resend.recent(resendKey(TokenVerification, users, r), clk.t) {
		t.Fatal("the window should still run")
	}
	if _, err := s.VerifyEmail(users, m.Token); err != nil {
		t.Fatal(err)
	}
	if s.resend.recent(resendKey(TokenVerification, users, r), clk.t) {
		t.Error("the window survived the verification")
	}
}

// TestVerifyEmail: the token's checks in PocketBase's order, each the
// token field's failure, then the change, idempotent.
func TestVerifyEmail(t *testing.T) {
	s, clk, _ := newTestStore(t)
	users, _ := s.Collection(UsersName)
	r := signUp(t, s, "a@example.com", "password1")
	other, err := s.CreateCollection(input(t, `{"name":"members","type":"auth"}`))
	if err != nil {
		t.Fatal(err)
	}
	member, err := s.CreateRecord(t.Context(), other, RecordInput{Values: map[string]any{"email": "m@example.com", "password": "password1", "passwordConfirm": "password1"}})
	if err != nil {
		t.Fatal(err)
	}
	exp := clk.t.Add(time.Hour).Unix()
	key := string(signingKey(users, r, TokenVerification))
	ok, _ := s.NewVerificationToken(users, r)
	reset, _ := s.NewPasswordResetToken(users, r)
	memberToken, _ := s.NewVerificationToken(other, member)
	for _, tt := range []struct {
		name  string
		token string
		want  *validation.Error // nil: verified
	}{
		{"empty", "", validation.Required()},
		{"does not parse", "not a token", validation.TokenMissingEmail()},
		{"no email claim, before the signature", signWith(t, Claims{CollectionID: users.ID, ID: r.ID, Exp: &exp, Type: TokenVerification}, "wrong key"), validation.TokenMissingEmail()},
		{"another type", reset, validation.InvalidToken()},
		{"expired", signWith(t, Claims{CollectionID: users.ID, Email: r.Email, ID: r.ID, Exp: ptr(clk.t.Unix()), Type: TokenVerification}, key), validation.InvalidToken()},
		{"another collection", memberToken, validation.TokenCollectionMismatch()},
		{"another email", signWith(t, Claims{CollectionID: users.ID, Email: "old@example.com", ID: r.ID, Exp: &exp, Type: TokenVerification}, key), validation.TokenEmailMismatch()},
		{"right", ok, nil},
		{"again", ok, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n, err := s.VerifyEmail(users, tt.token)
			if tt.want != nil {
				wantFields(t, "VerifyEmail", err, map[string]*validation.Error{"token": tt.want})
				return
			}
			if err != nil || !n.Verified {
				t.Errorf("VerifyEmail = %v, %v, want the record verified", n, err)
			}
		})
	}
	if got, _ := s.Record(other, member.ID); got.Verified {
		t.Error("the member was verified by a token of another collection")
	}
}
