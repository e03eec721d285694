package authn

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"strongbox/authn/lowprio"
	"strongbox/authn/validation"
)

// Password length limits, those of PocketBase v0.31.0's password field: at
// least MinPasswordRunes characters (the field's min) and at most
// MaxPasswordRunes (its max, and the greatest it allows). bcrypt reads at
// most MaxBcryptBytes bytes: a longer password is refused rather than
// silently truncated (OWASP ASVS 5.0 6.2.8), as golang.org/x/crypto's bcrypt
// refuses it for PocketBase.
const (
	MinPasswordRunes = 8
	MaxPasswordRunes = 71
	MaxBcryptBytes   = 72
)

// The password rule: one for every path that sets a password (sign-up,
// record and superuser updates, the CLI, confirm-password-reset), so that
// they all refuse the same passwords with the same answers.

// PasswordMin is the least number of characters of a new password of c:
// its password field's min, MinPasswordRunes if unset.
func PasswordMin(c *Collection) int {
	if f := c.Field("password"); f != nil && f.Min >= 1 {
		return int(f.Min)
	}
	return MinPasswordRunes
}

// passwordMax is the greatest number of characters of a new password of
// c: its password field's max, or MaxPasswordRunes if unset (PocketBase
// allows no more).
func passwordMax(c *Collection) int {
	if f := c.Field("password"); f != nil && f.Max >= 1 && f.Max <= MaxPasswordRunes {
		return int(f.Max)
	}
	return MaxPasswordRunes
}

// checkPassword applies the password field of c to a new password, as
// PocketBase v0.31.0's does, first failure only: required; over
// MaxBcryptBytes bytes is "Invalid value." (bcrypt refused it when it was
// set, which PocketBase reports before the lengths); then at least
// PasswordMin(c) and at most passwordMax(c) characters. A password of
// MaxBcryptBytes bytes with a multi-byte character is within both.
func checkPassword(c *Collection, p string) *validation.Error {
	switch n := utf8.RuneCountInString(p); {
	case p == "":
		return errRequired
	case len(p) > MaxBcryptBytes:
		return validation.InvalidValue()
	case n < PasswordMin(c):
		return validation.MinPassword(PasswordMin(c))
	case n > passwordMax(c):
		return validation.MaxPassword(passwordMax(c))
	}
	return nil
}

// DefaultCost is the bcrypt cost of stored passwords.
const DefaultCost = 10

// ErrBusy is returned by a Hasher that is already queueing its limit of
// waiting computations, or whose caller's context ended while it waited.
var ErrBusy = errors.New("authn: too many password checks in progress")

// maxWaitingPerSlot bounds the queue of a Hasher: beyond this many waiting
// computations per slot, new ones fail at once with ErrBusy instead of
// piling up goroutines and request bodies. At cost 10 a slot clears about
// 14 checks a second, so the last of them waits about 4.5 s.
const maxWaitingPerSlot = 64

// Hasher hashes and checks passwords with bcrypt. It runs at most one bcrypt
// computation per slot at a time, so a flood of logins queues here, and runs
// each one on an OS thread of its own at a lower priority (package
// lowprio: nice 10 on Linux), so the kernel serves the process's other threads first. Together
// with spare scheduler slots (GOMAXPROCS = slots + 2, which serve sets), a
// login flood uses the idle CPU without delaying cheap requests: the
// kernel, not Go's 10 ms preemption tick, decides who runs.
type Hasher struct {
	cost    int
	slots   chan struct{}
	waiting atomic.Int64 // computations queued for a slot
	checks  atomic.Int64 // passwords checked (see Checks)
	// dummies are the hashes, by cost, compared against when an identity
	// is unknown, each made on first use (decoy).
	dummies [bcrypt.MaxCost + 1]dummyHash
	// onDecoy, if set (by tests), is told the cost of each decoy check.
	onDecoy func(cost int)
}

// dummyHash is a hash of a password no account has, made once.
type dummyHash struct {
	once sync.Once
	hash []byte
}

// NewHasher returns a Hasher with the given bcrypt cost and number of
// concurrent computations (slots < 1 means one per CPU).
func NewHasher(cost, slots int) (*Hasher, error) {
	if cost < bcrypt.MinCost || cost > bcrypt.MaxCost {
		return nil, fmt.Errorf("authn: bcrypt cost %d outside %d..%d", cost, bcrypt.MinCost, bcrypt.MaxCost)
	}
	if slots < 1 {
		slots = runtime.NumCPU()
	}
	h := &Hasher{cost: cost, slots: make(chan struct{}, slots)}
	h.decoy(cost, "") // made now: the decoys at the Hasher's cost are compares
	return h, nil
}

func (h *Hasher) acquire(ctx context.Context) error {
	select {
	case h.slots <- struct{}{}:
		return nil
	default:
	}
	if h.waiting.Add(1) > int64(maxWaitingPerSlot*cap(h.slots)) {
		h.waiting.Add(-1)
		return ErrBusy
	}
	defer h.waiting.Add(-1)
	select {
	case h.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ErrBusy
	}
}

func (h *Hasher) release() { <-h.slots }

// Hash returns the bcrypt hash of password.
func (h *Hasher) Hash(ctx context.Context, password string) (string, error) {
	if err := h.acquire(ctx); err != nil {
		return "", err
	}
	defer h.release()
	type result struct {
		b   []byte
		err error
	}
	r := lowprio.Do(func() result {
		b, err := bcrypt.GenerateFromPassword([]byte(password), h.cost)
		return result{b, err}
	})
	if r.err != nil {
		return "", fmt.Errorf("authn: hash password: %w", r.err)
	}
	return string(r.b), nil
}

// Check reports whether password matches hash. An empty hash never matches.
// With an empty hash it still spends one bcrypt computation at h's cost,
// so the time a login takes does not tell whether its identity exists.
func (h *Hasher) Check(ctx context.Context, hash, password string) (bool, error) {
	return h.check(ctx, hash, password, h.cost)
}

// check is Check with an empty hash costing a computation at decoyCost
// (Store.decoyCost: what the hashes of the identity's collection cost).
func (h *Hasher) check(ctx context.Context, hash, password string, decoyCost int) (bool, error) {
	if err := h.acquire(ctx); err != nil {
		return false, err
	}
	defer h.release()
	h.checks.Add(1)
	ok := lowprio.Do(func() bool {
		if hash == "" {
			h.decoy(decoyCost, password)
			return false
		}
		return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
	})
	return ok, nil
}

// decoy spends one bcrypt computation at cost on password, matching no
// account: a compare against the dummy hash of that cost, or, the first
// time, the making of that hash, which costs the same.
func (h *Hasher) decoy(cost int, password string) {
	cost = min(max(cost, bcrypt.MinCost), bcrypt.MaxCost)
	if h.onDecoy != nil {
		h.onDecoy(cost)
	}
	d := &h.dummies[cost]
	made := false
	d.once.Do(func() {
		d.hash, _ = bcrypt.GenerateFromPassword([]byte("strongbox-dummy-password"), cost)
		made = true
	})
	if !made {
		bcrypt.CompareHashAndPassword(d.hash, []byte(password))
	}
}

// Checks returns how many passwords h has checked (bcrypt comparisons run
// by Check, the dummy ones for unknown identities included).
func (h *Hasher) Checks() int64 { return h.checks.Load() }
