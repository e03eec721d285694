package ratelimit

import (
	"strings"
	"sync"
	"time"
)

// Policy sets the limits of the password-login throttle. Only failed
// attempts (a wrong password or an unknown identity) count, and attempts
// still being checked until they end; attempts the throttle refuses do
// not, so a client that keeps trying is not held beyond the window. Each counter is a fixed window that opens at its
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
	p       Policy
	now     func() time.Time
	mu      sync.Mutex
	fails   *table[window]    // pair, identity and client counters
	known   *table[time.Time] // pair → end of its exemption
	pending map[key]int       // attempts begun and not yet ended, per counter
}

// NewGuard returns a Guard with policy p and clock now (time.Now if nil).
func NewGuard(p Policy, now func() time.Time) *Guard {
	if now == nil {
		now = time.Now
	}
	return &Guard{p: p, now: now, fails: newTable[window](p.MaxKeys), known: newTable[time.Time](p.MaxKeys),
		pending: map[key]int{}}
}

// Attempt is a login attempt the Guard let through. Exactly one of its
// methods records its outcome; later calls do nothing.
type Attempt struct {
	g                      *Guard
	pair, identity, client key
	ended                  bool
}

func keysOf(collection, identity, client string) (pair, id, cl key) {
	low := strings.ToLower(identity)
	return hashKey("pair", collection, low, client), hashKey("identity", collection, low), hashKey("client", client)
}

// Begin asks to try a password for identity in collection from client.
// Call it before doing any password hashing. When the attempt may not go
// ahead, it returns nil and how long until it may. Attempts in flight count
// as failures until they end, so that concurrent requests cannot try more
// passwords than the limits allow while earlier ones are being checked.
func (g *Guard) Begin(collection, identity, client string) (*Attempt, time.Duration) {
	a := &Attempt{g: g}
	a.pair, a.identity, a.client = keysOf(collection, identity, client)
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	wait := g.over(a.pair, g.p.PerPair, now)
	if until, ok := g.known.get(a.pair); wait == 0 && !(ok && now.Before(*until)) {
		wait = max(g.over(a.identity, g.p.PerIdentity, now), g.over(a.client, g.p.PerClient, now))
	}
	if wait > 0 {
		return nil, wait
	}
	for _, k := range []key{a.pair, a.identity, a.client} {
		g.pending[k]++
	}
	return a, 0
}

// inFlightWait is the wait reported when only attempts still in flight
// reach a limit: they end within about a bcrypt computation.
const inFlightWait = time.Second

// over returns how long counter k, with the attempts in flight, stays at or
// over limit, or 0 if it is under.
func (g *Guard) over(k key, limit int, now time.Time) time.Duration {
	count, end := 0, now
	if w, ok := g.fails.get(k); ok && now.Before(w.start.Add(g.p.Window)) {
		count, end = w.count, w.start.Add(g.p.Window)
	}
	switch {
	case count >= limit:
		return end.Sub(now)
	case count+g.pending[k] >= limit:
		return inFlightWait
	}
	return 0
}

// end releases the attempt's reservations; it reports false if the attempt
// had already ended. The caller holds g.mu.
func (a *Attempt) end() bool {
	if a.ended {
		return false
	}
	a.ended = true
	for _, k := range []key{a.pair, a.identity, a.client} {
		if a.g.pending[k]--; a.g.pending[k] <= 0 {
			delete(a.g.pending, k)
		}
	}
	return true
}

// Failed records that the attempt failed (wrong password or unknown
// identity): each of its counters counts one failure.
func (a *Attempt) Failed() {
	g := a.g
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if !a.end() {
		return
	}
	for _, k := range []key{a.pair, a.identity, a.client} {
		w, ok := g.fails.get(k)
		if !ok || !now.Before(w.start.Add(g.p.Window)) {
			w = g.fails.put(k, window{start: now})
		}
		w.count++
	}
}

// Succeeded records a successful login: the pair's failures are forgotten
// and the pair is known for Policy.KnownFor.
func (a *Attempt) Succeeded() {
	g := a.g
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if !a.end() {
		return
	}
	g.fails.delete(a.pair)
	g.known.put(a.pair, now.Add(g.p.KnownFor))
}

// Abandon ends an attempt that says nothing about the credentials (the
// server was busy, the request was cancelled): nothing is counted.
func (a *Attempt) Abandon() {
	a.g.mu.Lock()
	defer a.g.mu.Unlock()
	a.end()
}

// Len returns the number of counters and of known pairs held.
func (g *Guard) Len() (counters, known int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.fails.len(), g.known.len()
}
