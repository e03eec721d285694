package logstore

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds of the entries a Handler stores: the server's events are small,
// and nothing a caller logs (an error's text, a stack) may make one large.
const (
	// MaxEventMessage is the most bytes of an event's message kept.
	MaxEventMessage = 1024
	// MaxEventText is the most bytes of one string attribute kept.
	MaxEventText = 4096
	// MaxEventAttrs is the most attributes (groups' members included) an
	// event stores; the rest are dropped.
	MaxEventAttrs = 64
)

// Handler is a log/slog handler that writes every record to a Store as
// well as to another handler (the server's stderr), as PocketBase keeps
// its own events in its log store beside the request logs. A stored event
// has the record's level (slog's: -4 debug, 0 info, 4 warn, 8 error), its
// message and its attributes as data, groups as nested objects; it never
// has data.type "request" (a top-level attribute named type is stored as
// eventType), so the filter data.type = "request" tells the request logs
// apart.
//
// What is stored follows the store's settings (logs.maxDays and
// logs.minLevel, applied live by SetRetention); what the other handler
// prints follows its own level. Handle never waits for the disk: it costs
// what Add costs. The store is the one store returns at the moment of the
// call, nil while none is open (events then reach the other handler only).
// The store's own Options.Logger must not be a Handler over that store:
// Add logs a full queue under its lock.
//
// A message is stored with its non-printable characters (control
// characters, line and paragraph separators, format characters) written
// as Go escapes (\n, \r, \x00, \u2028), so that it stays one line of text.
// A string attribute is cut at MaxEventText bytes; numbers are stored as
// numbers, durations and errors as their text, times as RFC 3339.
type Handler struct {
	next  slog.Handler
	store func() *Store
	goas  []groupOrAttrs // WithGroup and WithAttrs, in order
}

// groupOrAttrs is one WithGroup (group set) or WithAttrs call.
type groupOrAttrs struct {
	group string
	attrs []slog.Attr
}

// NewHandler returns a Handler that writes to next and to the store that
// store returns (nil: none).
func NewHandler(next slog.Handler, store func() *Store) *Handler {
	return &Handler{next: next, store: store}
}

// Enabled reports whether next or the store takes records of level.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level) || h.target(level) != nil
}

// target returns the store if it takes records of level, else nil.
func (h *Handler) target(level slog.Level) *Store {
	st := h.store()
	if st == nil || st.maxDays.Load() == 0 || int64(level) < st.minLevel.Load() {
		return nil
	}
	return st
}

// Handle stores r and hands it to next (if next takes its level). It
// returns next's error.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if st := h.target(r.Level); st != nil {
		st.Add(Entry{Level: int(r.Level), Message: EventText(r.Message), Attrs: h.data(r)})
	}
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

// WithAttrs returns a Handler whose records carry attrs too.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	return h.with(groupOrAttrs{attrs: attrs}, h.next.WithAttrs(attrs))
}

// WithGroup returns a Handler whose later attributes are members of name.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return h.with(groupOrAttrs{group: name}, h.next.WithGroup(name))
}

func (h *Handler) with(g groupOrAttrs, next slog.Handler) *Handler {
	goas := make([]groupOrAttrs, len(h.goas), len(h.goas)+1)
	copy(goas, h.goas)
	return &Handler{next: next, store: h.store, goas: append(goas, g)}
}

// data builds the data object of r: the attributes of WithAttrs and of
// the record, each under the groups opened before it. Empty groups are
// left out, as slog's handlers do.
func (h *Handler) data(r slog.Record) map[string]any {
	d := eventData{root: map[string]any{}, left: MaxEventAttrs}
	var path []string
	for _, g := range h.goas {
		if g.group != "" {
			path = append(path, g.group)
			continue
		}
		for _, a := range g.attrs {
			d.add(path, a)
		}
	}
	r.Attrs(func(a slog.Attr) bool {
		d.add(path, a)
		return d.left > 0
	})
	return d.root
}

// eventData is a data object being built, with the number of attributes
// it may still take.
type eventData struct {
	root map[string]any
	left int
}

// add sets a under the groups path (created as needed).
func (d *eventData) add(path []string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if d.left <= 0 || a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		members := a.Value.Group()
		if a.Key != "" {
			path = append(path[:len(path):len(path)], a.Key)
		}
		for _, m := range members {
			d.add(path, m)
		}
		return
	}
	m := d.root
	for _, g := range path {
		sub, ok := m[g].(map[string]any)
		if !ok {
			sub = map[string]any{}
			m[g] = sub
		}
		m = sub
	}
	key := a.Key
	if len(path) == 0 && key == "type" {
		key = "eventType"
	}
	m[validText(key)] = eventValue(a.Value)
	d.left--
}

// eventValue is v as a JSON value of the kinds encoding/json decodes to.
func eventValue(v slog.Value) any {
	switch v.Kind() {
	case slog.KindString:
		return eventString(v.String())
	case slog.KindInt64:
		return float64(v.Int64())
	case slog.KindUint64:
		return float64(v.Uint64())
	case slog.KindFloat64:
		if f := v.Float64(); !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f
		}
		return strconv.FormatFloat(v.Float64(), 'g', -1, 64)
	case slog.KindBool:
		return v.Bool()
	case slog.KindDuration:
		return v.Duration().String()
	case slog.KindTime:
		return v.Time().UTC().Format(time.RFC3339Nano)
	}
	return anyValue(v.Any())
}

// anyValue is an attribute of kind Any as a JSON value: an error or a
// Stringer as its text, a value encoding/json encodes within MaxEventText
// as that JSON, anything else as its fmt text.
func anyValue(x any) any {
	switch x := x.(type) {
	case nil:
		return nil
	case error:
		return eventString(x.Error())
	case fmt.Stringer:
		return eventString(x.String())
	case []byte:
		return eventString(string(x))
	}
	if b, err := json.Marshal(x); err == nil && len(b) <= MaxEventText {
		var v any
		if json.Unmarshal(b, &v) == nil {
			return v
		}
	}
	return eventString(fmt.Sprint(x))
}

// eventString is s cut to MaxEventText bytes (on a character boundary,
// with "..." after) and made valid UTF-8.
func eventString(s string) string {
	return validText(CutText(s, MaxEventText))
}

// CutText cuts s to at most n bytes on a character boundary, plus "..."
// when it cut: the bound of a logged string.
func CutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// EventText is msg as a Handler stores it: cut to MaxEventMessage bytes,
// valid UTF-8, and with every non-printable character but the space
// written as a Go escape (strconv.Quote's: \n, \r, \t, \x00, \u2028), so
// that a message is always one line that shows what it holds.
func EventText(msg string) string {
	msg = validText(CutText(msg, MaxEventMessage))
	clean := true
	for _, r := range msg {
		if r != ' ' && !strconv.IsPrint(r) {
			clean = false
			break
		}
	}
	if clean {
		return msg
	}
	var b strings.Builder
	for _, r := range msg {
		if r == ' ' || strconv.IsPrint(r) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRune(r)
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}
