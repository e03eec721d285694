package authn

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"strongbox/authn/validation"
)

func TestHasher(t *testing.T) {
	h, err := NewHasher(bcrypt.MinCost, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	hash, err := h.Hash(ctx, "password1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		hash, password string
		want           bool
	}{
		{hash, "password1", true},
		{hash, "password2", false},
		{"", "password1", false},
		{"not a hash", "password1", false},
	} {
		if got, err := h.Check(ctx, tt.hash, tt.password); err != nil || got != tt.want {
			t.Errorf("Check(%q, %q) = %v, %v; want %v", tt.hash, tt.password, got, err, tt.want)
		}
	}
	if _, err := NewHasher(3, 1); err == nil {
		t.Errorf("NewHasher(cost 3) succeeded; costs below bcrypt.MinCost must be refused, not clamped")
	}
}

// TestHasherBounded: with every slot taken, a check waits, and gives up
// with ErrBusy when its context ends.
func TestHasherBounded(t *testing.T) {
	h, _ := NewHasher(bcrypt.MinCost, 1)
	h.slots <- struct{}{} // occupy the only slot
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := h.Check(ctx, "", "x"); err != ErrBusy {
		t.Errorf("Check with no free slot = %v, want ErrBusy", err)
	}
	// A full queue refuses at once, whatever the context.
	h.waiting.Store(maxWaitingPerSlot)
	if _, err := h.Check(context.Background(), "", "x"); err != ErrBusy {
		t.Errorf("Check with a full queue = %v, want ErrBusy", err)
	}
	h.waiting.Store(0)
	<-h.slots
	if _, err := h.Check(context.Background(), "", "x"); err != nil {
		t.Errorf("Check with a free slot: %v", err)
	}
}

// BenchmarkBcryptCompare is the raw bcrypt throughput a login can reach at
// the production cost: run with -cpu 2 to compare with auth-with-password
// logins/s on two cores.
func BenchmarkBcryptCompare(b *testing.B) {
	hash, err := bcrypt.GenerateFromPassword([]byte("password1"), DefaultCost)
	if err != nil {
		b.Fatal(err)
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			bcrypt.CompareHashAndPassword(hash, []byte("password1"))
		}
	})
}

// BenchmarkVerifyToken measures the per-request cost of authenticating a
// request by its token.
func BenchmarkVerifyToken(b *testing.B) {
	h, _ := NewHasher(bcrypt.MinCost, 1)
	s, err := Open(b.TempDir()+"/auth.journal", Options{Hasher: h})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	users, _ := s.Collection(UsersName)
	r, err := s.CreateRecord(context.Background(), users, RecordInput{Values: map[string]any{"email": "a@example.com", "password": "password1", "passwordConfirm": "password1"}})
	if err != nil {
		b.Fatal(err)
	}
	tok, _ := s.NewAuthToken(users, r, true, 0)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, err := s.VerifyToken(tok, TokenAuth); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPasswordRule: every path that sets a password (sign-up, a manager's
// update, a password reset) applies the one rule of PocketBase v0.31.0's
// password field, with its answers, as its binary gives them: characters
// are counted for the min and max, and a password over bcrypt's 72 bytes is
// "Invalid value." before any length is.
func TestPasswordRule(t *testing.T) {
	s, _, _ := newTestStore(t)
	users, _ := s.Collection(UsersName)
	r := signUp(t, s, "a@example.com", "password1")
	tests := []struct {
		name, password string
		want           *validation.Error // nil: accepted
	}{
		{"empty", "", validation.Required()},
		{"7 characters", "passwor", validation.MinPassword(8)},
		{"8 characters", "password", nil},
		{"3 characters in 6 bytes", "ééé", validation.MinPassword(8)},
		{"7 characters in 14 bytes", strings.Repeat("é", 7), validation.MinPassword(8)},
		{"71 characters", strings.Repeat("a", 71), nil},
		{"72 characters", strings.Repeat("a", 72), validation.MaxPassword(71)},
		{"71 characters in 72 bytes", strings.Repeat("a", 70) + "é", nil},
		{"36 characters in 72 bytes", strings.Repeat("é", 36), nil},
		{"73 bytes", strings.Repeat("a", 73), validation.InvalidValue()},
		{"40 characters in 80 bytes", strings.Repeat("é", 40), validation.InvalidValue()},
		{"300 bytes", strings.Repeat("a", 300), validation.InvalidValue()},
	}
	var n int
	paths := []struct {
		name string
		set  func(t *testing.T, password string) error
	}{
		{"sign-up", func(t *testing.T, password string) error {
			n++
			_, err := s.CreateRecord(t.Context(), users, RecordInput{Values: map[string]any{
				"email": fmt.Sprintf("u%d@example.com", n), "password": password, "passwordConfirm": password,
			}})
			return err
		}},
		{"update", func(t *testing.T, password string) error {
			_, err := s.UpdateRecord(t.Context(), users, r.ID, RecordInput{Manager: true, Values: map[string]any{
				"password": password, "passwordConfirm": password,
			}})
			return err
		}},
		{"reset", func(t *testing.T, password string) error {
			cur, _ := s.Record(users, r.ID)
			_, err := s.ResetPassword(t.Context(), users, cur, nil, password)
			return err
		}},
	}
	for _, p := range paths {
		for _, tt := range tests {
			if tt.password == "" && p.name != "reset" {
				continue // an empty password is passwordFields', before the rule
			}
			t.Run(p.name+"/"+tt.name, func(t *testing.T) {
				if got := checkPassword(users, tt.password); !sameError(got, tt.want) {
					t.Errorf("checkPassword(%q) = %v, want %v", tt.password, got, tt.want)
				}
				err := p.set(t, tt.password)
				ve, _ := errors.AsType[validation.Errors](err)
				if tt.want == nil {
					if err != nil {
						t.Errorf("%s with %q: %v, want it accepted", p.name, tt.password, err)
					}
					return
				}
				got, _ := ve["password"].(*validation.Error)
				if !sameError(got, tt.want) {
					t.Errorf("%s with %q: %v, want password: %v", p.name, tt.password, err, tt.want)
				}
			})
		}
	}
}

func sameError(a, b *validation.Error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Code == b.Code && a.Message == b.Message
}
