package authn

import (
	"strings"
	"testing"
	"time"

	"strongbox/authn/validation"
)

// TestRequestEmailChange: the new email must differ from the record's and
// be no other record's; the token goes to it, always sent.
func TestRequestEmailChange(t *testing.T) {
	s, clk, _ := newTestStore(t)
	users, _ := s.Collection(UsersName)
	r := signUp(t, s, "a@example.com", "password1")
	signUp(t, s, "taken@example.com", "password1")
	for _, tt := range []struct {
		name, newEmail string
		want           *validation.Error // nil: a mail to send
	}{
		{"the current email", "a@example.com", validation.NotInInvalid()},
		{"another record's", "taken@example.com", validation.InvalidNewEmail()},
		{"free", "b@example.com", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := s.RequestEmailChange(users, r, tt.newEmail)
			if tt.want != nil {
				wantFields(t, "RequestEmailChange", err, map[string]*validation.Error{"newEmail": tt.want})
				return
			}
			if err != nil || !m.Send || m.To != tt.newEmail || m.Record != r {
				t.Fatalf("RequestEmailChange = %+v, %v, want a mail to send to %s", m, err, tt.newEmail)
			}
			_, vr, claims, err := s.VerifyToken(m.Token, TokenEmailChange)
			if err != nil || vr.ID != r.ID || claims.Email != r.Email || claims.NewEmail != tt.newEmail || *claims.Exp != clk.t.Add(1800*time.Second).Unix() {
				t.Errorf("token: %+v, %v", claims, err)
			}
		})
	}
}

// TestConfirmEmailChange: both fields checked in PocketBase's order, the
// password with one bcrypt check whether or not the token named a record,
// then the change, once.
func TestConfirmEmailChange(t *testing.T) {
	s, clk, _ := newTestStore(t)
	users, _ := s.Collection(UsersName)
	r := signUp(t, s, "a@example.com", "password1")
	signUp(t, s, "taken@example.com", "password1")
	other, err := s.CreateCollection(input(t, `{"name":"members","type":"auth"}`))
	if err != nil {
		t.Fatal(err)
	}
	member, err := s.CreateRecord(t.Context(), other, RecordInput{Values: map[string]any{"email": "m@example.com", "password": "password1", "passwordConfirm": "password1"}})
	if err != nil {
		t.Fatal(err)
	}
	token, _ := s.NewEmailChangeToken(users, r, "b@example.com")
	taken, _ := s.NewEmailChangeToken(users, r, "taken@example.com")
	noNewEmail, _ := s.NewEmailChangeToken(users, r, "")
	memberToken, _ := s.NewEmailChangeToken(other, member, "b@example.com")
	expired := signWith(t, Claims{CollectionID: users.ID, Email: r.Email, NewEmail: "b@example.com", ID: r.ID, Exp: ptr(clk.t.Unix()), Type: TokenEmailChange},
		string(signingKey(users, r, TokenEmailChange)))
	type fields = map[string]*validation.Error
	for _, tt := range []struct {
		name   string
		in     EmailChange
		want   fields // nil: changed
		checks int64  // bcrypt checks expected
	}{
		{"nothing", EmailChange{}, fields{"token": validation.Required(), "password": validation.Required()}, 0},
		{"does not parse, wrong password", EmailChange{"not a token", "password2"},
			fields{"token": validation.TokenMissingNewEmail(), "password": validation.InvalidPassword()}, 1},
		{"no newEmail claim", EmailChange{noNewEmail, "password1"}, fields{"token": validation.TokenMissingNewEmail(), "password": validation.InvalidPassword()}, 1},
		{"new email taken, before the signature", EmailChange{taken[:len(taken)-2] + flip(taken[len(taken)-2:]), "password1"},
			fields{"token": validation.ExistingTokenEmail("taken@example.com"), "password": validation.InvalidPassword()}, 1},
		{"expired", EmailChange{expired, "password1"}, fields{"token": validation.InvalidToken(), "password": validation.InvalidPassword()}, 1},
		{"another collection", EmailChange{memberToken, "password1"}, fields{"token": validation.TokenCollectionMismatch(), "password": validation.InvalidPassword()}, 1},
		{"password over 100 bytes", EmailChange{token, strings.Repeat("p", 101)}, fields{"password": validation.LengthOutOfRange(1, 100)}, 0},
		{"wrong password", EmailChange{token, "password2"}, fields{"password": validation.InvalidPassword()}, 1},
		{"right", EmailChange{token, "password1"}, nil, 1},
		{"used up", EmailChange{token, "password1"}, fields{"token": validation.ExistingTokenEmail("b@example.com"), "password": validation.InvalidPassword()}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := s.hasher.Checks()
			n, err := s.ConfirmEmailChange(t.Context(), users, tt.in)
			if got := s.hasher.Checks() - before; got != tt.checks {
				t.Errorf("%d bcrypt checks, want %d", got, tt.checks)
			}
			if tt.want != nil {
				wantFields(t, "ConfirmEmailChange", err, tt.want)
				return
			}
			if err != nil || n.Email != "b@example.com" || !n.Verified {
				t.Errorf("ConfirmEmailChange = %+v, %v, want the email changed", n, err)
			}
		})
	}
}
