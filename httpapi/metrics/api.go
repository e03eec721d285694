package metrics

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Other is the label value of what is not in a label's known set: a
// method that is not a standard one, a request no route matched, a label
// set past MaxSeries.
const Other = "_OTHER"

// MaxSeries bounds the label sets of each family API records: past it, new
// ones are counted under Other. The label values are the server's own
// (its routes, methods, status codes), so it is never reached but by a bug.
const MaxSeries = 2048

// knownMethods are the methods that are label values as they are; the rest
// are Other, as the OpenTelemetry semantic conventions say.
var knownMethods = map[string]string{
	"GET": "GET", "HEAD": "HEAD", "POST": "POST", "PUT": "PUT", "PATCH": "PATCH",
	"DELETE": "DELETE", "OPTIONS": "OPTIONS", "CONNECT": "CONNECT", "TRACE": "TRACE",
}

// API is the metrics the HTTP API records as requests end: the request
// duration histogram, sign-ins and throttle refusals. It outlives each
// API the server builds (one per restart), so the counts run on. Its
// methods are safe for concurrent use; Gather is its gather function.
type API struct {
	requests series[reqKey, *Histogram]
	signIns  series[[2]string, *atomic.Uint64]
	refusals series[string, *atomic.Uint64]
}

type reqKey struct {
	method, route string
	status        int
}

// NewAPI returns an API with nothing counted.
func NewAPI() *API { return &API{} }

// Request records a request answered: its method (Other unless standard),
// its route (the route's pattern, without its method, such as
// /api/collections/{collection}/records; "" for a request no route
// matched, recorded as Other), the status code sent and how long it took.
func (a *API) Request(method, route string, status int, d time.Duration) {
	m, ok := knownMethods[method]
	if !ok {
		m = Other
	}
	if route == "" {
		route = Other
	}
	if status < 100 || status > 599 {
		status = 0
	}
	k := reqKey{m, route, status}
	h := a.requests.get(k, reqKey{Other, Other, 0}, func() *Histogram { return NewHistogram(DurationBuckets) })
	h.Observe(d.Seconds())
}

// SignIn counts a sign-in attempt by its method (password, otp, oauth2, passkey)
// and outcome (success, mfa_required, failure, throttled).
func (a *API) SignIn(method, outcome string) {
	a.signIns.get([2]string{method, outcome}, [2]string{Other, Other}, newCounter).Add(1)
}

// Refused counts a request a throttle refused, by the limit that did
// (rate_limit, login, otp, mail).
func (a *API) Refused(limit string) {
	a.refusals.get(limit, Other, newCounter).Add(1)
}

func newCounter() *atomic.Uint64 { return new(atomic.Uint64) }

// Gather writes what API counted.
func (a *API) Gather(w *Writer) {
	const reqHelp = "Duration of HTTP server requests."
	a.requests.each(func(k reqKey, h *Histogram) {
		code := Other
		if k.status != 0 {
			code = strconv.Itoa(k.status)
		}
		w.Histogram("http_server_request_duration_seconds", reqHelp, h.Snapshot(),
			"http_request_method", k.method, "http_route", k.route, "http_response_status_code", code)
	})
	a.signIns.each(func(k [2]string, c *atomic.Uint64) {
		w.Counter("strongbox_auth_sign_ins_total", "Sign-in attempts by method and outcome.", float64(c.Load()), "method", k[0], "outcome", k[1])
	})
	a.refusals.each(func(k string, c *atomic.Uint64) {
		w.Counter("strongbox_throttle_refusals_total", "Requests refused by a throttle, by limit.", float64(c.Load()), "limit", k)
	})
}

// series is a family's label sets and their values, at most MaxSeries: a
// sync.Map, read without a lock once a label set exists.
type series[K comparable, V any] struct {
	m sync.Map // K → V
	n atomic.Int64
}

// get returns the value of k, made by mk if new; past MaxSeries, that of
// other.
func (s *series[K, V]) get(k, other K, mk func() V) V {
	if v, ok := s.m.Load(k); ok {
		return v.(V)
	}
	if s.n.Load() >= MaxSeries {
		k = other
	}
	v, loaded := s.m.LoadOrStore(k, mk())
	if !loaded {
		s.n.Add(1)
	}
	return v.(V)
}

func (s *series[K, V]) each(fn func(K, V)) {
	s.m.Range(func(k, v any) bool {
		fn(k.(K), v.(V))
		return true
	})
}

// RoutePattern returns the route of a ServeMux pattern such as
// "GET /api/health", without its method and host: "/api/health".
func RoutePattern(pattern string) string {
	if i := strings.IndexAny(pattern, " \t"); i >= 0 {
		pattern = strings.TrimLeft(pattern[i:], " \t")
	}
	return pattern
}
