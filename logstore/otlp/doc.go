// Package otlp exports the log store's entries to the user's own log
// engine over OTLP/HTTP (OpenTelemetry Protocol, logs signal), at least
// once. It knows nothing of the store or the server: its caller gives it
// a Source (package strongbox/httpapi/app reads logstore.Store.After and
// maps each entry to a Record) and runs it.
//
// # Configuration
//
// FromEnv reads the standard OTel environment variables, as every OTel
// SDK does: OTEL_EXPORTER_OTLP_LOGS_ENDPOINT (the full URL, such as
// http://collector:4318/v1/logs) or OTEL_EXPORTER_OTLP_ENDPOINT (a base
// URL: /v1/logs is appended to its path); OTEL_EXPORTER_OTLP_LOGS_HEADERS
// or OTEL_EXPORTER_OTLP_HEADERS (key=value,…, values percent-decoded:
// an API key; secrets, never logged, shown or quoted in an error);
// OTEL_EXPORTER_OTLP_LOGS_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL
// (http/protobuf, the default, or http/json; grpc is refused);
// OTEL_EXPORTER_OTLP_LOGS_TIMEOUT or OTEL_EXPORTER_OTLP_TIMEOUT (the
// deadline of one request in milliseconds, 10000 by default);
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (key=value,… too). With
// no endpoint there is no export. A malformed value is an error naming
// the variable.
//
// # Encoding
//
// The body is an ExportLogsServiceRequest (one ResourceLogs, one
// ScopeLogs, the batch's LogRecords), written by hand: AppendProto in
// protobuf, with the field numbers of opentelemetry-proto v1.11
// (opentelemetry/proto/collector/logs/v1/logs_service.proto,
// opentelemetry/proto/logs/v1/logs.proto,
// opentelemetry/proto/common/v1/common.proto,
// opentelemetry/proto/resource/v1/resource.proto), and AppendJSON in the
// OTLP JSON encoding (lowerCamelCase keys, 64-bit integers as strings,
// enums as numbers). A record's time_unix_nano and
// observed_time_unix_nano are its creation time; severity_number is the
// slog level plus 9 (debug 5, info 9, warn 13, error 17) and
// severity_text slog's name (DEBUG, INFO, WARN, ERROR); the body is the
// message, as a string. Every body is gzipped (Content-Encoding: gzip),
// which OTLP/HTTP receivers accept.
//
// # Delivery
//
// The log store is the buffer, and the export a reader of it with a
// durable cursor (the directory's id key and the sequence number of the
// last entry acknowledged), saved in a file beside the store (fsynced,
// renamed into place, the directory fsynced) only once the receiver
// answered 2xx for a batch. Run reads up to Batch entries after the
// cursor, sends them, saves the cursor and goes on; caught up, it looks
// for new entries every Poll. After a crash (kill -9) it starts again
// from the last batch acknowledged: the receiver gets at most one batch
// twice, and can drop those by log.record.uid. The export runs on a
// goroutine of its own and reads the store as a query does, so it never
// blocks or slows a request.
//
// A request that fails (no answer within the timeout, a network error,
// 5xx, 429, any 4xx but 400 and 413, a redirect: none is followed, as it
// would carry the headers elsewhere) is retried, the same batch, after a
// back-off that doubles from MinBackoff to MaxBackoff (1 s to 15 s),
// of which a random half ("equal jitter"), or after the receiver's
// Retry-After on a 429 or 503 (at most 10 minutes); the export catches up
// when the receiver returns. A 400 or 413 (the receiver refuses the data,
// and would refuse it again) is logged, counted in Failed, and the batch
// skipped. Entries that retention or the size cap deleted before they
// were exported are counted in Lost and logged, with how many and why, as
// one warning per batch that found them gone. A log directory with
// another key (a new or restored one) is exported from its oldest entry;
// a store whose sequence went back (a restored backup of the same
// directory) from its newest.
//
// State reports the endpoint (scheme, host and path only), how many
// entries are behind (kept current while a batch waits for the receiver),
// exported, failed and lost, the creation time of the oldest entry not yet
// acknowledged (Oldest), and the last success and error, for
// GET /api/logs/export (package strongbox/httpapi/api), the dashboard's
// logs settings and the strongbox_logs_export* metrics (package
// strongbox/httpapi/app gathers them; this package imports no metrics).
//
// # Figures
//
// Measured on a shared 2-core machine (load average 6 to 8 from other
// work, so spreads are wide), VictoriaLogs v1.52.1 on loopback, the
// default batch of 1,000, http/protobuf:
//
//	drain of a 1,000,000-log backlog (logs seed), from the server's start to behind = 0
//	  STRONGBOX_EXPORT_MILLION=1 STRONGBOX_VICTORIALOGS=… go test -count=1 -v -run TestExportMillion .
//	  run 1: 66.4 s, 15,072 logs/s, RSS 59 / 69 / 70 MiB (min / median / max, every 0.5 s)
//	  run 2: 55.9 s, 17,892 logs/s, RSS 62 / 69 / 70 MiB
//	  run 3: 53.7 s, 18,621 logs/s, RSS 59 / 69 / 69 MiB
//	  median 17,900 logs/s; RSS flat at about 69 MiB all along
//
//	catch-up after VictoriaLogs stopped 60 s under 1,000 logs/s (GET /api/health, 10 paced workers)
//	  STRONGBOX_EXPORT_CATCHUP=1 STRONGBOX_VICTORIALOGS=… go test -count=1 -v -run TestExportCatchUp .
//	  with MaxBackoff a minute, one run: 997 requests/s, caught up (at most one batch behind)
//	    33.3 s after the receiver's start
//	  with MaxBackoff 15 s (now), one run: 51,091 logs behind at the receiver's start, caught up
//	    2.3 s after it
//
// The catch-up is mostly the back-off: after a long outage the export
// waits up to MaxBackoff (a random half of 7.5 to 15 s) before the retry
// that finds the receiver back, then drains the minute's 60,000 logs in
// about 4 s at the rate above: under 20 s in all. With a minute's
// back-off it was up to 32 s of waiting, hence the 15 s cap (OTel's SDKs
// cap theirs at 30 s and give up after a minute; this export never gives
// up, the store being its buffer).
//
//	/api/health with the export on (each request a log, exported) and off, alternating
//	  CGO_ENABLED=0 go build -o /tmp/x/strongbox . && VL=… PAIRS=3 sh testdata/export-health-wrk.sh
//	  (wrk -t2 -c16 -d10s per run)
//	  pair 1 (off, on):  7,945  6,956 req/s  (on -12%)
//	  pair 2 (on, off):  6,206  8,882 req/s  (on -30%)
//	  pair 3 (off, on): 10,010  8,650 req/s  (on -14%)
//	  medians: off 8,882, on 6,956 (-22%): not within 5% here
//
//	the same with a receiver that only reads and acknowledges (testdata/otlpsink), nothing else running
//	  go build -o /tmp/x/otlpsink ./testdata/otlpsink && VL=/tmp/x/otlpsink DISCARD=1 PAIRS=4 sh testdata/export-health-wrk.sh
//	  (twice: 8 pairs)
//	  off: 20,257 21,618 21,904 21,914 22,767 22,991 22,998 25,005 req/s, median 22,340
//	  on:  19,472 19,912 19,924 20,423 20,617 21,700 22,569 23,832 req/s, median 20,520 (-8%)
//
// On two cores the "on" runs share them with the export's reading,
// encoding and gzip of every log (and, in the first set, with VictoriaLogs
// ingesting about 7,000 logs/s); the "off" runs have both cores to
// themselves. With the receiver out of the way the cost is 8% at some
// 21,000 requests (and so logs) a second with both cores busy: the CPU
// the export spends, not a wait, for it never holds a lock a request needs
// (TestExportHangingReceiver). The 5% is not met on a saturated
// two-core machine.
package otlp
