package authn

import (
	"errors"
	"strings"
	"testing"
	"time"

	"strongbox/authn/validation"
)

// TestRequestPasswordReset: which requests get their mail sent, by the
// injected clock. Only an existing record (verified or not) that was not
// sent one in the last ResendWindow gets the mail, and only a send the
// transport accepted starts the window.
func TestRequestPasswordReset(t *testing.T) {
	s, clk, _ := newTestStore(t)
	users, _ := s.Collection(UsersName)
	signUp(t, s, "a@example.com", "password1")
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
		{"verified", 0, "v@example.com", nil, true},
		{"a sent one counts", 0, "v@example.com", nil, false},
		{"first, refused", 0, "a@example.com", refused, true},
		{"a refused send does not count", time.Second, "a@example.com", nil, true},
		{"within the window", ResendWindow - time.Nanosecond, "a@example.com", nil, false},
		{"window over", time.Nanosecond, "a@example.com", nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk.t = clk.t.Add(tt.advance)
			m, err := s.RequestPasswordReset(users, tt.email)
			if err != nil {
				t.Fatal(err)
			}
			if m.Send != tt.wantSend || m.To != tt.email {
				t.Errorf("RequestPasswordReset(%q) = send %v to %q, want send %v to the email", tt.email, m.Send, m.To, tt.wantSend)
			}
			p, err := ParseUnverified(m.Token)
			if err != nil || p.Claims.Type != TokenPasswordReset || p.Claims.Email != tt.email || *p.Claims.Exp != clk.t.Add(1800*time.Second).Unix() {
				t.Errorf("token claims = %+v, %v", p, err)
			}
			if m.Send {
				m.Sent(tt.sendErr)
			}
		})
	}

	// A confirmed reset forgets the record's window, as in PocketBase.
	m, _ := s.RequestPasswordReset(users, "a@example.com")
	if m.Send {
		t.Fatal("the window should still run")
	}
	if _, err := s.ConfirmPasswordReset(t.Context(), users, PasswordReset{Token: m.Token, Password: "password2", PasswordConfirm: "password2"}); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.RequestPasswordReset(users, "a@example.com"); !m.Send {
		t.Error("the window survived the confirmed reset: no mail sent")
	}
}

// TestConfirmPasswordReset: the form's checks (every field, ErrInvalidInput)
// come before the password field's rule, which is a failure of its own (a
// bare validation.Errors), as in PocketBase; then the reset, once.
func TestConfirmPasswordReset(t *testing.T) {
	s, _, _ := newTestStore(t)
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
	token, _ := s.NewPasswordResetToken(users, r)
	verify, _ := s.NewVerificationToken(users, r)
	memberToken, _ := s.NewPasswordResetToken(other, member)
	reset := func(token, password string) PasswordReset {
		return PasswordReset{Token: token, Password: password, PasswordConfirm: password}
	}
	type fields = map[string]*validation.Error
	for _, tt := range []struct {
		name  string
		in    PasswordReset
		form  fields // ErrInvalidInput with these
		field fields // else the password field's rule with these; both nil: reset
	}{
		{"nothing", PasswordReset{}, fields{"token": validation.Required(), "password": validation.Required(), "passwordConfirm": validation.Required()}, nil},
		{"all wrong", PasswordReset{Token: verify, Password: "short", PasswordConfirm: "other"},
			fields{"token": validation.InvalidToken(), "password": validation.LengthOutOfRange(8, 255), "passwordConfirm": validation.ValuesMismatch()}, nil},
		{"another collection", reset(memberToken, "password2"), fields{"token": validation.TokenCollectionMismatch()}, nil},
		{"the form counts bytes", reset(token, strings.Repeat("é", 128)), fields{"password": validation.LengthOutOfRange(8, 255)}, nil},
		{"over the form's 255 bytes", reset(token, strings.Repeat("a", 256)), fields{"password": validation.LengthOutOfRange(8, 255)}, nil},
		{"the field counts characters", reset(token, strings.Repeat("é", 5)), nil, fields{"password": validation.MinPassword(8)}},
		{"over the field's 71 characters", reset(token, strings.Repeat("a", 72)), nil, fields{"password": validation.MaxPassword(71)}},
		{"over bcrypt's 72 bytes", reset(token, strings.Repeat("a", 255)), nil, fields{"password": validation.InvalidValue()}},
		{"right", reset(token, "new-password"), nil, nil},
		{"used up", reset(token, "other-password"), fields{"token": validation.InvalidToken()}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n, err := s.ConfirmPasswordReset(t.Context(), users, tt.in)
			switch {
			case tt.form != nil:
				wantFields(t, "ConfirmPasswordReset", err, tt.form)
			case tt.field != nil:
				if errors.Is(err, ErrInvalidInput) {
					t.Errorf("ConfirmPasswordReset = %v, want the field's rule, not the form's", err)
				}
				wantRule(t, "ConfirmPasswordReset", err, tt.field)
			case err != nil || !n.Verified:
				t.Errorf("ConfirmPasswordReset = %v, %v, want the record reset and verified", n, err)
			}
		})
	}
	if _, err := s.AuthWithPassword(t.Context(), users, "a@example.com", "", "new-password"); err != nil {
		t.Errorf("login with the new password: %v", err)
	}
}
