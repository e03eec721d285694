package authn

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// hashAt returns a bcrypt hash of password at cost; costs above 6 are
// made from a cost-4 hash by rewriting the cost (bcrypt.Cost reads it;
// nobody checks these passwords).
func hashAt(t *testing.T, password string, cost int) string {
	t.Helper()
	c := min(cost, 6)
	h, err := bcrypt.GenerateFromPassword([]byte(password), c)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Replace(string(h), fmt.Sprintf("$%02d$", c), fmt.Sprintf("$%02d$", cost), 1)
}

// TestDecoyCost: a login for an unknown identity spends its bcrypt
// computation at the median cost of the collection's stored hashes (the
// Hasher's when it has none), kept as records are imported, re-hashed
// and deleted and rebuilt when the journal is replayed: imported
// PocketBase hashes (cost 10) under a server at cost 4 no longer tell
// known identities from unknown ones by time.
func TestDecoyCost(t *testing.T) {
	s, clk, path := newTestStore(t)
	c := importMembers(t, s)
	var seen []int
	s.hasher.onDecoy = func(cost int) { seen = append(seen, cost) }
	unknown := func() int {
		t.Helper()
		seen = nil
		if _, err := s.AuthWithPassword(t.Context(), c, "nobody@example.com", "", "whatever-password"); !errors.Is(err, ErrAuthFailed) {
			t.Fatalf("unknown identity: %v, want ErrAuthFailed", err)
		}
		if len(seen) != 1 {
			t.Fatalf("unknown identity ran %d decoys, want 1", len(seen))
		}
		return seen[0]
	}
	at := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	imp := func(id string, cost int) {
		t.Helper()
		r := &Record{ID: id, Email: id + "@example.com", PasswordHash: hashAt(t, "pw-"+id, cost),
			TokenKey: "tk_" + id + "_0123456789012345678901234567", Created: at, Updated: at}
		if skips, err := s.ImportRecords(c, []*Record{r}); err != nil || len(skips) > 0 {
			t.Fatalf("import %s: %v %v", id, skips, err)
		}
	}
	if got := unknown(); got != bcrypt.MinCost {
		t.Errorf("no records: decoy at cost %d, want the Hasher's %d", got, bcrypt.MinCost)
	}
	imp("cost5a000000001", 5)
	imp("cost6a000000001", 6)
	imp("cost6b000000001", 6)
	if got := unknown(); got != 6 {
		t.Errorf("hashes at 5, 6, 6: decoy at cost %d, want 6", got)
	}
	if err := s.DeleteRecord(c, "cost6b000000001"); err != nil {
		t.Fatal(err)
	}
	if got := unknown(); got != 5 {
		t.Errorf("hashes at 5, 6: decoy at cost %d, want the lower median 5", got)
	}
	imp("cost6c000000001", 6)
	imp("cost6d000000001", 6)

	// A replayed journal counts the same.
	s.Close()
	s = openTestStore(t, path, clk)
	t.Cleanup(func() { s.Close() })
	s.hasher.onDecoy = func(cost int) { seen = append(seen, cost) }
	c, _ = s.Collection("members")
	if got := unknown(); got != 6 {
		t.Errorf("after the replay, hashes at 5, 6, 6, 6: decoy at cost %d, want 6", got)
	}
	// A new password (at the Hasher's cost) moves a record's count.
	for _, id := range []string{"cost6a000000001", "cost6c000000001"} {
		r, _ := s.Record(c, id)
		if _, err := s.ResetPassword(context.Background(), c, r, nil, "new-password-1"); err != nil {
			t.Fatal(err)
		}
	}
	if got := unknown(); got != 4 {
		t.Errorf("hashes at 4, 4, 5, 6: decoy at cost %d, want 4", got)
	}
	// The users collection keeps its own count.
	users, _ := s.Collection(UsersName)
	seen = nil
	s.AuthWithPassword(t.Context(), users, "nobody@example.com", "", "whatever-password")
	if len(seen) != 1 || seen[0] != bcrypt.MinCost {
		t.Errorf("users (no records): decoys %v, want one at the Hasher's cost", seen)
	}
}

// TestDecoyCostBound: a collection of hashes dearer than maxDecoyCost
// gets decoys at maxDecoyCost, unless the Hasher's own cost is higher.
func TestDecoyCostBound(t *testing.T) {
	tests := []struct {
		name         string
		hasher, hash int
		want         int
	}{
		{"below the bound", 4, 12, 12},
		{"at the bound", 4, maxDecoyCost, maxDecoyCost},
		{"above the bound", 4, 20, maxDecoyCost},
		{"the hasher's cost above the bound", 16, 20, 16},
		{"cheaper than the hasher", 10, 4, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Store{hasher: &Hasher{cost: tt.hasher}, hashCosts: map[string]*hashCosts{}}
			c := &Collection{ID: "pbc_1"}
			s.countHash(&Record{CollectionID: c.ID, PasswordHash: hashAt(t, "x", tt.hash)}, 1)
			if got := s.decoyCost(c); got != tt.want {
				t.Errorf("decoyCost with a Hasher at %d and a hash at %d = %d, want %d", tt.hasher, tt.hash, got, tt.want)
			}
		})
	}
}
