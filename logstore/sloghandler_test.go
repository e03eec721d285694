package logstore

import (
	"bytes"
	"errors"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestHandlerStores: each record reaches the store (level, message, data
// with groups) and the other handler; the store's minimum level and a
// missing store decide what is stored, the other handler's level what is
// printed.
func TestHandlerStores(t *testing.T) {
	t.Parallel()
	type want struct {
		Level int
		Msg   string
		Data  map[string]any
	}
	tests := []struct {
		name     string
		minLevel int
		noStore  bool
		log      func(l *slog.Logger)
		want     []want
		printed  string // a substring of the text handler's output, or "" for none
	}{
		{"levels", 0, false, func(l *slog.Logger) {
			l.Debug("dbg")
			l.Info("inf", "n", 3)
			l.Warn("wrn")
			l.Error("err", "err", errors.New("boom"))
		}, []want{
			{0, "inf", map[string]any{"n": 3.0}},
			{4, "wrn", map[string]any{}},
			{8, "err", map[string]any{"err": "boom"}},
		}, "level=ERROR msg=err err=boom"},
		{"debug stored at minLevel -4, not printed", -4, false, func(l *slog.Logger) { l.Debug("dbg", "k", "v") },
			[]want{{-4, "dbg", map[string]any{"k": "v"}}}, ""},
		{"below minLevel", 5, false, func(l *slog.Logger) { l.Warn("wrn") }, nil, "msg=wrn"},
		{"no store", 0, true, func(l *slog.Logger) { l.Error("e") }, nil, "msg=e"},
		{"groups and With", 0, false, func(l *slog.Logger) {
			l.With("a", 1).WithGroup("g").With("b", true).WithGroup("empty").Info("m", slog.Group("h", "c", "x"), "d", 2*time.Second)
		}, []want{{0, "m", map[string]any{"a": 1.0, "g": map[string]any{"b": true, "empty": map[string]any{
			"h": map[string]any{"c": "x"}, "d": "2s"}}}}}, "g.empty.h.c=x"},
		{"empty group left out", 0, false, func(l *slog.Logger) { l.WithGroup("g").Info("m") },
			[]want{{0, "m", map[string]any{}}}, "msg=m"},
		{"type is not request", 0, false, func(l *slog.Logger) { l.Info("m", "type", "request") },
			[]want{{0, "m", map[string]any{"eventType": "request"}}}, "type=request"},
		{"values", 0, false, func(l *slog.Logger) {
			l.Info("m", "nan", math.NaN(), "u", uint64(7), "list", []string{"a", "b"}, "nil", nil,
				"t", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "bytes", []byte("raw"))
		}, []want{{0, "m", map[string]any{"nan": "NaN", "u": 7.0, "list": []any{"a", "b"}, "nil": nil,
			"t": "2026-01-02T03:04:05Z", "bytes": "raw"}}}, "msg=m"},
		{"control characters escaped", 0, false, func(l *slog.Logger) { l.Info("a\r\nX: y\x00\u2028z\tq") },
			[]want{{0, `a\r\nX: y\x00\u2028z\tq`, map[string]any{}}}, `msg="a\r\nX: y`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := testOptions(newClock(), &logRecorder{})
			opts.MinLevel = tt.minLevel
			st := mustOpen(t, t.TempDir(), opts)
			var out bytes.Buffer
			target := st
			if tt.noStore {
				target = nil
			}
			tt.log(slog.New(NewHandler(slog.NewTextHandler(&out, nil), func() *Store { return target })))
			if err := st.Flush(); err != nil {
				t.Fatal(err)
			}
			pg, err := st.List(Query{Sort: "rowid", PerPage: 100})
			if err != nil {
				t.Fatal(err)
			}
			var got []want
			for _, e := range pg.Items {
				got = append(got, want{e.Level, e.Message, e.Data()})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("stored (-want +got):\n%s", diff)
			}
			if tt.printed == "" && out.Len() > 0 || !strings.Contains(out.String(), tt.printed) {
				t.Errorf("printed %q, want it to contain %q", out.String(), tt.printed)
			}
		})
	}
}

// TestHandlerBounds: long strings and messages are cut, and no event
// stores more than MaxEventAttrs attributes.
func TestHandlerBounds(t *testing.T) {
	t.Parallel()
	st := mustOpen(t, t.TempDir(), testOptions(newClock(), &logRecorder{}))
	l := slog.New(NewHandler(slog.DiscardHandler, func() *Store { return st }))
	args := []any{"long", strings.Repeat("é", MaxEventText)}
	for i := range 2 * MaxEventAttrs {
		args = append(args, slog.Int("k"+strings.Repeat("x", i), i))
	}
	l.Info(strings.Repeat("m", 2*MaxEventMessage), args...)
	if err := st.Flush(); err != nil {
		t.Fatal(err)
	}
	pg, err := st.List(Query{PerPage: 10})
	if err != nil || len(pg.Items) != 1 {
		t.Fatalf("List: %v, %d items", err, len(pg.Items))
	}
	e := pg.Items[0]
	if len(e.Message) != MaxEventMessage+3 {
		t.Errorf("message of %d bytes, want %d", len(e.Message), MaxEventMessage+3)
	}
	d := e.Data()
	if len(d) != MaxEventAttrs {
		t.Errorf("%d attributes stored, want %d", len(d), MaxEventAttrs)
	}
	if s, _ := d["long"].(string); len(s) > MaxEventText+3 || !strings.HasSuffix(s, "é...") {
		t.Errorf("long value of %d bytes (%q…), want it cut at %d", len(s), s[:min(len(s), 10)], MaxEventText)
	}
}
