// Package metrics writes the server's metrics in the Prometheus text
// exposition format 0.0.4 and serves them at GET /metrics, on a listener
// of its own that strongbox/httpapi/app opens only when
// STRONGBOX_METRICS_ADDR (serve --metrics) names an address: off by
// default, so that the metrics are never exposed with the API by
// accident. It imports nothing from the project; the stores know nothing
// of it.
//
// # The pieces
//
//   - Writer collects one scrape's samples (Counter, Gauge, Histogram) and
//     writes them: each family once, with its HELP and TYPE lines, families
//     sorted by name and samples by their labels, label values escaped (\\,
//     \", \n), so equal values give the same bytes.
//   - Histogram counts observations in fixed buckets with atomic adds
//     (DurationBuckets are the OpenTelemetry semantic conventions' buckets
//     of http.server.request.duration, 0.005 s to 10 s).
//   - Registry holds gather functions, Register(func(*Writer)); a scrape
//     runs each of them and writes the result (ServeHTTP). Other paths are
//     404 and other methods 405, in plain text, as exporters answer.
//   - API is the HTTP API's Observer (strongbox/httpapi/api): the request
//     histogram, sign-ins and throttle refusals, kept across restarts.
//   - Runtime gathers the Go runtime's basics from runtime/metrics.
//
// Nothing is copied between scrapes: app registers a function that reads
// the open stores' own counters (logstore.Store.Counters,
// mail.Queue.Stats, backup.Stats, api.Server.RealtimeStreams) when
// Prometheus asks. A component with metrics of its own (the OTLP log
// export) registers its gather function on app.Server.Metrics(), as the
// export does where app starts it (app.Server.gatherExport reads the
// exporter's plain otlp.State; logstore/otlp knows nothing of metrics):
//
//	if reg := s.Metrics(); reg != nil {
//		reg.Register(s.gatherExport)
//	}
//
// # The metrics
//
// Names follow Prometheus's conventions (base units, _total counters) and
// the OpenTelemetry semantic conventions' Prometheus names, so dashboards
// made for them work:
//
//	http_server_request_duration_seconds      histogram  http_request_method, http_route, http_response_status_code
//	strongbox_auth_sign_ins_total             counter    method (password, otp, oauth2, passkey), outcome (success, mfa_required, failure, throttled, error)
//	strongbox_throttle_refusals_total         counter    limit (rate_limit, login, otp, mail, busy, other): the 429s
//	strongbox_logs_entries                    gauge      log entries stored
//	strongbox_logs_bytes                      gauge      bytes of the log segments
//	strongbox_logs_pending_entries            gauge      queued, not yet written
//	strongbox_logs_retention_deleted_entries_total, _bytes_total  counter  deleted by retention (maxDays, the size cap)
//	strongbox_logs_dropped_entries_total      counter    dropped for a full writer queue
//	strongbox_logs_exported_total             counter    logs the OTLP receiver acknowledged (with the export on)
//	strongbox_logs_export_failed_total        counter    logs (not batches) the receiver refused for good (400), skipped
//	strongbox_logs_export_lost_total          counter    logs deleted by retention before they were exported
//	strongbox_logs_export_lag_entries         gauge      logs stored, not yet acknowledged
//	strongbox_logs_export_lag_seconds         gauge      age of the oldest of them; 0 when none
//	strongbox_stores_open                     gauge      0 while a failed restart left the stores closed
//	strongbox_mail_queue_depth, _capacity     gauge      mails waiting, and how many may
//	strongbox_mail_sent_total, _failed_total, _dropped_total  counter
//	strongbox_backups_succeeded_total, strongbox_backups_failed_total  counter  manual and automatic creates
//	strongbox_backup_last_success_timestamp_seconds, _last_duration_seconds, _last_size_bytes  gauge  (once one succeeded)
//	strongbox_realtime_connections            gauge      open GET /api/realtime streams
//	go_goroutines, go_memstats_heap_alloc_bytes, go_memstats_sys_bytes, go_gc_cycles_total, go_sched_gomaxprocs_threads, go_info, process_start_time_seconds
//
// The export's families exist only with the export on (the OTel
// variables set); their totals count from the server's start. The log
// store's totals count from its opening: a restart (a restore)
// starts them again, which Prometheus's rate() takes as a counter reset.
//
// # Bounded labels
//
// No user input becomes a label value. http_request_method is one of the
// nine standard methods or _OTHER; http_route is the ServeMux pattern of
// the route without its method (/api/collections/{collection}/records,
// never the raw path), and _OTHER when no route matched (the catch-all
// JSON 404); the status code is the server's. The other labels are fixed
// words. As a last guard each family keeps at most MaxSeries label sets,
// and counts the rest under _OTHER.
//
// # Cost
//
// Recording a request is a sync.Map lookup of its label set and four
// atomic operations, with no allocation: BenchmarkAPIRequest measures
// about 200 ns per request on 2 cores recording at once, against some
// 80 µs of CPU per /api/health request at 12,000 req/s. Measured with
// wrk -t2 -c16 -d10s on /api/health against the built binary, metrics on
// and off alternating, nine pairs on a machine other jobs loaded (load
// 6 to 9 on 2 cores): medians 11,273 req/s on and 12,018 off, the runs of
// one setting 7,400 to 16,300, so the noise hid any difference there.
package metrics
