package api

import (
	"encoding/json"
	"net/http"
)

// Where the OAuth2 redirect sends the browser, relative to
// /api/oauth2-redirect (so that they hold behind a proxy that mounts the
// API under a prefix): pages strongbox serves itself. PocketBase
// redirects to its admin UI ("../_/#/auth/oauth2-redirect-success" and
// "-failure"), pages strongbox's dashboard does not have; the SDK does not
// look at the page, it closes the popup once the message has come.
const (
	oauth2SuccessLocation = "oauth2-redirect-success"
	oauth2FailureLocation = "oauth2-redirect-failure"
)

// oauth2Pages are the two pages the redirect ends on: complete HTML, no
// script, no style, nothing loaded from elsewhere. The texts are
// PocketBase's (its answer when it has no admin UI).
var oauth2Pages = map[string][]byte{
	oauth2SuccessLocation: oauth2Page("Signed in", "Auth completed. You can close this window and go back to the app."),
	oauth2FailureLocation: oauth2Page("Sign-in failed", "Failed to authenticate. You can close this window and go back to the app to try again."),
}

func oauth2Page(title, text string) []byte {
	return []byte("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" +
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n" +
		"<title>" + title + "</title>\n</head>\n<body>\n<h1>" + title + "</h1>\n<p>" + text + "</p>\n</body>\n</html>\n")
}

// oauth2PageCSP forbids the pages everything: they need nothing.
const oauth2PageCSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// oauth2Message is the data of the "@oauth2" event, keys in
// PocketBase's order; error only when there is one.
type oauth2Message struct {
	State string `json:"state"`
	Code  string `json:"code"`
	Error string `json:"error,omitempty"`
}

// handleOAuth2Redirect handles GET|POST /api/oauth2-redirect, where an
// OAuth2 provider sends the browser back (in the SDK's popup) with state,
// code and error: in the query of a GET, or in the form (or JSON) body of
// a POST (Apple's response_mode=form_post). The state is the realtime
// client id the SDK put in the provider's URL: if that client is
// subscribed to "@oauth2", it is sent {state, code[, error]} and
// unsubscribed from the topic. The browser is then redirected (307 for a
// GET, 303 otherwise, as PocketBase does) to the success page, or to the
// failure page when no client was sent the message, or the provider
// answered an error or no code. Nothing here is an error envelope: the
// reader is a person in a popup. The request is not logged, as
// PocketBase does not log it (its URL holds the code).
func (s *Server) handleOAuth2Redirect(w http.ResponseWriter, r *http.Request) error {
	st := stateOf(r)
	st.quiet = true
	var m oauth2Message
	if r.Method == http.MethodPost {
		b, err := bind(r)
		if err != nil {
			s.log.Debug("oauth2 redirect: cannot read the body", "err", err)
			return oauth2Redirect(w, r, false)
		}
		for _, f := range []struct {
			key string
			v   *string
		}{{"state", &m.State}, {"code", &m.Code}, {"error", &m.Error}} {
			if v, ok := lookup(b.vals, f.key).(string); ok {
				*f.v = v
			}
		}
	} else {
		q := query(r)
		m.State, m.Code, m.Error = q.Get("state"), q.Get("code"), q.Get("error")
	}
	if m.State == "" {
		return oauth2Redirect(w, r, false)
	}
	data, err := json.Marshal(m)
	if err != nil {
		return oauth2Redirect(w, r, false)
	}
	if !s.realtime.sendOAuth2(m.State, data) {
		return oauth2Redirect(w, r, false)
	}
	return oauth2Redirect(w, r, m.Error == "" && m.Code != "")
}

// oauth2Redirect redirects to the success or the failure page.
func oauth2Redirect(w http.ResponseWriter, r *http.Request, ok bool) error {
	loc := oauth2FailureLocation
	if ok {
		loc = oauth2SuccessLocation
	}
	status := http.StatusSeeOther
	if r.Method == http.MethodGet {
		status = http.StatusTemporaryRedirect
	}
	h := w.Header()
	h.Set("Location", loc)
	h.Set("Cache-Control", "no-store")
	// The URL of the redirect holds the code: no page the browser goes
	// to next learns it from a Referer.
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	return nil
}

// handleOAuth2Page handles GET /api/oauth2-redirect-success and
// GET /api/oauth2-redirect-failure: a small page that tells the person to
// close the window.
func (s *Server) handleOAuth2Page(name string) handler {
	page := oauth2Pages[name]
	return func(w http.ResponseWriter, r *http.Request) error {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", oauth2PageCSP)
		h.Set("Cache-Control", "no-store")
		h.Set("Referrer-Policy", "no-referrer")
		w.WriteHeader(http.StatusOK)
		w.Write(page)
		return nil
	}
}
