package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"strongbox/authn"
	"strongbox/authn/validation"
	"strongbox/logstore/journal"
)

// Messages the interface document (§7) and PocketBase name exactly.
const (
	msgBadRequest        = "Something went wrong while processing your request."
	msgNotFound          = "The requested resource wasn't found."
	msgAuthRequired      = "The request requires valid record authorization token."
	msgNotAllowed        = "The authorized record is not allowed to perform this action."
	msgSuperusersOnly    = "Only superusers can perform this action."
	msgLoadFailed        = "An error occurred while loading the submitted data."
	msgValidationFailed  = "An error occurred while validating the submitted data."
	msgAuthFailed        = "Failed to authenticate."
	msgNoCollection      = "Missing or invalid collection context."
	msgNoAuthCollection  = "Missing or invalid auth collection context."
	msgTooLarge          = "Request entity too large."
	msgUnsupportedType   = "Unsupported Content-Type."
	msgTooManyRequests   = "Too Many Requests."
	msgInvalidFilter     = "Something went wrong while processing your request. Invalid filter."
	msgPasswordAuthOff   = "The collection is not configured to allow password authentication."
	msgAuthRuleFailed    = "The request doesn't satisfy the collection requirements to authenticate."
	msgMissingCollection = "Missing collection context."

	// Messages of the answers net/http or ServeMux would give in plain
	// text, and of the server's own limits; PocketBase has none.
	msgBodyTimeout         = "The request body was not received in time."
	msgServerBusy          = "The server is busy, try again later."
	msgTooManyConns        = "Too many open connections, try again later."
	msgRedirect            = "Temporary Redirect."
	msgHeadersTooLarge     = "Request header fields too large."
	msgUnsupportedEncoding = "Unsupported transfer encoding."
	msgUnsupportedVersion  = "Unsupported HTTP version."
	msgExpectationFailed   = "Expectation failed: only 100-continue is supported."
)

// Messages of a change the disk refused. The interface document and
// PocketBase name none (it answers 400 or 500 with a generic
// message); these say what happened and that nothing was saved, never
// where. A full disk is 507 Insufficient Storage (RFC 4918 §11.5: "unable
// to store the representation needed to successfully complete the request
// … considered to be temporary"); any other I/O failure is 503, since the
// store retries by itself and the request may succeed later, and unlike a
// 500 it is not a bug of the server.
const (
	msgStorageFull    = "Storage is full: the change was not saved."
	msgStorageFailing = "Storage is failing: the change was not saved."
)

// Error is an error with the HTTP status, the public message and the
// per-field data the client sees. Err is the cause: it goes to the server's
// log and the request log only, never to the client, because error details
// may contain sensitive information.
type Error struct {
	Status  int
	Message string
	Data    validation.Errors // per-field validation errors; nil renders as {}
	Err     error
	// RetryAfter, when positive, is sent as the Retry-After header in
	// whole seconds, rounded up (RFC 9110 §10.2.3, delta-seconds): how
	// long a refused client should wait before it asks again.
	RetryAfter time.Duration

	// throttle names the limit that refused the request (a 429), for
	// the metrics (Observer.Refused): rate_limit, login, otp, mail, busy.
	throttle string
}

// throttled marks e as the refusal of the limit named (Error.throttle).
func throttled(e *Error, limit string) *Error {
	e.throttle = limit
	return e
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%d %s: %v", e.Status, e.Message, e.Err)
	}
	return fmt.Sprintf("%d %s", e.Status, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

func newError(status int, msg string, cause error) *Error {
	return &Error{Status: status, Message: msg, Err: cause}
}

func errBadRequest(msg string, cause error) *Error {
	return newError(http.StatusBadRequest, msg, cause)
}
func errNotFound(cause error) *Error { return newError(http.StatusNotFound, msgNotFound, cause) }
func errUnauthorized() *Error        { return newError(http.StatusUnauthorized, msgAuthRequired, nil) }
func errForbidden(msg string) *Error { return newError(http.StatusForbidden, msg, nil) }

// errValidation is a 400 with the per-field errors errs in data.
func errValidation(msg string, errs validation.Errors) *Error {
	return &Error{Status: http.StatusBadRequest, Message: msg, Data: errs}
}

// validationData returns the validation failures a lower package returned
// in err, or nil if it holds none. They render as the envelope's data: each
// field as {code, message[, params]}, nested like the input.
func validationData(err error) validation.Errors {
	if ve, ok := errors.AsType[validation.Errors](err); ok {
		return ve
	}
	return nil
}

// envelope is the error body of §2.5, keys in PocketBase's order.
type envelope struct {
	Data    map[string]any `json:"data"`
	Message string         `json:"message"`
	Status  int            `json:"status"`
}

// asError turns any error a handler returns into the *Error to render.
// Errors of lower packages that mean something to a client are mapped here;
// anything else is an internal failure: 500 with no detail.
func asError(err error) *Error {
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return newError(http.StatusRequestEntityTooLarge, msgTooLarge, err)
	}
	if errors.Is(err, authn.ErrBusy) {
		return throttled(newError(http.StatusTooManyRequests, msgTooManyRequests, err), "busy")
	}
	if errors.Is(err, journal.ErrStorageFull) {
		return newError(http.StatusInsufficientStorage, msgStorageFull, err)
	}
	if errors.Is(err, journal.ErrStorageFailed) {
		return newError(http.StatusServiceUnavailable, msgStorageFailing, err)
	}
	return newError(http.StatusInternalServerError, msgBadRequest, err)
}

// storageHealth returns the names of the stores that cannot save changes,
// in a fixed order, and whether all of them failed for lack of space.
func (s *Server) storageHealth() (degraded []string, full bool) {
	full = true
	for _, st := range []struct {
		name   string
		health func() error
	}{{"auth", s.auth.Health}, {"settings", s.settings.Health}, {"logs", s.logs.Health}} {
		if err := st.health(); err != nil {
			degraded = append(degraded, st.name)
			full = full && errors.Is(err, journal.ErrStorageFull)
		}
	}
	s.noteStorage(degraded, full)
	return degraded, full
}

// noteStorage logs a change of the stores that cannot save changes, as
// storageHealth sees them (on a health check, and on a write refused for
// storage): a warning naming them when storage degrades or other stores
// fail, and one when every store saves changes again. While nothing
// changes it costs an atomic load (health checks call it).
func (s *Server) noteStorage(degraded []string, full bool) {
	now := strings.Join(degraded, ",")
	if now != "" && full {
		now += " (full)"
	}
	was := s.storageSeen.Load()
	if was == nil && now == "" || was != nil && *was == now || !s.storageSeen.CompareAndSwap(was, &now) {
		return // unchanged, or another request noted the change
	}
	if now == "" {
		s.log.Info("storage recovered: every store saves changes again", "was", *was)
		return
	}
	s.log.Warn("storage degraded: stores cannot save changes", "stores", degraded, "full", full)
}

// renderError writes err as the JSON error envelope, unless the response has
// already started (then it is only logged).
func (s *Server) renderError(w http.ResponseWriter, r *http.Request, err error) {
	e := asError(err)
	st := stateOf(r)
	if st != nil {
		st.err = e
	}
	switch {
	case e.Status < 500 || e.Err == nil: // a nil cause was logged where it arose, or is the busy 503
	case errors.Is(e.Err, journal.ErrStorageFull) || errors.Is(e.Err, journal.ErrStorageFailed):
		// A full or failing disk refuses every write until it recovers:
		// one line every capLogEvery at most, with the count, not one per request
		// (the stores log when a failure starts and ends).
		s.storageHealth()
		s.storageLogMu.Lock()
		refused, ok := s.storageLog.event()
		s.storageLogMu.Unlock()
		if ok {
			s.log.Warn("requests refused: storage cannot save changes", "refused", refused, "last", r.Method+" "+r.URL.Path, "err", e.Err)
		}
	default:
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", e.Err)
	}
	if st != nil && st.wrote {
		s.log.Warn("error after the response started", "path", r.URL.Path, "err", e)
		return
	}
	data := make(map[string]any, len(e.Data))
	for k, v := range e.Data {
		data[k] = v
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", retryAfterSeconds(e.RetryAfter))
	}
	s.writeBody(w, e.Status, envelope{Data: data, Message: e.Message, Status: e.Status})
}

// retryAfterSeconds renders d as Retry-After's delta-seconds, rounded up
// so that a client waiting that long finds the limit past.
func retryAfterSeconds(d time.Duration) string {
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
}

// Unavailable returns a handler that answers every request with a 503
// error envelope carrying msg, and the headers of every response: for the
// requests that no Server can take, such as those that arrive while the
// server restarts.
func Unavailable(msg string) http.Handler {
	body, _ := marshal(envelope{Data: map[string]any{}, Message: msg, Status: http.StatusServiceUnavailable})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		for _, kv := range securityHeaderValues {
			h.Set(kv[0], kv[1])
		}
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write(body)
	})
}

// jsonAppender is a value that writes its own JSON, byte for byte what
// encoding/json writes for it (a page of logs, a log entry), in one pass
// instead of encoding/json's two (MarshalJSON, then a check and compaction
// of its output).
type jsonAppender interface {
	AppendJSON(b []byte) ([]byte, error)
}

// marshal encodes v as PocketBase does: encoding/json with HTML escaping and
// a trailing newline (by v's AppendJSON when it has one: the same bytes).
func marshal(v any) ([]byte, error) {
	if a, ok := v.(jsonAppender); ok {
		b, err := a.AppendJSON(make([]byte, 0, 4096))
		if err != nil {
			return nil, err
		}
		return append(b, '\n'), nil
	}
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeBody marshals v before writing the status, so that a marshalling
// failure can still become a 500.
func (s *Server) writeBody(w http.ResponseWriter, status int, v any) {
	b, err := marshal(v)
	if err != nil {
		s.log.Error("marshal response", "err", err)
		status = http.StatusInternalServerError
		b = []byte(`{"data":{},"message":"Something went wrong while processing your request.","status":500}` + "\n")
	}
	h := w.Header()
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	w.Write(b)
}
