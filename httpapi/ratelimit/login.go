package ratelimit

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// Policy sets the limits of the password-login throttle. Only failed
// attempts (a wrong password or an unknown identity) count towards a
// limit; an attempt is refused as failed too often only once failures
// reached it, never because of attempts still being checked or because
// right passwords were tried. Each counter is a fixed window that opens at
// its first failure.
//
// Three counters apply to every attempt, each keyed by the collection and
// the lowercased identity and/or the client (see ClientKey):
//
//   - PerPair failures of one identity from one client lock that pair: the
//     guesser is stopped, and the real user, from any other client, is not.
//   - PerClient failures from one client, whatever the identity, lock that
//     client for every identity it has not logged in from within KnownFor:
//     credential stuffing from one address is stopped, and the users
//     behind a shared address (NAT, a proxy) who logged in before keep
//     working.
//   - Failures of one identity from all clients slow it down, from every
//     client where it has not logged in within KnownFor: past SlowAfter
//     failures, its checks start at most one per SlowEvery; past
//     PerIdentity (the ceiling; NIST SP 800-63B allows up to 100
//     consecutive failures per account) it is locked there. A guesser
//     spread over many addresses is held to a trickle, and the real user
//     still logs in from a new device, after a short wait, until the
//     ceiling.
//
// Attempts in flight take a place in each counter that applies until they
// end, so that concurrent requests cannot try more passwords than the
// limits allow while earlier ones are being checked: a counter lets as
// many through as its limit minus its failures. Attempts beyond that wait
// their turn, first come first served, for at most MaxWait, then are
// refused as a rate limit, not as failed.
//
// A successful login clears its pair's counter and marks the pair known.
type Policy struct {
	Window      time.Duration // length of each counter's window
	PerPair     int           // failures of one identity from one client
	PerClient   int           // failures from one client, all identities
	SlowAfter   int           // failures of one identity from all clients before it is slowed down
	SlowEvery   time.Duration // the spacing of a slowed identity's checks
	PerIdentity int           // failures of one identity from all clients: the ceiling
	KnownFor    time.Duration // how long a successful login exempts its pair from the last two
	MaxWait     time.Duration // how long an attempt waits for its turn at most
	MaxKeys     int           // bound on counters, and on known pairs
}

// DefaultPolicy is the throttle strongbox applies unless told otherwise:
// per 15 minutes, 5 failures per identity and client and 50 per client
// lock; past 10 failures of an identity, its checks are spaced a second
// apart, and past 100 it is locked; a login exempts its pair from the
// last two for 30 days. An attempt waits at most 5 seconds for its turn.
// At most 50,000 counters and 50,000 known pairs are kept (about 150
// bytes each, as TestGuardBound measures: some 15 MB at most).
var DefaultPolicy = Policy{
	Window:      15 * time.Minute,
	PerPair:     5,
	PerClient:   50,
	SlowAfter:   10,
	SlowEvery:   time.Second,
	PerIdentity: 100,
	KnownFor:    30 * 24 * time.Hour,
	MaxWait:     5 * time.Second,
	MaxKeys:     50_000,
}

// Guard is the password-login throttle. It is safe for concurrent use.
// It never sees passwords: only the collection, the identity and the client.
type Guard struct {
	p     Policy
	now   func() time.Time
	after func(time.Duration) (<-chan time.Time, func() bool) // timers of the waits (tests fake them)
	mu    sync.Mutex
	fails *table[failures]  // pair, identity and client counters
	known *table[time.Time] // pair → end of its exemption
	lines map[key]*line     // counters with attempts in flight or waiting
	dirty []key             // counters whose lines may move (see settle)
}

// failures is one counter: its failures since start; for an identity,
// next is the earliest start of its next slowed check.
type failures struct {
	start, next time.Time
	count       int
}

// line is what a counter has in flight and waiting. Its memory is bounded
// by the requests being served, not by MaxKeys.
type line struct {
	inFlight int
	queue    []*Attempt // waiting, first come first
}

// NewGuard returns a Guard with policy p and clock now (time.Now if nil).
func NewGuard(p Policy, now func() time.Time) *Guard {
	if now == nil {
		now = time.Now
	}
	return &Guard{p: p, now: now, after: realAfter, fails: newTable[failures](p.MaxKeys),
		known: newTable[time.Time](p.MaxKeys), lines: map[key]*line{}}
}

func realAfter(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}

// Refusal says why Begin did not let an attempt through.
type Refusal struct {
	// Locked is true when failures reached a limit; false when the
	// attempt's turn did not come within Policy.MaxWait (or its context
	// ended first): a rate limit, which says nothing about failures.
	Locked bool
	// RetryAfter is how long until trying again is worth it.
	RetryAfter time.Duration
}

// Attempt is a login attempt the Guard let through. Exactly one of its
// methods records its outcome; later calls do nothing.
type Attempt struct {
	g *Guard
	// keys are its counters in the order it takes its places: pair,
	// client, identity. It needs the first need of them (1 for a known
	// pair) and holds the first held.
	keys       [3]key
	need, held int
	queued     bool      // waiting in the line of keys[held]
	deadline   time.Time // end of its wait for a turn
	startAt    time.Time // when a slowed check may start
	ready      chan struct{}
	refusal    *Refusal // set with ready closed when refused
	decided    bool     // let through or refused
	ended      bool
}

const (
	pairStep = iota
	clientStep
	identityStep
)

func keysOf(collection, identity, client string) [3]key {
	low := strings.ToLower(identity)
	return [3]key{hashKey("pair", collection, low, client), hashKey("client", client), hashKey("identity", collection, low)}
}

// Begin asks to try a password for identity in collection from client.
// Call it before doing any password hashing. It returns the attempt once
// it may go ahead, after waiting its turn if the attempts in flight fill
// the places the limits leave, or a Refusal. The wait ends at
// Policy.MaxWait or when ctx ends, with a rate-limit refusal: never is an
// attempt let through early.
func (g *Guard) Begin(ctx context.Context, collection, identity, client string) (*Attempt, *Refusal) {
	a := &Attempt{g: g, keys: keysOf(collection, identity, client), need: 3, ready: make(chan struct{})}
	now := g.now()
	a.deadline = now.Add(g.p.MaxWait)
	g.mu.Lock()
	g.advance(a, now)
	g.settle()
	decided := a.decided
	g.mu.Unlock()
	if !decided {
		timer, stop := g.after(g.p.MaxWait)
		select {
		case <-a.ready:
		case <-timer:
			g.giveUp(a)
		case <-ctx.Done():
			g.giveUp(a)
		}
		stop()
	}
	if a.refusal != nil {
		return nil, a.refusal
	}
	if d := a.startAt.Sub(g.now()); d > 0 {
		timer, stop := g.after(d)
		defer stop()
		select {
		case <-timer:
		case <-ctx.Done():
			a.Abandon()
			return nil, &Refusal{RetryAfter: d}
		}
	}
	return a, nil
}

// turnWait is the Retry-After of an attempt whose turn did not come:
// attempts in flight end within about a bcrypt computation.
const turnWait = time.Second

// giveUp ends the wait of a that did not get its turn in time, unless it
// was decided meanwhile.
func (g *Guard) giveUp(a *Attempt) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !a.decided {
		g.refuse(a, &Refusal{RetryAfter: turnWait})
		g.settle()
	}
}

// counter returns the failures of k in its current window, and its end.
func (g *Guard) counter(k key, now time.Time) (*failures, int, time.Time) {
	if w, ok := g.fails.get(k); ok && now.Before(w.start.Add(g.p.Window)) {
		return w, w.count, w.start.Add(g.p.Window)
	}
	return nil, 0, now
}

func (g *Guard) limit(step int) int {
	return [...]int{g.p.PerPair, g.p.PerClient, g.p.PerIdentity}[step]
}

func (g *Guard) line(k key) *line {
	l := g.lines[k]
	if l == nil {
		l = &line{}
		g.lines[k] = l
	}
	return l
}

// advance takes a's places from the first it lacks, as far as it can: it
// decides a (let through, or refused) or leaves it waiting in the line of
// the counter it lacks. The caller holds g.mu.
func (g *Guard) advance(a *Attempt, now time.Time) {
	for a.held < a.need {
		k := a.keys[a.held]
		w, count, end := g.counter(k, now)
		if count >= g.limit(a.held) {
			g.refuse(a, &Refusal{Locked: true, RetryAfter: end.Sub(now)})
			return
		}
		l := g.line(k)
		first := len(l.queue) == 0 || l.queue[0] == a
		if !first || l.inFlight >= g.limit(a.held)-count {
			if !a.queued {
				a.queued = true
				l.queue = append(l.queue, a)
			}
			return
		}
		if a.held == identityStep && w != nil && count >= g.p.SlowAfter {
			start := now
			if w.next.After(now) {
				start = w.next
			}
			if start.After(a.deadline) {
				g.refuse(a, &Refusal{RetryAfter: start.Sub(now)})
				return
			}
			w.next, a.startAt = start.Add(g.p.SlowEvery), start
		}
		if a.queued {
			a.queued = false
			l.queue = l.queue[1:]
		}
		l.inFlight++
		a.held++
		if a.held == 1 && g.isKnown(a.keys[pairStep], now) {
			a.need = 1
		}
	}
	a.decided = true
	close(a.ready)
}

// isKnown reports whether pair logged in within Policy.KnownFor.
func (g *Guard) isKnown(pair key, now time.Time) bool {
	until, ok := g.known.get(pair)
	return ok && now.Before(*until)
}

// refuse decides a as refused, giving back its places (see release). The
// caller holds g.mu.
func (g *Guard) refuse(a *Attempt, r *Refusal) {
	a.refusal, a.decided = r, true
	close(a.ready)
	g.release(a)
}

// release gives back a's places and its place in a line; settle then
// lets the attempts waiting in those lines advance. The caller holds g.mu.
func (g *Guard) release(a *Attempt) {
	if a.queued {
		l := g.lines[a.keys[a.held]]
		l.queue = slices.DeleteFunc(l.queue, func(b *Attempt) bool { return b == a })
		a.queued = false
	}
	for _, k := range a.keys[:a.held] {
		g.lines[k].inFlight--
	}
	a.held = 0
	g.dirty = append(g.dirty, a.keys[:]...)
}

// settle lets the first attempts waiting in the dirty lines advance while
// they can, and drops the lines left empty. Attempts it refuses make more
// lines dirty, which it serves in turn. The caller holds g.mu.
func (g *Guard) settle() {
	now := g.now()
	for len(g.dirty) > 0 {
		k := g.dirty[len(g.dirty)-1]
		g.dirty = g.dirty[:len(g.dirty)-1]
		l := g.lines[k]
		if l == nil {
			continue
		}
		for len(l.queue) > 0 {
			head := l.queue[0]
			g.advance(head, now)
			if head.queued && head.keys[head.held] == k {
				break // still first in this line, still waiting
			}
		}
		if l.inFlight == 0 && len(l.queue) == 0 {
			delete(g.lines, k)
		}
	}
}

// end marks the attempt ended; it reports false if it already was. The
// caller holds g.mu.
func (a *Attempt) end() bool {
	if a.ended {
		return false
	}
	a.ended = true
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
	for _, k := range a.keys {
		w, ok := g.fails.get(k)
		if !ok || !now.Before(w.start.Add(g.p.Window)) {
			w = g.fails.put(k, failures{start: now})
		}
		w.count++
	}
	g.release(a)
	g.settle()
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
	g.fails.delete(a.keys[pairStep])
	g.known.put(a.keys[pairStep], now.Add(g.p.KnownFor))
	g.release(a)
	g.settle()
}

// Abandon ends an attempt that says nothing about the credentials (the
// server was busy, the request was cancelled): nothing is counted.
func (a *Attempt) Abandon() {
	g := a.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if a.end() {
		g.release(a)
		g.settle()
	}
}

// Len returns the number of counters and of known pairs held.
func (g *Guard) Len() (counters, known int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.fails.len(), g.known.len()
}
