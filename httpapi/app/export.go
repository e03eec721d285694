package app

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"strongbox/authn/lowprio"
	"strongbox/httpapi/metrics"
	"strongbox/httpapi/settings"
	"strongbox/logstore"
	"strongbox/logstore/otlp"
)

// ExportCursor is the file, in the data dir, where the log export keeps
// its cursor (package strongbox/logstore/otlp): not a store, so a backup
// does not copy it, and a restore moves it away with the old data (the
// restored logs are then exported from their oldest, which the receiver
// can deduplicate by log.record.uid).
const ExportCursor = "export.cursor"

// newExport makes the OTLP log export of Config.Export, if set, and
// registers its metrics, before the metrics listener serves: a scrape
// never sees the server without them. startExport starts it.
func (s *Server) newExport() {
	if s.cfg.Export == nil {
		return
	}
	var id [16]byte
	rand.Read(id[:])
	id[6], id[8] = id[6]&0x0f|0x40, id[8]&0x3f|0x80 // a version 4 UUID
	instance := fmt.Sprintf("%x-%x-%x-%x-%x", id[:4], id[4:6], id[6:8], id[8:10], id[10:])
	s.exporter = otlp.New(otlp.Options{
		Config:     *s.cfg.Export,
		Source:     s.exportSource,
		Resource:   func() otlp.Resource { return s.exportResource(instance) },
		CursorPath: filepath.Join(s.cfg.Dir, ExportCursor),
		Logger:     s.log,
	})
	if reg := s.Metrics(); reg != nil {
		reg.Register(s.gatherExport)
	}
}

// startExport starts the export newExport made, if any: it runs on a
// goroutine of its own until stopExport, reading whichever log store is
// open (none during a restart: it waits).
func (s *Server) startExport() {
	if s.exporter == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	// Reading, encoding and compressing the logs run at a lower OS
	// priority: when requests saturate the CPU they come first, and the
	// export catches up with what they leave (its cursor keeps its place).
	lowprio.Go(func() {
		defer close(done)
		s.exporter.Run(ctx)
	})
	s.stopExporter = func() { cancel(); <-done }
	s.log.Info("log export started", "endpoint", s.cfg.Export.Redacted(), "protocol", s.cfg.Export.Protocol)
}

// stopExport stops the export: a batch under way is abandoned, and sent
// again by the next start (its cursor was not saved).
func (s *Server) stopExport() {
	if s.stopExporter != nil {
		s.stopExporter()
		s.stopExporter = nil
	}
}

// ExportState returns the state of the log export, and false when it is
// off.
func (s *Server) ExportState() (otlp.State, bool) {
	if s.exporter == nil {
		return otlp.State{}, false
	}
	return s.exporter.State(), true
}

// gatherExport writes the export's metrics: what it sent, refused and
// lost since the start, and how far behind it is, in entries and in age.
func (s *Server) gatherExport(w *metrics.Writer) {
	st := s.exporter.State()
	w.Counter("strongbox_logs_exported_total", "Logs the OTLP receiver acknowledged since the start.", float64(st.Exported))
	w.Counter("strongbox_logs_export_failed_total", "Logs (not batches) the OTLP receiver refused for good (400) and the export skipped, since the start.", float64(st.Failed))
	w.Counter("strongbox_logs_export_lost_total", "Logs deleted (retention, the size cap) before they were exported, since the start.", float64(st.Lost))
	w.Gauge("strongbox_logs_export_lag_entries", "Logs stored and not yet acknowledged by the OTLP receiver.", float64(st.Behind))
	lag := 0.0
	if st.Behind > 0 && !st.Oldest.IsZero() {
		lag = max(0, time.Since(st.Oldest).Seconds())
	}
	w.Gauge("strongbox_logs_export_lag_seconds", "Age of the oldest log not yet acknowledged by the OTLP receiver; 0 when none.", lag)
}

var errNoLogStore = errors.New("app: no log store open")

// exportSource reads the open log store for the export.
func (s *Server) exportSource(after int64, n int) (otlp.Batch, error) {
	st := s.events.Load()
	if st == nil {
		return otlp.Batch{Last: after}, errNoLogStore
	}
	t, err := st.After(after, n)
	if err != nil {
		return otlp.Batch{Last: after}, err
	}
	b := otlp.Batch{Last: t.Last, Gap: t.Gap, Newest: t.Newest, Key: t.Key, Records: make([]otlp.Record, len(t.Entries))}
	for i, e := range t.Entries {
		b.Records[i] = exportRecord(e)
	}
	return b, nil
}

// followAppName keeps the application's name, the export's service.name
// when OTEL_SERVICE_NAME is unset.
func (s *Server) followAppName(v settings.Settings) {
	name := v.Meta.AppName
	s.appName.Store(&name)
}

// exportResource is the resource of the exported logs: service.name
// (OTEL_SERVICE_NAME, else service.name of OTEL_RESOURCE_ATTRIBUTES, else
// the application's name), service.version, service.instance.id (drawn at
// start) and the other attributes of OTEL_RESOURCE_ATTRIBUTES.
func (s *Server) exportResource(instance string) otlp.Resource {
	cfg := s.cfg.Export
	name := cfg.ServiceName
	var rest []otlp.KeyValue
	for _, kv := range cfg.Resource {
		switch kv.Key {
		case "service.name":
			if name == "" {
				name, _ = kv.Value.(string)
			}
		case "service.version", "service.instance.id":
		default:
			rest = append(rest, kv)
		}
	}
	if p := s.appName.Load(); name == "" && p != nil {
		name = *p
	}
	if name == "" {
		name = "strongbox"
	}
	attrs := append([]otlp.KeyValue{
		{Key: "service.name", Value: name},
		{Key: "service.version", Value: s.cfg.Version},
		{Key: "service.instance.id", Value: instance},
	}, rest...)
	return otlp.Resource{Attrs: attrs, ScopeName: "strongbox", ScopeVersion: s.cfg.Version}
}

// exportRecord maps a stored log to an OTLP record: its time, level and
// message, log.record.uid = its id, and for a request log the HTTP
// semantic-convention attributes (the url's query as the store keeps it,
// its secrets redacted) with strongbox's own under strongbox.; for any
// other log its data's keys as attributes.
func exportRecord(e logstore.Entry) otlp.Record {
	r := otlp.Record{Time: e.Created, Level: e.Level, Body: e.Message}
	attrs := []otlp.KeyValue{{Key: "log.record.uid", Value: e.ID}}
	add := func(k string, v any) {
		if s, ok := v.(string); !ok || s != "" {
			attrs = append(attrs, otlp.KeyValue{Key: k, Value: v})
		}
	}
	if q := e.Request; q != nil {
		path, query, _ := strings.Cut(q.URL, "?")
		add("http.request.method", q.Method)
		add("url.path", path)
		add("url.query", query)
		add("http.response.status_code", int64(q.Status))
		add("client.address", q.UserIP)
		add("network.peer.address", q.RemoteIP)
		add("user_agent.original", q.UserAgent)
		if q.Referer != "" {
			add("http.request.header.referer", []any{q.Referer}) // string[], as the convention has it
		}
		add("strongbox.exec_time", q.ExecTime)
		add("strongbox.auth_collection", q.Auth)
		add("strongbox.auth_id", q.AuthID)
		add("strongbox.type", "request")
		if q.Error != "" {
			add("strongbox.error", q.Error)
			add("strongbox.error_details", exportValue(q.Details))
		}
	} else {
		for _, kv := range sortedAttrs(e.Attrs) {
			add(kv.Key, kv.Value)
		}
	}
	r.Attrs = attrs
	return r
}

// sortedAttrs returns the data of an event as attributes, by key, its
// integral numbers as integers.
func sortedAttrs(m map[string]any) []otlp.KeyValue {
	out := make([]otlp.KeyValue, 0, len(m))
	for k, v := range m {
		out = append(out, otlp.KeyValue{Key: k, Value: exportValue(v)})
	}
	for i := 1; i < len(out); i++ { // few keys: insertion sort
		for j := i; j > 0 && out[j].Key < out[j-1].Key; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// exportValue converts a JSON value for OTLP: integral numbers within
// ±2^53 become int64 (JSON has one number type; OTLP tells them apart).
func exportValue(v any) any {
	switch v := v.(type) {
	case float64:
		if v == math.Trunc(v) && math.Abs(v) <= 1<<53 {
			return int64(v)
		}
		return v
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = exportValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = exportValue(e)
		}
		return out
	case string, bool, nil, int64:
		return v
	}
	return fmt.Sprint(v)
}
