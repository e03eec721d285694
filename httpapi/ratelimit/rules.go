package ratelimit

import (
	"crypto/sha256"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// The audiences a rule may name (PocketBase's, core/settings_model.go).
const (
	AudienceAll   = ""       // guests and authenticated requests
	AudienceGuest = "@guest" // guests only
	AudienceAuth  = "@auth"  // authenticated requests only
)

// Rule is one rate limit rule: at most MaxRequests requests per Duration
// from one client, for the requests whose labels include Label.
type Rule struct {
	Label       string
	Audience    string
	MaxRequests int
	Duration    time.Duration
}

// Find returns the first rule matching labels, tried in order, whose
// audience fits (authenticated or guest), as PocketBase's
// FindRateLimitRule does: for each label, a rule with exactly that label
// first, then a rule whose label ends in "/" and is a prefix of the label
// followed by "/" (so "/api/" matches "/api/health" and "/api").
func Find(rules []Rule, labels []string, authenticated bool) (Rule, bool) {
	fits := func(r Rule) bool {
		switch r.Audience {
		case AudienceAll:
			return true
		case AudienceGuest:
			return !authenticated
		case AudienceAuth:
			return authenticated
		}
		return false
	}
	for _, label := range labels {
		for _, r := range rules {
			if r.Label == label && fits(r) {
				return r, true
			}
		}
		for _, r := range rules {
			if strings.HasSuffix(r.Label, "/") && strings.HasPrefix(label+"/", r.Label) && fits(r) {
				return r, true
			}
		}
	}
	return Rule{}, false
}

// PathLabels are the labels every request carries: "<METHOD> <path>" and
// "<path>".
func PathLabels(method, path string) []string {
	return []string{method + " " + path, path}
}

// CollectionLabels are the labels of a request to a collection route with
// the given tags, in priority order: "<collection>:<tag>" for each tag,
// "*:<tag>" for each tag, then the path labels.
func CollectionLabels(collection string, tags []string, method, path string) []string {
	labels := make([]string, 0, 2*len(tags)+2)
	for _, t := range tags {
		labels = append(labels, collection+":"+t)
	}
	for _, t := range tags {
		labels = append(labels, "*:"+t)
	}
	return append(labels, PathLabels(method, path)...)
}

// ClientKey normalises a client address for keying: IPv4 (and IPv4-mapped
// IPv6) addresses stand for themselves, IPv6 addresses for their /64, the
// smallest block a single subscriber usually holds (any address in it costs
// a client nothing to use). Anything else is used as is.
func ClientKey(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	p, err := a.Prefix(64)
	if err != nil {
		return addr
	}
	return p.String()
}

// key is a table key: a 128-bit hash of its parts, so that entries have a
// fixed size whatever clients send.
type key [16]byte

func hashKey(parts ...string) key {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	var k key
	copy(k[:], h.Sum(nil))
	return k
}

// DefaultMaxWindows bounds a Limiter's state: one window per (bucket,
// client) pair, about 130 bytes each, so at most about 13 MB.
const DefaultMaxWindows = 100_000

// Limiter counts requests per (bucket, client) in fixed windows. It is safe
// for concurrent use. A new rule set starts a new Limiter: counters do not
// carry over a settings change, as in PocketBase.
type Limiter struct {
	mu   sync.Mutex
	now  func() time.Time
	wins *table[window]
}

// window is a fixed window: it opens at the first request counted in it
// and closes Duration later.
type window struct {
	start time.Time
	count int
}

// NewLimiter returns a Limiter that tracks at most maxWindows (bucket,
// client) pairs (DefaultMaxWindows if maxWindows < 1), evicting the least
// recently used one when full, with now as its clock (time.Now if nil).
func NewLimiter(maxWindows int, now func() time.Time) *Limiter {
	if maxWindows < 1 {
		maxWindows = DefaultMaxWindows
	}
	if now == nil {
		now = time.Now
	}
	return &Limiter{now: now, wins: newTable[window](maxWindows)}
}

// Allow counts one request of client against rule r in bucket and reports
// whether it is within r.MaxRequests for the current window. Refused
// requests are not counted.
func (l *Limiter) Allow(bucket, client string, r Rule) bool {
	ok, _ := l.Take(bucket, client, r)
	return ok
}

// Take is Allow that also tells a refused request how long to wait. wait
// is zero when ok; otherwise it is the time left until the current window
// closes (more than zero, at most r.Duration for a positive Duration),
// after which the client's next request opens a new window and counts.
func (l *Limiter) Take(bucket, client string, r Rule) (ok bool, wait time.Duration) {
	now := l.now()
	k := hashKey(bucket, client)
	l.mu.Lock()
	defer l.mu.Unlock()
	w, found := l.wins.get(k)
	if !found || !now.Before(w.start.Add(r.Duration)) {
		w = l.wins.put(k, window{start: now})
	}
	if w.count >= r.MaxRequests {
		return false, w.start.Add(r.Duration).Sub(now)
	}
	w.count++
	return true, 0
}

// Len returns the number of (bucket, client) pairs tracked.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.wins.len()
}
