package authn

import "golang.org/x/crypto/bcrypt"

// maxDecoyCost bounds the cost of the decoy check of an unknown identity
// (see Store.decoyCost) when the Hasher's own cost is lower: a
// collection of hashes at a higher cost (imported ones: PocketBase uses
// 10) lets unknown identities be told from known ones by time, rather
// than have each unknown identity buy seconds of bcrypt (cost 14 is
// about 1.4 s here, and every step doubles it).
const maxDecoyCost = 14

// hashCosts counts the password hashes of a collection's records by their
// bcrypt cost (bcrypt.Cost, which reads it from the hash).
type hashCosts [bcrypt.MaxCost + 1]int

// countHash adds d (1 or -1) to the count of r's hash cost in its
// collection; a hash bcrypt cannot read is not counted. The caller holds
// s.mu for writing.
func (s *Store) countHash(r *Record, d int) {
	cost, err := bcrypt.Cost([]byte(r.PasswordHash))
	if err != nil {
		return
	}
	c := s.hashCosts[r.CollectionID]
	if c == nil {
		c = &hashCosts{}
		s.hashCosts[r.CollectionID] = c
	}
	c[cost] += d
}

// decoyCost is the bcrypt cost of the check a login for an unknown
// identity of c spends, so that its time is that of a known one's: the
// median cost of c's stored hashes (the lower one of an even count), or
// the Hasher's when c has none, and at most maxDecoyCost unless the
// Hasher's own cost is higher. The caller holds s.mu.
func (s *Store) decoyCost(c *Collection) int {
	cost := s.hasher.cost
	if counts := s.hashCosts[c.ID]; counts != nil {
		n := 0
		for _, k := range counts {
			n += k
		}
		seen := 0
		for i, k := range counts {
			if seen += k; n > 0 && seen >= (n+1)/2 {
				cost = i
				break
			}
		}
	}
	if cost > maxDecoyCost && cost > s.hasher.cost {
		cost = max(maxDecoyCost, s.hasher.cost)
	}
	return cost
}
