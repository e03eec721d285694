package app

import (
	"context"
	"net/http"
	"sync"
	"time"

	"strongbox/httpapi/api"
)

// Messages of the 503 envelopes the gate answers with. PocketBase has
// none: it is down while it restarts.
const (
	msgRestarting = "The server is restarting, try again later."
	msgDown       = "The server cannot open its data, try again later."
)

// gate stands between the http.Server, which lives as long as the process
// serves, and the API of the stores currently open, which a restart
// replaces. It counts the requests in flight so that a restart can wait for
// them, and holds the requests that arrive meanwhile.
//
// It is in one of three states: open (api set), restarting (api nil,
// reopened set) or down (both nil: the last reopen failed, or nothing was
// opened yet).
type gate struct {
	hold       time.Duration
	restarting http.Handler // the 503 of a request held too long
	down       http.Handler // the 503 while the stores cannot be opened

	mu       sync.Mutex
	api      http.Handler  // the API; nil unless open
	reopened chan struct{} // closed when a restart ends; nil unless restarting
	inflight int           // requests inside api
	idle     chan struct{} // closed when inflight drops to 0; nil unless a restart waits
	stopping bool          // the process is about to re-exec: every request gets the restarting 503
}

func newGate(hold time.Duration) *gate {
	return &gate{hold: hold, restarting: api.Unavailable(msgRestarting), down: api.Unavailable(msgDown)}
}

// requestKey marks the context of a request that went through a gate:
// its value is the gate.
type requestKey struct{}

// ServeHTTP passes the request to the current API, waiting for a restart to
// end if one is under way.
func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	api, unavailable := g.enter(r.Context())
	if api == nil {
		unavailable.ServeHTTP(w, r)
		return
	}
	defer g.leave()
	api.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestKey{}, g)))
}

// enter returns the API and counts the request in, or the 503 to answer
// with if the gate is down, or stays closed for longer than the hold or
// than the client waits.
func (g *gate) enter(ctx context.Context) (api, unavailable http.Handler) {
	var timeout <-chan time.Time
	for {
		g.mu.Lock()
		api, wait := g.api, g.reopened
		if g.stopping {
			g.mu.Unlock()
			return nil, g.restarting
		}
		if api != nil {
			g.inflight++
		}
		g.mu.Unlock()
		switch {
		case api != nil:
			return api, nil
		case wait == nil:
			return nil, g.down
		}
		if timeout == nil {
			t := time.NewTimer(g.hold)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-wait:
		case <-timeout:
			return nil, g.restarting
		case <-ctx.Done():
			return nil, g.restarting
		}
	}
}

// leave counts a request out.
func (g *gate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.inflight--; g.inflight == 0 && g.idle != nil {
		close(g.idle)
		g.idle = nil
	}
}

// close stops new requests from reaching the API and waits for those in
// flight to finish. If ctx ends first, the gate opens again on the same
// API and close returns the context's error.
func (g *gate) close(ctx context.Context) error {
	g.mu.Lock()
	api := g.api
	g.api = nil
	g.reopened = make(chan struct{})
	if g.inflight == 0 {
		g.mu.Unlock()
		return nil
	}
	g.idle = make(chan struct{})
	idle := g.idle
	g.mu.Unlock()
	// A realtime stream lasts until its client goes away: end them, or
	// the wait would last until ctx ends. Their clients reconnect, and
	// wait at the gate like any request.
	if es, ok := api.(interface{ EndStreams() }); ok {
		es.EndStreams()
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		g.idle = nil
		g.mu.Unlock()
		g.settle(api, false) // down again if it was down
		return context.Cause(ctx)
	}
}

// open lets requests through to api, and the held ones go on.
func (g *gate) open(api http.Handler) { g.settle(api, false) }

// fail leaves the gate down: held requests and new ones get the 503.
func (g *gate) fail() { g.settle(nil, false) }

// stop answers the held requests and every new one with the restarting
// 503, at once: the process is about to re-exec, and the http.Server's
// shutdown must not wait for requests that cannot be served. open or fail
// ends it. The caller has closed the gate.
func (g *gate) stop() { g.settle(nil, true) }

// settle ends a restart: the gate passes requests to api (down if nil),
// or answers every one with the restarting 503 if stopping, and the held
// requests go on.
func (g *gate) settle(api http.Handler, stopping bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.api, g.stopping = api, stopping
	if g.reopened != nil {
		close(g.reopened)
		g.reopened = nil
	}
}

// fromRequest reports whether ctx is, or derives from, the context of a
// request that went through g.
func (g *gate) fromRequest(ctx context.Context) bool {
	return ctx.Value(requestKey{}) == g
}
