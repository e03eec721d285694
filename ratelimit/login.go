package ratelimit

import (
	"strings"
	"sync"
	"time"
)

// Policy sets the limits of the password-login throttle. Only failed
// attempts (a wrong password or an unknown identity) count; attempts the
// throttle refuses do not, so a client that keeps trying is not held
// beyond the window. Each counter is a fixed window that opens at its
// first failure.
//
// Three counters apply to every attempt, each keyed by the collection and
// the lowercased identity and/or the client (see ClientKey):
//
//   - PerPair failures of one identity from one client block that pair: the
//     guesser is stopped, and the real user, from any other client, is not.
//   - PerIdentity failures of one identity from all clients block it from
//     every client except those where it logged in successfully within
//     KnownFor: a guesser spread over many addresses is stopped, and cannot
//     lock the real user out of a device they use.
//   - PerClient failures from one client, whatever the identity, block that
//     client for every identity it has not logged in from within KnownFor:
//     credential stuffing from one address is slowed, and the users behind
//     a shared address (NAT, a proxy) who logged in before keep working.
//
// A successful login clears its pair's counter and marks the pair known.
type Policy struct {
	Window      time.Duration // length of each counter's window
	PerPair     int           // failures of one identity from one client
	PerIdentity int           // failures of one identity from all clients
	PerClient   int           // failures from one client, all identities
	KnownFor    time.Duration // how long a successful login exempts its pair
	MaxKeys     int           // bound on counters, and on known pairs
}

// DefaultPolicy is the throttle strongbox applies unless told otherwise:
// 5 failures per identity and client, 20 per identity and 50 per client,
// each per 15 minutes; a login exempts its pair from the last two for 30
// days. At most 50,000 counters and 50,000 known pairs are kept (about
// 130 bytes each, as TestGuardBound measures: some 13 MB at most).
var DefaultPolicy = Policy{
	Window:      15 * time.Minute,
	PerPair:     5,
	PerIdentity: 20,
	PerClient:   50,
	KnownFor:    30 * 24 * time.Hour,
	MaxKeys:     50_000,
}

// Guard is the password-login throttle. It is safe for concurrent use.
// It never sees passwords: only the collection, the identity and the client.
type Guard struct {
	p     Policy
	now   func() time.Time
	mu    sync.Mutex
	fails *table[window]    // pair, identity and client counters
	known *table[time.Time] // pair → end of its exemption
}

// NewGuard returns a Guard with policy p and clock now (time.Now if nil).
func NewGuard(p Policy, now func() time.Time) *Guard {
	if now == nil {
		now = time.Now
	}
	return &Guard{p: p, now: now, fails: newTable[window](p.MaxKeys), known: newTable[time.Time](p.MaxKeys)}
}

type loginKeys struct{ pair, identity, client key }

func keysOf(collection, identity, client string) loginKeys {
	id := strings.ToLower(identity)
	return loginKeys{
		pair:     hashKey("pair", collection, id, client),
		identity: hashKey("identity", collection, id),
		client:   hashKey("client", client),
	}
}

// Check reports whether a login attempt for identity in collection from
// client may go ahead. When it may not, wait is how long until it may.
// Call it before doing any password hashing.
func (g *Guard) Check(collection, identity, client string) (ok bool, wait time.Duration) {
	k := keysOf(collection, identity, client)
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if w := g.blocked(k.pair, g.p.PerPair, now); w > 0 {
		return false, w
	}
	if until, ok := g.known.get(k.pair); ok && now.Before(*until) {
		return true, 0
	}
	wait = max(g.blocked(k.identity, g.p.PerIdentity, now), g.blocked(k.client, g.p.PerClient, now))
	return wait == 0, wait
}

// blocked returns how long the counter k stays at or over limit, or 0.
func (g *Guard) blocked(k key, limit int, now time.Time) time.Duration {
	w, ok := g.fails.get(k)
	if !ok {
		return 0
	}
	end := w.start.Add(g.p.Window)
	if w.count < limit || !now.Before(end) {
		return 0
	}
	return end.Sub(now)
}

// Failed records a failed attempt (wrong password or unknown identity).
func (g *Guard) Failed(collection, identity, client string) {
	k := keysOf(collection, identity, client)
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range []key{k.pair, k.identity, k.client} {
		w, ok := g.fails.get(c)
		if !ok || !now.Before(w.start.Add(g.p.Window)) {
			w = g.fails.put(c, window{start: now})
		}
		w.count++
	}
}

// Succeeded records a successful login: the pair's failures are forgotten
// and the pair is known for Policy.KnownFor.
func (g *Guard) Succeeded(collection, identity, client string) {
	k := keysOf(collection, identity, client)
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.fails.delete(k.pair)
	g.known.put(k.pair, now.Add(g.p.KnownFor))
}

// Len returns the number of counters and of known pairs held.
func (g *Guard) Len() (counters, known int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.fails.len(), g.known.len()
}
