package authn

import (
	"context"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
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
