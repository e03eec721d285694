package authn

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"strongbox/authn/validation"
)

// TestFlowTokenStrictness: a flow token verifies only as its own type, for
// its own record, with its own secret, before its exp, untampered, and not
// after the record's token key rotated.
func TestFlowTokenStrictness(t *testing.T) {
	s, clk, _ := newTestStore(t)
	users, _ := s.Collection(UsersName)
	su, _ := s.Collection(SuperusersName)
	r := signUp(t, s, "a@example.com", "password1")
	other, err := s.CreateCollection(input(t, `{"name":"members","type":"auth"}`))
	if err != nil {
		t.Fatal(err)
	}
	// A record of another collection with the same id and token key.
	twin := *r
	twin.CollectionID = other.ID

	verify, _ := s.NewVerificationToken(users, r)
	reset, _ := s.NewPasswordResetToken(users, r)
	change, _ := s.NewEmailChangeToken(users, r, "b@example.com")
	forged, _ := Sign(Claims{CollectionID: users.ID, Email: r.Email, Exp: ptr(clk.t.Add(time.Hour).Unix()), ID: r.ID, Type: TokenPasswordReset},
		[]byte(r.TokenKey+users.VerificationToken.Secret)) // the secret of another type
	otherCol, _ := s.NewPasswordResetToken(other, &twin)
	noExp, _ := Sign(Claims{CollectionID: users.ID, Email: r.Email, ID: r.ID, Type: TokenPasswordReset}, signingKey(users, r, TokenPasswordReset))
	tampered := reset[:len(reset)-2] + flip(reset[len(reset)-2:])

	tests := []struct {
		name  string
		token string
		typ   TokenType
		err   error
	}{
		{"verification ok", verify, TokenVerification, nil},
		{"reset ok", reset, TokenPasswordReset, nil},
		{"email change ok", change, TokenEmailChange, nil},
		{"verification as reset", verify, TokenPasswordReset, ErrTokenSignature},
		{"reset as email change", reset, TokenEmailChange, ErrTokenSignature},
		{"email change as auth", change, TokenAuth, ErrTokenSignature},
		{"signed with another type's secret", forged, TokenPasswordReset, ErrTokenSignature},
		{"other collection", otherCol, TokenPasswordReset, ErrTokenRecord}, // no such record there
		{"no exp", noExp, TokenPasswordReset, ErrTokenExpired},
		{"tampered", tampered, TokenPasswordReset, ErrTokenSignature},
		{"superusers secret", signWith(t, Claims{CollectionID: su.ID, ID: r.ID, Email: r.Email, Exp: ptr(clk.t.Add(time.Hour).Unix()), Type: TokenVerification}, r.TokenKey+su.VerificationToken.Secret), TokenVerification, ErrTokenRecord},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := s.VerifyToken(tt.token, tt.typ)
			if !errors.Is(err, tt.err) {
				t.Errorf("VerifyToken(%s) = %v, want %v", tt.typ, err, tt.err)
			}
		})
	}

	// Claims and expiry by the injected clock.
	_, _, claims, err := s.VerifyToken(change, TokenEmailChange)
	if err != nil {
		t.Fatal(err)
	}
	if claims.Email != "a@example.com" || claims.NewEmail != "b@example.com" || *claims.Exp != clk.t.Add(1800*time.Second).Unix() {
		t.Errorf("email change claims = %+v", claims)
	}
	_, _, claims, _ = s.VerifyToken(verify, TokenVerification)
	if *claims.Exp != clk.t.Add(259200*time.Second).Unix() {
		t.Errorf("verification exp = %d, want now+3d", *claims.Exp)
	}
	clk.t = clk.t.Add(1800 * time.Second)
	if _, _, _, err := s.VerifyToken(reset, TokenPasswordReset); !errors.Is(err, ErrTokenExpired) {
		t.Errorf("reset token at exp: %v, want ErrTokenExpired", err)
	}
	if _, _, _, err := s.VerifyToken(verify, TokenVerification); err != nil {
		t.Errorf("verification token within its 3 days: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

func signWith(t *testing.T, c Claims, key string) string {
	t.Helper()
	tok, err := Sign(c, []byte(key))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// flip changes the first character of s to another base64url character.
func flip(s string) string {
	if s[0] == 'A' {
		return "B" + s[1:]
	}
	return "A" + s[1:]
}

// TestResetPassword: the new password works, every token of the record
// (the reset token too) dies, the record becomes verified when the token
// went to its current email, and all of it survives a reopen.
func TestResetPassword(t *testing.T) {
	s, clk, path := newTestStore(t)
	users, _ := s.Collection(UsersName)
	r := signUp(t, s, "a@example.com", "password1")
	reset, _ := s.NewPasswordResetToken(users, r)
	auth, _ := s.NewAuthToken(users, r, true, 0)
	_, vr, claims, err := s.VerifyToken(reset, TokenPasswordReset)
	if err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		name, password string
		want           *validation.Error
	}{
		{"too short", "short", validation.MinPassword(8)},
		{"short in runes", "ééé", validation.MinPassword(8)}, // 6 bytes
		{"too long", strings.Repeat("x", 72), validation.MaxPassword(71)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.ResetPassword(t.Context(), users, vr, claims, tt.password)
			ve, ok := errors.AsType[validation.Errors](err)
			if !ok || ve["password"].Error() != tt.want.Error() {
				t.Errorf("ResetPassword(%q) = %v, want password: %v", tt.password, err, tt.want)
			}
		})
	}

	n, err := s.ResetPassword(t.Context(), users, vr, claims, "new-password")
	if err != nil {
		t.Fatal(err)
	}
	if !n.Verified || n.TokenKey == r.TokenKey {
		t.Errorf("after reset: verified=%v, token key rotated=%v", n.Verified, n.TokenKey != r.TokenKey)
	}
	for _, tok := range []struct {
		tok string
		typ TokenType
	}{{reset, TokenPasswordReset}, {auth, TokenAuth}} {
		if _, _, _, err := s.VerifyToken(tok.tok, tok.typ); !errors.Is(err, ErrTokenSignature) {
			t.Errorf("%s token after the reset: %v, want ErrTokenSignature", tok.typ, err)
		}
	}
	// The same verified record a second time (a concurrent confirm) is stale.
	if _, err := s.ResetPassword(t.Context(), users, vr, claims, "other-password"); !errors.Is(err, ErrTokenStale) {
		t.Errorf("second reset with the same token: %v, want ErrTokenStale", err)
	}

	s.Close()
	s = openTestStore(t, path, clk)
	defer s.Close()
	if _, err := s.AuthWithPassword(t.Context(), users, "a@example.com", "", "new-password"); err != nil {
		t.Errorf("login with the new password after reopen: %v", err)
	}
	if got, _ := s.Record(users, r.ID); !got.Verified {
		t.Error("verified lost on reopen")
	}
}

// TestResetPasswordOtherEmail: a reset token for an email the record no
// longer has sets the password but does not verify the record.
func TestResetPasswordOtherEmail(t *testing.T) {
	s, _, _ := newTestStore(t)
	users, _ := s.Collection(UsersName)
	r := signUp(t, s, "a@example.com", "password1")
	n, err := s.ResetPassword(t.Context(), users, r, &Claims{Email: "old@example.com"}, "new-password")
	if err != nil {
		t.Fatal(err)
	}
	if n.Verified {
		t.Error("verified by a token of another email")
	}
}

// TestConfirmVerification is idempotent and durable.
func TestConfirmVerification(t *testing.T) {
	s, clk, path := newTestStore(t)
	users, _ := s.Collection(UsersName)
	r := signUp(t, s, "a@example.com", "password1")
	n, err := s.ConfirmVerification(users, r)
	if err != nil || !n.Verified {
		t.Fatalf("ConfirmVerification = %v, %v", n, err)
	}
	if n.TokenKey != r.TokenKey {
		t.Error("verification rotated the token key")
	}
	again, err := s.ConfirmVerification(users, n)
	if err != nil || again != n {
		t.Errorf("second ConfirmVerification = %p, %v, want the record unchanged", again, err)
	}
	s.Close()
	s = openTestStore(t, path, clk)
	defer s.Close()
	if got, _ := s.Record(users, r.ID); !got.Verified {
		t.Error("verified lost on reopen")
	}
}

// TestChangeEmail sets the email, verifies, rotates the token key, and
// refuses an email another record took meanwhile.
func TestChangeEmail(t *testing.T) {
	s, clk, path := newTestStore(t)
	users, _ := s.Collection(UsersName)
	r := signUp(t, s, "a@example.com", "password1")
	signUp(t, s, "taken@example.com", "password1")
	if _, err := s.ChangeEmail(users, r, "taken@example.com"); !errors.Is(err, ErrEmailTaken) {
		t.Errorf("ChangeEmail to a taken email = %v, want ErrEmailTaken", err)
	}
	n, err := s.ChangeEmail(users, r, "b@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if n.Email != "b@example.com" || !n.Verified || n.TokenKey == r.TokenKey {
		t.Errorf("after change: %+v", n)
	}
	if _, ok := s.FindByEmail(users, "a@example.com"); ok {
		t.Error("old email still found")
	}
	if _, err := s.ChangeEmail(users, r, "c@example.com"); !errors.Is(err, ErrTokenStale) {
		t.Errorf("second change with the same token: %v, want ErrTokenStale", err)
	}
	s.Close()
	s = openTestStore(t, path, clk)
	defer s.Close()
	if got, ok := s.FindByEmail(users, "b@example.com"); !ok || got.ID != r.ID {
		t.Error("new email lost on reopen")
	}
}

func TestCheckPassword(t *testing.T) {
	s, _, _ := newTestStore(t)
	r := signUp(t, s, "a@example.com", "password1")
	for _, tt := range []struct {
		name     string
		rec      *Record
		password string
		want     bool
	}{
		{"right", r, "password1", true},
		{"wrong", r, "password2", false},
		{"no record", nil, "password1", false},
	} {
		if got, err := s.CheckPassword(t.Context(), tt.rec, tt.password); err != nil || got != tt.want {
			t.Errorf("%s: CheckPassword = %v, %v, want %v", tt.name, got, err, tt.want)
		}
	}
}

func TestResendGuard(t *testing.T) {
	var g resendGuard
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	g.mark("a", t0)
	for _, tt := range []struct {
		name string
		key  string
		at   time.Time
		want bool
	}{
		{"same instant", "a", t0, true},
		{"just inside", "a", t0.Add(ResendWindow - time.Nanosecond), true},
		{"window over", "a", t0.Add(ResendWindow), false},
		{"clock went back", "a", t0.Add(-time.Second), false},
		{"other key", "b", t0, false},
	} {
		if got := g.recent(tt.key, tt.at); got != tt.want {
			t.Errorf("%s: recent(%q) = %v, want %v", tt.name, tt.key, got, tt.want)
		}
	}
	g.forget("a")
	if g.recent("a", t0) {
		t.Error("recent after forget")
	}
	// Expired entries are pruned: a steady stream keeps the map small.
	for i := range 10000 {
		g.mark(fmt.Sprint(i), t0.Add(time.Duration(i)*time.Second))
	}
	if n := len(g.sent); n > 2*int(ResendWindow/time.Second)+64 {
		t.Errorf("%d entries kept, want at most about two windows' worth", n)
	}
}
