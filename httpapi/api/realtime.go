package api

import (
	"container/list"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"strongbox/authn"
	"strongbox/authn/validation"
)

// The realtime channel, as much of it as the SDK's all-in-one OAuth2 flow
// needs (RecordService.authWithOAuth2 of the JS SDK): a client opens
// GET /api/realtime (server-sent events) and learns its id from the
// PB_CONNECT event, subscribes to the "@oauth2" topic with
// POST /api/realtime, and waits for the one message GET|POST
// /api/oauth2-redirect sends it (oauth2_redirect.go). Other topics are
// accepted, as PocketBase accepts them, and never receive a message:
// strongbox broadcasts no record changes.

// Defaults of the realtime limits (Config).
const (
	// DefaultRealtimeIdle is how long a realtime stream stays open
	// without sending an event, PocketBase's idle timeout: the SDK
	// reconnects by itself.
	DefaultRealtimeIdle = 5 * time.Minute
	// realtimeShareOfConns is the part of the connection cap (MaxConns)
	// that realtime streams may hold by default. A stream holds its
	// connection for as long as it is open, and the listener can never
	// give the slot of a busy connection to another: a quarter leaves the
	// other three to the API.
	realtimeShareOfConns = 4
)

// PocketBase's limits on a subscription request (apis/realtime.go,
// realtimeSubscribeForm).
const (
	maxClientIDLength = 255
	maxSubscriptions  = 1000
	maxTopicLength    = 2500
)

const (
	// clientIDLength and clientIDAlphabet make a realtime client id, as
	// PocketBase's (40 characters of [A-Za-z0-9]).
	clientIDLength   = 40
	clientIDAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	// clientQueue is how many messages may wait for one stream to send
	// them; a message that does not fit is not sent (the redirect then
	// answers with the failure page).
	clientQueue = 4
	// topicOAuth2 is the topic of the OAuth2 redirect's message.
	topicOAuth2 = "@oauth2"
	// realtimeConnectEvent is the name of a stream's first event.
	realtimeConnectEvent = "PB_CONNECT"
)

// Messages of the realtime routes: PocketBase's, and strongbox's own
// for its limit (PocketBase has none).
const (
	msgRealtimeClient   = "Missing or invalid client id."
	msgRealtimeAuth     = "The current and the previous request authorization don't match."
	msgRealtimeFull     = "Too many realtime connections, try again later."
	msgRealtimeStopping = "The server is shutting down, try again later."
)

// realtime is the set of open realtime streams (clients), bounded in all,
// per client address and per group of addresses (clientGroup). When all
// the slots are taken, a client of another group takes the slot of the
// oldest stream that never subscribed to anything, or else of the oldest
// stream of the group that holds the most (victimLocked): a handful of
// addresses cannot hold every slot.
type realtime struct {
	idle        time.Duration
	max         int // streams open at once
	maxPerAddr  int // streams of one client address (an IPv6 /64) at once
	maxPerGroup int // streams of one group (an IPv4 /24, an IPv6 /48) at once
	rand        *authn.Random

	mu       sync.Mutex
	clients  map[string]*rtClient
	perAddr  map[string]int
	perGroup map[string]int
	order    *list.List // of *rtClient, the oldest first
	// servers are the http.Servers whose shutdown the streams follow
	// (RegisterOnShutdown): true once one has begun to shut down.
	servers map[*http.Server]bool
	logs    logEvery // the "cap reached" line
	evicted logEvery // the "took the slot of a stream" line
}

// rtClient is one open stream. The fields after mu are the hub's lock's.
type rtClient struct {
	id    string
	addr  string
	group string        // clientGroup(addr)
	srv   *http.Server  // nil when served without one (tests' recorders)
	msgs  chan rtEvent  // to send, clientQueue at most
	end   chan struct{} // closed to end the stream

	elem       *list.Element // in the hub's order
	ended      bool          // end is closed
	subscribed bool          // has subscribed to a topic since it connected
	oauth2     bool          // subscribed to topicOAuth2
	auth       string        // "collectionId/recordId" of the first authenticated subscription; "" = guest
}

// rtEvent is one server-sent event.
type rtEvent struct {
	name string
	data []byte
}

func newRealtime(idle time.Duration, max, maxPerAddr, maxPerGroup int) *realtime {
	return &realtime{
		idle: idle, max: max, maxPerAddr: maxPerAddr, maxPerGroup: maxPerGroup, rand: authn.NewRandom(nil),
		clients: map[string]*rtClient{}, perAddr: map[string]int{}, perGroup: map[string]int{},
		order: list.New(), servers: map[*http.Server]bool{},
	}
}

// clientGroup is the group of a client address as ratelimit.ClientKey
// yields it: its IPv4 /24 or its IPv6 /48, the blocks one party usually
// holds together; any other key is a group of its own.
func clientGroup(addr string) string {
	if a, err := netip.ParseAddr(addr); err == nil && a.Is4() {
		return netip.PrefixFrom(a, 24).Masked().String()
	}
	if p, err := netip.ParsePrefix(addr); err == nil && p.Addr().Is6() && p.Bits() >= 48 {
		return netip.PrefixFrom(p.Addr(), 48).Masked().String()
	}
	return addr
}

// register opens a stream for a client at addr, served by srv (nil if
// unknown), with a new id; or refuses it: 503 over the caps or while srv
// shuts down.
func (h *realtime) register(srv *http.Server, addr string, log func(msg string, args ...any)) (*rtClient, error) {
	id, err := h.rand.String(clientIDAlphabet, clientIDLength)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if srv != nil {
		down, known := h.servers[srv]
		if down {
			return nil, newError(http.StatusServiceUnavailable, msgRealtimeStopping, nil)
		}
		if !known {
			// Shutdown waits for the requests in flight, and a stream is
			// one until it ends: it must end as soon as shutdown begins.
			h.servers[srv] = false
			srv.RegisterOnShutdown(func() { h.shutdown(srv) })
		}
	}
	if _, dup := h.clients[id]; dup {
		// 40 characters of 62: only a broken source of randomness repeats.
		return nil, newError(http.StatusInternalServerError, msgBadRequest, nil)
	}
	group := clientGroup(addr)
	if err := h.makeRoomLocked(addr, group, log); err != nil {
		return nil, err
	}
	c := &rtClient{id: id, addr: addr, group: group, srv: srv, msgs: make(chan rtEvent, clientQueue), end: make(chan struct{})}
	c.elem = h.order.PushBack(c)
	h.clients[id] = c
	h.perAddr[addr]++
	h.perGroup[group]++
	return c, nil
}

// makeRoomLocked makes room for a stream of addr in group, ending another
// stream if the hub is full, or refuses it with 503: over the address's or
// the group's cap, or with no stream to end. The caller holds h.mu.
func (h *realtime) makeRoomLocked(addr, group string, log func(msg string, args ...any)) error {
	atShare := h.perAddr[addr] >= h.maxPerAddr || h.perGroup[group] >= h.maxPerGroup
	var victim *rtClient
	if !atShare && len(h.clients) >= h.max {
		victim = h.victimLocked(group)
	}
	if atShare || len(h.clients) >= h.max && victim == nil {
		if refused, ok := h.logs.event(); ok {
			log("realtime connection cap reached: refusing new streams with 503", "cap", h.max, "perClient", h.maxPerAddr,
				"perGroup", h.maxPerGroup, "open", len(h.clients), "refused", refused, "lastClient", addr, "atClientShare", atShare)
		}
		return newError(http.StatusServiceUnavailable, msgRealtimeFull, nil)
	}
	if victim != nil {
		if n, ok := h.evicted.event(); ok {
			log("realtime connection cap reached: ending old streams to make room for other clients", "cap", h.max,
				"ended", n, "lastEnded", victim.addr, "subscribed", victim.subscribed, "lastClient", addr)
		}
		h.endLocked(victim)
		h.forgetLocked(victim)
	}
	return nil
}

// victimLocked returns the stream to end to make room for a client of
// group, nil if none: the oldest that has not subscribed to anything
// since it connected, of another group; or else the oldest of the group
// that holds the most streams, if that group still holds more than group
// does once it is gone. The caller holds h.mu.
func (h *realtime) victimLocked(group string) *rtClient {
	largest, most := "", 0
	for g, n := range h.perGroup {
		if n > most {
			largest, most = g, n
		}
	}
	if most <= h.perGroup[group]+1 {
		largest = "" // no group would hold more than group after
	}
	var oldestOfLargest *rtClient
	for e := h.order.Front(); e != nil; e = e.Next() {
		c := e.Value.(*rtClient)
		if c.group == group {
			continue
		}
		if !c.subscribed {
			return c
		}
		if oldestOfLargest == nil && c.group == largest {
			oldestOfLargest = c
		}
	}
	return oldestOfLargest
}

// unregister forgets c, whose stream has ended.
func (h *realtime) unregister(c *rtClient) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.endLocked(c)
	if h.clients[c.id] == c {
		h.forgetLocked(c)
	}
}

// forgetLocked frees the slot of c, an open client. The caller holds h.mu.
func (h *realtime) forgetLocked(c *rtClient) {
	delete(h.clients, c.id)
	h.order.Remove(c.elem)
	if h.perAddr[c.addr]--; h.perAddr[c.addr] <= 0 {
		delete(h.perAddr, c.addr)
	}
	if h.perGroup[c.group]--; h.perGroup[c.group] <= 0 {
		delete(h.perGroup, c.group)
	}
}

// endLocked ends the stream of c. The caller holds h.mu.
func (h *realtime) endLocked(c *rtClient) {
	if !c.ended {
		c.ended = true
		close(c.end)
	}
}

// shutdown ends the streams srv serves and refuses new ones on it.
func (h *realtime) shutdown(srv *http.Server) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.servers[srv] = true
	for _, c := range h.clients {
		if c.srv == srv {
			h.endLocked(c)
		}
	}
}

// endAll ends every open stream; new ones may open.
func (h *realtime) endAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.clients {
		h.endLocked(c)
	}
}

// open returns the number of open streams.
func (h *realtime) open() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.clients)
}

// subscribe sets the topics of the client id, on behalf of auth (see
// rtClient.auth). PocketBase keeps every topic; strongbox keeps only
// whether topicOAuth2 is one of them, since no other topic is ever sent
// anything, so a client holds the same few bytes whatever it subscribes.
func (h *realtime) subscribe(id, auth string, topics []string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.clients[id]
	if c == nil || c.ended {
		return newError(http.StatusNotFound, msgRealtimeClient, nil)
	}
	// As in PocketBase: a guest's client may be taken over by an
	// authenticated request (the SDK subscribes before it logs in), but
	// an authenticated one only by the same record.
	if c.auth != "" && c.auth != auth {
		return errForbidden(msgRealtimeAuth)
	}
	c.auth = auth
	c.oauth2 = false
	c.subscribed = c.subscribed || len(topics) > 0
	for _, t := range topics {
		if t == topicOAuth2 {
			c.oauth2 = true
		}
	}
	return nil
}

// sendOAuth2 queues the OAuth2 redirect's message, data, for the client id
// if it is subscribed to topicOAuth2, and unsubscribes it from the topic:
// a redirect is answered once. It reports whether the message was queued.
func (h *realtime) sendOAuth2(id string, data []byte) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.clients[id]
	if c == nil || c.ended || !c.oauth2 {
		return false
	}
	c.oauth2 = false
	select {
	case c.msgs <- rtEvent{name: topicOAuth2, data: data}:
		return true
	default:
		return false
	}
}

// EndStreams ends every realtime stream open now; clients reconnect by
// themselves (the SDK does, with a new client id). A server that waits for
// the requests in flight, to restart or to stop, calls it first: a stream
// is a request that lasts until its client goes away. (http.Server's
// Shutdown needs no call: the streams follow it by themselves.)
func (s *Server) EndStreams() { s.realtime.endAll() }

// handleRealtimeConnect handles GET /api/realtime: a stream of server-sent
// events that starts with PB_CONNECT, whose id and data carry the client's
// new id, and then sends the client's messages as they come. It ends when
// the client goes away, after the idle time without an event, or when the
// server shuts down or calls EndStreams. Each event has the route's write
// deadline to be written, from the moment it is written; between events
// there is none. A successful stream is not request-logged, as
// PocketBase does not log it. HEAD gets the headers and no stream.
func (s *Server) handleRealtimeConnect(w http.ResponseWriter, r *http.Request) error {
	st := stateOf(r)
	srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server)
	c, err := s.realtime.register(srv, st.client, s.log.Warn)
	if err != nil {
		return err
	}
	defer s.realtime.unregister(c)
	st.quiet = true

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	// Proxies such as nginx buffer responses unless told not to, which
	// would hold the events back.
	h.Set("X-Accel-Buffering", "no")
	rc := http.NewResponseController(w)
	if r.Method == http.MethodHead {
		// The headers a GET would have, and no stream: it would send
		// nothing, and hold its slot until the idle time.
		w.WriteHeader(http.StatusOK)
		return nil
	}
	// The end of the stream is written too (the last chunk): with a
	// deadline of its own, not the one of an event long past.
	defer func() { rc.SetWriteDeadline(time.Now().Add(st.limits.Write)) }()
	send := func(ev rtEvent) error {
		rc.SetWriteDeadline(time.Now().Add(st.limits.Write))
		if _, err := w.Write(formatEvent(c.id, ev)); err != nil {
			return err
		}
		return rc.Flush()
	}
	if err := send(rtEvent{name: realtimeConnectEvent, data: []byte(`{"clientId":"` + c.id + `"}`)}); err != nil {
		return nil // the client is gone; the status is written
	}
	idle := time.NewTimer(s.realtime.idle)
	defer idle.Stop()
	for {
		select {
		case ev := <-c.msgs:
			if err := send(ev); err != nil {
				return nil
			}
			idle.Reset(s.realtime.idle)
		case <-idle.C:
			return nil
		case <-c.end:
			return nil
		case <-r.Context().Done():
			return nil
		}
	}
}

// formatEvent is ev in PocketBase's wire format
// (tools/subscriptions/message.go): "id:<client id>\nevent:<name>\n
// data:<data>\n\n". The data is one line of JSON.
func formatEvent(id string, ev rtEvent) []byte {
	b := make([]byte, 0, len(id)+len(ev.name)+len(ev.data)+18)
	b = append(b, "id:"...)
	b = append(b, id...)
	b = append(b, "\nevent:"...)
	b = append(b, ev.name...)
	b = append(b, "\ndata:"...)
	b = append(b, ev.data...)
	return append(b, "\n\n"...)
}

// handleRealtimeSubscribe handles POST /api/realtime: {clientId,
// subscriptions} replaces the topics of an open client, 204. The body is
// checked as PocketBase checks it (clientId required, at most 255
// bytes; at most 1000 topics of at most 2500 bytes each), and a body that
// cannot be read or fails a check is a 400 with the generic message, as
// PocketBase answers it; an unknown client a 404; a client first
// subscribed by an authenticated record and now by another (or a guest) a
// 403.
func (s *Server) handleRealtimeSubscribe(w http.ResponseWriter, r *http.Request) error {
	id, topics, err := readSubscription(r)
	if err != nil {
		return err
	}
	auth := ""
	if st := stateOf(r); st.rec != nil {
		auth = st.col.ID + "/" + st.rec.ID
	}
	if err := s.realtime.subscribe(id, auth, topics); err != nil {
		return err
	}
	return noContent(w)
}

// readSubscription reads and checks the body of POST /api/realtime.
func readSubscription(r *http.Request) (id string, topics []string, err error) {
	b, err := bind(r)
	if err != nil {
		if e := asError(err); e.Status == http.StatusBadRequest {
			// PocketBase answers a body it cannot bind with its
			// generic message, not the loading one.
			return "", nil, errBadRequest(msgBadRequest, err)
		}
		return "", nil, err
	}
	bad := errBadRequest(msgBadRequest, nil)
	switch v := lookup(b.vals, "clientId").(type) {
	case nil:
	case string:
		id = v
	default:
		return "", nil, bad
	}
	if b.form {
		topics = r.Form["subscriptions"]
	} else {
		switch v := lookup(b.vals, "subscriptions").(type) {
		case nil:
		case []any:
			for _, t := range v {
				s, ok := t.(string)
				if !ok {
					return "", nil, bad
				}
				topics = append(topics, s)
			}
		default:
			return "", nil, bad
		}
	}
	errs := validation.Errors{}
	switch {
	case id == "":
		errs["clientId"] = validation.Required()
	case len(id) > maxClientIDLength:
		errs["clientId"] = validation.LengthOutOfRange(1, maxClientIDLength)
	}
	if len(topics) > maxSubscriptions {
		errs["subscriptions"] = validation.LengthTooLong(maxSubscriptions)
	} else {
		each := validation.Errors{}
		for i, t := range topics {
			if len(t) > maxTopicLength {
				each[strconv.Itoa(i)] = validation.LengthTooLong(maxTopicLength)
			}
		}
		if len(each) > 0 {
			errs["subscriptions"] = each
		}
	}
	if len(errs) > 0 {
		return "", nil, &Error{Status: http.StatusBadRequest, Message: msgBadRequest, Data: errs}
	}
	return id, topics, nil
}

// lookup returns the value of key in vals as Go's JSON decoder binds a
// struct field: the exact key, or else one equal to it ignoring case.
func lookup(vals map[string]any, key string) any {
	if v, ok := vals[key]; ok {
		return v
	}
	for k, v := range vals {
		if strings.EqualFold(k, key) {
			return v
		}
	}
	return nil
}
