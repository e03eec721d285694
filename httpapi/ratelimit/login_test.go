package ratelimit

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// testPolicy is DefaultPolicy with small numbers, and no spacing of slowed
// checks (TestGuardScenarios has DefaultPolicy's).
var testPolicy = Policy{Window: 15 * time.Minute, PerPair: 3, PerClient: 8, SlowAfter: 3, PerIdentity: 5,
	KnownFor: time.Hour, MaxWait: 5 * time.Second, MaxKeys: 1000}

func TestGuard(t *testing.T) {
	type step struct {
		op             string // "fail", "ok" (a successful login), "check", "+" (advance the clock by d)
		identity, from string
		d              time.Duration
		allowed        bool // for check
	}
	fail := func(id, from string) step { return step{op: "fail", identity: id, from: from} }
	ok := func(id, from string) step { return step{op: "ok", identity: id, from: from} }
	allowed := func(id, from string) step { return step{op: "check", identity: id, from: from, allowed: true} }
	refused := func(id, from string) step { return step{op: "check", identity: id, from: from} }
	wait := func(d time.Duration) step { return step{op: "+", d: d} }
	repeat := func(n int, s step) []step {
		out := make([]step, n)
		for i := range out {
			out[i] = s
		}
		return out
	}
	cat := func(parts ...any) []step {
		var out []step
		for _, p := range parts {
			switch p := p.(type) {
			case step:
				out = append(out, p)
			case []step:
				out = append(out, p...)
			}
		}
		return out
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"pair blocked at PerPair", cat(repeat(2, fail("u", "A")), allowed("u", "A"), fail("u", "A"), refused("u", "A"))},
		{"identity case folded", cat(repeat(3, fail("U@x.io", "A")), refused("u@X.IO", "A"))},
		{"other client unaffected", cat(repeat(3, fail("u", "A")), refused("u", "A"), allowed("u", "B"))},
		{"other identity from the same client unaffected", cat(repeat(3, fail("u", "A")), allowed("v", "A"))},
		{"window passes", cat(repeat(3, fail("u", "A")), wait(15*time.Minute-time.Second), refused("u", "A"), wait(time.Second), allowed("u", "A"))},
		{"success clears the pair", cat(repeat(2, fail("u", "A")), ok("u", "A"), repeat(2, fail("u", "A")), allowed("u", "A"))},
		{"slowed identity still let through", cat(fail("u", "A"), fail("u", "B"), fail("u", "C"), fail("u", "D"), allowed("u", "F"))},
		{"identity ceiling across clients", cat(fail("u", "A"), fail("u", "B"), fail("u", "C"), fail("u", "D"), fail("u", "E"), refused("u", "F"))},
		{"identity ceiling spares a known client", cat(ok("u", "K"), fail("u", "A"), fail("u", "B"), fail("u", "C"), fail("u", "D"), fail("u", "E"), refused("u", "F"), allowed("u", "K"))},
		{"known client still has its pair limit", cat(ok("u", "K"), repeat(3, fail("u", "K")), refused("u", "K"))},
		{"known lapses", cat(ok("u", "K"), wait(time.Hour), fail("u", "A"), fail("u", "B"), fail("u", "C"), fail("u", "D"), fail("u", "E"), refused("u", "K"))},
		{"client cap across identities", cat(fail("a", "A"), fail("b", "A"), fail("c", "A"), fail("d", "A"), fail("e", "A"), fail("f", "A"), fail("g", "A"), allowed("h", "A"), fail("h", "A"), refused("i", "A"), allowed("i", "B"))},
		{"client cap spares a known pair", cat(ok("me", "A"), fail("a", "A"), fail("b", "A"), fail("c", "A"), fail("d", "A"), fail("e", "A"), fail("f", "A"), fail("g", "A"), fail("h", "A"), refused("x", "A"), allowed("me", "A"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newClock()
			g := NewGuard(testPolicy, clk.Now)
			for i, s := range tt.steps {
				switch s.op {
				case "fail":
					attempt(t, g, "users", s.identity, s.from).Failed()
				case "ok":
					attempt(t, g, "users", s.identity, s.from).Succeeded()
				case "+":
					clk.Add(s.d)
				case "check":
					a, no := g.Begin(context.Background(), "users", s.identity, s.from)
					got := a != nil
					if got {
						a.Abandon()
					}
					if got != s.allowed {
						t.Fatalf("step %d: Begin(%s from %s) let through = %v, want %v", i, s.identity, s.from, got, s.allowed)
					}
					if !got && (!no.Locked || no.RetryAfter <= 0 || no.RetryAfter > testPolicy.Window) {
						t.Errorf("step %d: refusal %+v, want locked for a wait within (0, %v]", i, *no, testPolicy.Window)
					}
				}
			}
			if n := len(g.lines); n != 0 {
				t.Errorf("%d lines left with nothing in flight, want 0", n)
			}
		})
	}
}

// attempt begins an attempt the guard must let through at once.
func attempt(t *testing.T, g *Guard, collection, identity, client string) *Attempt {
	t.Helper()
	a, no := g.Begin(context.Background(), collection, identity, client)
	if a == nil {
		t.Fatalf("Begin(%s, %s, %s) refused (%+v), want it let through", collection, identity, client, *no)
	}
	return a
}

func TestGuardCollectionsApart(t *testing.T) {
	g := NewGuard(testPolicy, newClock().Now)
	for range 3 {
		attempt(t, g, "users", "u", "A").Failed()
	}
	attempt(t, g, "_superusers", "u", "A").Abandon()
}

func TestGuardWaitReported(t *testing.T) {
	clk := newClock()
	g := NewGuard(testPolicy, clk.Now)
	for range 3 {
		attempt(t, g, "users", "u", "A").Failed()
	}
	clk.Add(5 * time.Minute)
	if a, no := g.Begin(context.Background(), "users", "u", "A"); a != nil || *no != (Refusal{Locked: true, RetryAfter: 10 * time.Minute}) {
		t.Errorf("Begin = %v, %+v; want locked for 10m0s", a != nil, no)
	}
}

// timerClock is a clock with timers, safe for concurrent use: a timer
// fires when Advance moves the clock to or past it, and every timer armed
// is announced on armed, by its duration, so that tests know a Begin is
// waiting.
type timerClock struct {
	mu     sync.Mutex
	t      time.Time
	timers []*fakeTimer
	armed  chan time.Duration
}

type fakeTimer struct {
	at time.Time
	c  chan time.Time
}

func newTimerClock() *timerClock {
	return &timerClock{t: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC), armed: make(chan time.Duration, 1000)}
}

func (c *timerClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *timerClock) After(d time.Duration) (<-chan time.Time, func() bool) {
	c.mu.Lock()
	ft := &fakeTimer{at: c.t.Add(d), c: make(chan time.Time, 1)}
	c.timers = append(c.timers, ft)
	c.mu.Unlock()
	c.armed <- d
	return ft.c, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		n := len(c.timers)
		c.timers = slices.DeleteFunc(c.timers, func(x *fakeTimer) bool { return x == ft })
		return len(c.timers) < n
	}
}

func (c *timerClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	c.timers = slices.DeleteFunc(c.timers, func(ft *fakeTimer) bool {
		if c.t.Before(ft.at) {
			return false
		}
		ft.c <- c.t
		return true
	})
}

// outcome is what Begin returned.
type outcome struct {
	a      *Attempt
	no     *Refusal
	client string
}

// rig runs Begins concurrently against a Guard with DefaultPolicy on a
// timerClock.
type rig struct {
	t       *testing.T
	g       *Guard
	clk     *timerClock
	results chan outcome
	checks  int // attempts let through: the passwords that would be checked
}

func newRig(t *testing.T) *rig {
	clk := newTimerClock()
	g := NewGuard(DefaultPolicy, clk.Now)
	g.after = clk.After
	return &rig{t: t, g: g, clk: clk, results: make(chan outcome, 1000)}
}

// begin starts n Begins for identity from client, each in a goroutine of
// its own.
func (r *rig) begin(ctx context.Context, n int, identity, client string) {
	for range n {
		go func() {
			a, no := r.g.Begin(ctx, "users", identity, client)
			r.results <- outcome{a, no, client}
		}()
	}
}

// stuck returns the duration of the next timer a Begin arms.
func (r *rig) stuck() time.Duration {
	r.t.Helper()
	select {
	case d := <-r.clk.armed:
		return d
	case <-time.After(10 * time.Second):
		r.t.Fatal("no Begin waits")
	}
	return 0
}

// next returns the next outcome of a Begin.
func (r *rig) next() outcome {
	r.t.Helper()
	select {
	case o := <-r.results:
		if o.a != nil {
			r.checks++
		}
		return o
	case <-time.After(10 * time.Second):
		r.t.Fatal("no Begin returns")
	}
	return outcome{}
}

// settled waits for n Begins to be let through and m to wait for their
// turn, and returns those let through.
func (r *rig) settled(n, m int) []*Attempt {
	r.t.Helper()
	var let []*Attempt
	for range n {
		o := r.next()
		if o.a == nil {
			r.t.Fatalf("Begin refused (%+v), want %d let through", *o.no, n)
		}
		let = append(let, o.a)
	}
	for range m {
		if d := r.stuck(); d != DefaultPolicy.MaxWait {
			r.t.Fatalf("a Begin armed a timer of %v, want MaxWait (%v)", d, DefaultPolicy.MaxWait)
		}
	}
	return let
}

// one runs a single Begin to its end, moving the clock over every wait it
// arms, and returns its outcome and how long it waited.
func (r *rig) one(identity, client string) (outcome, time.Duration) {
	r.t.Helper()
	start := r.clk.Now()
	r.begin(context.Background(), 1, identity, client)
	for {
		select {
		case d := <-r.clk.armed:
			r.clk.Advance(d)
		case <-time.After(10 * time.Second):
			r.t.Fatal("Begin neither returns nor waits")
		case o := <-r.results:
			if o.a != nil {
				r.checks++
			}
			return o, r.clk.Now().Sub(start)
		}
	}
}

// inFlight returns what the line of identity from client holds.
func (r *rig) inFlight(identity, client string) (inFlight, waiting int) {
	r.g.mu.Lock()
	defer r.g.mu.Unlock()
	if l := r.g.lines[keysOf("users", identity, client)[pairStep]]; l != nil {
		return l.inFlight, len(l.queue)
	}
	return 0, 0
}

// TestGuardScenarios runs DefaultPolicy through the situations the
// throttle is for, concurrent ones included, on a clock the test moves.
func TestGuardScenarios(t *testing.T) {
	p := DefaultPolicy
	tests := []struct {
		name string
		run  func(t *testing.T, r *rig)
	}{
		{"concurrent right passwords all let through, PerPair in flight at most", func(t *testing.T, r *rig) {
			const n = 16
			r.begin(context.Background(), n, "u", "A")
			open := r.settled(p.PerPair, n-p.PerPair)
			for len(open) > 0 {
				_, waiting := r.inFlight("u", "A")
				open[0].Succeeded()
				open = open[1:]
				if waiting > 0 {
					o := r.next()
					if o.a == nil {
						t.Fatalf("right password refused with %+v", *o.no)
					}
					open = append(open, o.a)
				}
				if in, _ := r.inFlight("u", "A"); in > p.PerPair || len(open) > p.PerPair {
					t.Fatalf("%d in flight (%d held by the test), want at most %d", in, len(open), p.PerPair)
				}
			}
			if r.checks != n {
				t.Errorf("%d let through, want %d", r.checks, n)
			}
		}},
		{"100 parallel wrong guesses: PerPair checks, the rest locked", func(t *testing.T, r *rig) {
			r.begin(context.Background(), 100, "u", "A")
			for _, a := range r.settled(p.PerPair, 100-p.PerPair) {
				a.Failed()
			}
			for range 100 - p.PerPair {
				if o := r.next(); o.a != nil || *o.no != (Refusal{Locked: true, RetryAfter: p.Window}) {
					t.Fatalf("a waiting guess ended with %v, %+v; want locked for the window", o.a != nil, o.no)
				}
			}
			if r.checks != p.PerPair {
				t.Errorf("%d guesses checked, want %d", r.checks, p.PerPair)
			}
		}},
		{"turn not come within MaxWait: a rate limit", func(t *testing.T, r *rig) {
			r.begin(context.Background(), p.PerPair+1, "u", "A")
			open := r.settled(p.PerPair, 1)
			r.clk.Advance(p.MaxWait)
			if o := r.next(); o.a != nil || *o.no != (Refusal{RetryAfter: turnWait}) {
				t.Fatalf("the waiting attempt ended with %v, %+v; want a rate limit", o.a != nil, o.no)
			}
			for _, a := range open {
				a.Abandon()
			}
		}},
		{"context ended: a rate limit, never let through early", func(t *testing.T, r *rig) {
			ctx, cancel := context.WithCancel(context.Background())
			r.begin(context.Background(), p.PerPair, "u", "A")
			open := r.settled(p.PerPair, 0)
			r.begin(ctx, 1, "u", "A")
			r.stuck()
			cancel()
			if o := r.next(); o.a != nil || o.no.Locked {
				t.Fatalf("the cancelled attempt ended with %v, %+v; want a rate limit", o.a != nil, o.no)
			}
			for _, a := range open {
				a.Failed()
			}
		}},
		{"one user's wait does not hold up another's at the same address", func(t *testing.T, r *rig) {
			r.begin(context.Background(), p.PerPair+3, "u", "A")
			open := r.settled(p.PerPair, 3)
			if o, waited := r.one("v", "A"); o.a == nil || waited != 0 {
				t.Fatalf("v from A: let through %v after %v, want at once", o.a != nil, waited)
			} else {
				o.a.Succeeded()
			}
			for _, a := range open {
				a.Succeeded()
			}
			for _, a := range r.settled(3, 0) {
				a.Succeeded()
			}
		}},
		{"25 wrong passwords over 5 addresses, then the right one from a sixth", func(t *testing.T, r *rig) {
			var starts []time.Time
			for i := range 25 {
				o, _ := r.one("su", fmt.Sprint("attacker", i/5))
				if o.a == nil {
					t.Fatalf("wrong password %d refused with %+v", i+1, *o.no)
				}
				starts = append(starts, r.clk.Now())
				o.a.Failed()
			}
			for i := p.SlowAfter + 1; i < len(starts); i++ {
				if gap := starts[i].Sub(starts[i-1]); gap < p.SlowEvery {
					t.Errorf("checks %d and %d %v apart, want at least %v", i, i+1, gap, p.SlowEvery)
				}
			}
			o, waited := r.one("su", "owner")
			if o.a == nil || waited > p.SlowEvery {
				t.Fatalf("the right password from a new address: let through %v after %v, want within %v", o.a != nil, waited, p.SlowEvery)
			}
			o.a.Succeeded()
		}},
		{"the identity's ceiling locks new addresses, not known ones", func(t *testing.T, r *rig) {
			o, _ := r.one("su", "home")
			o.a.Succeeded()
			for i := range p.PerIdentity {
				o, _ := r.one("su", fmt.Sprint("attacker", i/p.PerPair))
				if o.a == nil {
					t.Fatalf("wrong password %d refused with %+v", i+1, *o.no)
				}
				o.a.Failed()
			}
			if o, _ := r.one("su", "new"); o.a != nil || !o.no.Locked {
				t.Fatalf("from a new address past the ceiling: let through %v (%+v), want locked", o.a != nil, o.no)
			}
			o, waited := r.one("su", "home")
			if o.a == nil || waited != 0 {
				t.Fatalf("from the known address: let through %v after %v, want at once", o.a != nil, waited)
			}
			o.a.Succeeded()
		}},
		{"a slowed identity's queue beyond MaxWait: a rate limit", func(t *testing.T, r *rig) {
			for i := range p.SlowAfter {
				o, _ := r.one("su", fmt.Sprint("attacker", i/p.PerPair))
				o.a.Failed()
			}
			// Slots a second apart: MaxWait's worth of them are taken (the
			// first at once), the next is refused without a failure counted.
			n := int(p.MaxWait/p.SlowEvery) + 1
			for i := range n {
				r.begin(context.Background(), 1, "su", fmt.Sprint("other", i))
				if i > 0 {
					r.stuck()
				}
			}
			first := r.next() // the one whose slot was at once
			if first.a == nil {
				t.Fatalf("the first slowed attempt refused: %+v", *first.no)
			}
			first.a.Abandon()
			o, _ := r.one("su", "late")
			if o.a != nil || o.no.Locked || o.no.RetryAfter <= p.MaxWait {
				t.Fatalf("the attempt past the queue: let through %v (%+v), want a rate limit", o.a != nil, o.no)
			}
			r.clk.Advance(p.MaxWait)
			for range n - 1 {
				if o := r.next(); o.a == nil {
					t.Fatalf("a queued attempt refused: %+v", *o.no)
				} else {
					o.a.Abandon()
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			tt.run(t, r)
			r.g.mu.Lock()
			defer r.g.mu.Unlock()
			if n := len(r.g.lines); n != 0 {
				t.Errorf("%d lines left at the end, want 0", n)
			}
		})
	}
}

// TestGuardBound fills the guard with far more keys than its bound and
// checks that it stays within it, then measures the memory a full guard
// holds, so that DefaultPolicy's stated bound stays honest.
func TestGuardBound(t *testing.T) {
	const max = 20_000
	p := testPolicy
	p.MaxKeys = max
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	g := NewGuard(p, newClock().Now)
	for i := range 3 * max {
		id := fmt.Sprint("user", i)
		attempt(t, g, "users", id, fmt.Sprint("client", i)).Failed()
		attempt(t, g, "users", id, fmt.Sprint("client", i)).Succeeded()
		if c, k := g.Len(); c > max || k > max {
			t.Fatalf("after %d logins: %d counters, %d known; want at most %d each", i+1, c, k, max)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perKey := float64(after.HeapAlloc-before.HeapAlloc) / (2 * max)
	t.Logf("full guard: %.0f bytes per key", perKey)
	if perKey > 200 {
		t.Errorf("a full guard holds %.0f bytes per key, want at most 200 (DefaultPolicy's stated bound)", perKey)
	}
	runtime.KeepAlive(g)
}
