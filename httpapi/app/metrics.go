package app

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"strongbox/httpapi/api"
	"strongbox/httpapi/metrics"
)

// Timeouts of the metrics listener: a scrape is one small GET.
const (
	metricsReadTimeout  = 10 * time.Second
	metricsWriteTimeout = 30 * time.Second
	metricsIdleTimeout  = 2 * time.Minute
)

// serverMetrics is what the server measures for /metrics: the API's
// request histogram, sign-ins and refusals (which outlive each API built
// at a restart), the outcome of backups, and the registry of gather
// functions a scrape runs. It exists whether or not MetricsAddr is set,
// so that the API records the same way either way (nothing is recorded
// when it is not set: see newServerMetrics).
type serverMetrics struct {
	api     *metrics.API
	reg     *metrics.Registry
	srv     *http.Server
	ln      net.Listener
	current func() *api.Server // the API serving now, nil while none
}

// Metrics returns the registry of the server's metrics, for a component
// (the log export) to add its gather function to: Register(func(w
// *metrics.Writer)). It is nil when Config.MetricsAddr is empty.
func (s *Server) Metrics() *metrics.Registry {
	if s.metrics == nil {
		return nil
	}
	return s.metrics.reg
}

// newServerMetrics returns the metrics of s, or nil when MetricsAddr is
// empty: the API then has no Observer, and requests record nothing.
func newServerMetrics(s *Server, start time.Time) *serverMetrics {
	if s.cfg.MetricsAddr == "" {
		return nil
	}
	m := &serverMetrics{api: metrics.NewAPI(), reg: metrics.NewRegistry(), current: s.apiServer.Load}
	m.reg.Register(metrics.Runtime(start))
	m.reg.Register(m.api.Gather)
	m.reg.Register(s.gatherStores)
	m.reg.Register(s.check.gather)
	return m
}

// listenMetrics binds MetricsAddr, if set; the caller serves it
// (serveMetrics) once the server starts.
func (m *serverMetrics) listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("app: metrics address (STRONGBOX_METRICS_ADDR, --metrics) %q: %w", addr, err)
	}
	m.ln = ln
	m.srv = &http.Server{
		Handler:           m.reg,
		ReadHeaderTimeout: metricsReadTimeout,
		ReadTimeout:       metricsReadTimeout,
		WriteTimeout:      metricsWriteTimeout,
		IdleTimeout:       metricsIdleTimeout,
		MaxHeaderBytes:    16 << 10,
	}
	return nil
}

// serve serves the metrics listener until close.
func (m *serverMetrics) serve() {
	go m.srv.Serve(m.ln)
}

// close stops the metrics listener (a scrape under way is cut).
func (m *serverMetrics) close() error {
	if m == nil || m.srv == nil {
		return nil
	}
	if err := m.srv.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// addr is the metrics listener's address, nil without one.
func (m *serverMetrics) addr() net.Addr {
	if m == nil || m.ln == nil {
		return nil
	}
	return m.ln.Addr()
}

// observer is the API's Observer, nil without metrics.
func (m *serverMetrics) observer() api.Observer {
	if m == nil {
		return nil
	}
	return m.api
}

// gatherStores writes the metrics of the open stores, the mail queue,
// the backups and the realtime streams.
func (s *Server) gatherStores(w *metrics.Writer) {
	s.capMu.RLock()
	st := s.stores
	if st != nil && st.Logs != nil {
		c := st.Logs.Counters()
		w.Gauge("strongbox_logs_entries", "Log entries stored.", float64(c.Entries))
		w.Gauge("strongbox_logs_bytes", "Bytes of the log store's segment files.", float64(c.Bytes))
		w.Gauge("strongbox_logs_pending_entries", "Log entries queued and not yet written.", float64(c.Pending))
		w.Counter("strongbox_logs_retention_deleted_entries_total", "Log entries deleted by retention (maxDays, the size cap) since the store opened.", float64(c.Retained))
		w.Counter("strongbox_logs_retention_deleted_bytes_total", "Bytes of log segments deleted by retention since the store opened.", float64(c.RetainedBytes))
		w.Counter("strongbox_logs_dropped_entries_total", "Log entries dropped for a full writer queue since the store opened.", float64(c.Dropped))
	}
	s.capMu.RUnlock()
	up := 0.0
	if st != nil {
		up = 1
	}
	w.Gauge("strongbox_stores_open", "1 while the data dir's stores are open, 0 while a failed restart left them closed.", up)
	if s.mail != nil {
		q := s.mail.Stats()
		w.Gauge("strongbox_mail_queue_depth", "Mails waiting in the queue.", float64(q.Queued))
		w.Gauge("strongbox_mail_queue_capacity", "Mails the queue may hold.", float64(q.Capacity))
		w.Counter("strongbox_mail_sent_total", "Mails delivered (or written to the outbox).", float64(q.Sent))
		w.Counter("strongbox_mail_failed_total", "Mails whose delivery failed.", float64(q.Failed))
		w.Counter("strongbox_mail_dropped_total", "Mails dropped for a full queue, or abandoned at shutdown.", float64(q.Dropped))
	}
	b := s.bstats.Snapshot()
	w.Counter("strongbox_backups_succeeded_total", "Backups created (manual and automatic).", float64(b.Succeeded))
	w.Counter("strongbox_backups_failed_total", "Backups that failed.", float64(b.Failed))
	if !b.LastSuccess.IsZero() {
		w.Gauge("strongbox_backup_last_success_timestamp_seconds", "When the last successful backup ended, in seconds since the epoch.", float64(b.LastSuccess.UnixNano())/1e9)
		w.Gauge("strongbox_backup_last_duration_seconds", "How long the last successful backup took.", b.LastDuration.Seconds())
		w.Gauge("strongbox_backup_last_size_bytes", "Size of the last successful backup's archive.", float64(b.LastSize))
	}
	if a := s.metrics.current(); a != nil {
		w.Gauge("strongbox_realtime_connections", "Realtime streams (GET /api/realtime) open.", float64(a.RealtimeStreams()))
	}
}
