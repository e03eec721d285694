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
// 5xx, 429, any 4xx but 400 and 413) is retried, the same batch, after a
// back-off that doubles from MinBackoff to MaxBackoff (1 s to a minute),
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
// entries are behind, exported, failed and lost, and the last success and
// error, for GET /api/logs/export (package strongbox/httpapi/api).
package otlp
