package otlp

import (
	"encoding/binary"
	"log/slog"
	"math"
	"slices"
	"time"
)

// Record is one log record as the export sends it.
type Record struct {
	Time  time.Time
	Level int    // a log/slog level: -4 debug, 0 info, 4 warn, 8 error
	Body  string // the message
	Attrs []KeyValue
}

// KeyValue is an attribute. Value is nil, a bool, an int64 (or int), a
// float64, a string, a []any or a map[string]any of those (the values
// encoding/json produces, with integers as int64); any other type is sent
// as an empty value.
type KeyValue struct {
	Key   string
	Value any
}

// Resource describes the source of the logs: service.name and the other
// resource attributes, and the instrumentation scope.
type Resource struct {
	Attrs        []KeyValue
	ScopeName    string
	ScopeVersion string
}

// Severity returns the OTel severity number and text of a log/slog level:
// the level plus 9 (debug 5, info 9, warn 13, error 17, as the OTel slog
// bridge maps them), within 1 … 24, and slog's name of the level.
func Severity(level int) (int, string) {
	return min(max(level+9, 1), 24), slog.Level(level).String()
}

// The field numbers of the OTLP logs messages, from opentelemetry-proto
// v1.11: opentelemetry/proto/collector/logs/v1/logs_service.proto,
// opentelemetry/proto/logs/v1/logs.proto, opentelemetry/proto/common/v1/common.proto
// and opentelemetry/proto/resource/v1/resource.proto.
const (
	fRequestResourceLogs = 1 // ExportLogsServiceRequest.resource_logs

	fResourceLogsResource  = 1 // ResourceLogs.resource
	fResourceLogsScopeLogs = 2 // ResourceLogs.scope_logs

	fResourceAttributes = 1 // Resource.attributes

	fScopeLogsScope   = 1 // ScopeLogs.scope
	fScopeLogsRecords = 2 // ScopeLogs.log_records

	fScopeName    = 1 // InstrumentationScope.name
	fScopeVersion = 2 // InstrumentationScope.version

	fRecordTime         = 1  // LogRecord.time_unix_nano, fixed64
	fRecordSeverity     = 2  // LogRecord.severity_number, enum
	fRecordSeverityText = 3  // LogRecord.severity_text
	fRecordBody         = 5  // LogRecord.body, AnyValue
	fRecordAttributes   = 6  // LogRecord.attributes, KeyValue
	fRecordObservedTime = 11 // LogRecord.observed_time_unix_nano, fixed64

	fKeyValueKey   = 1 // KeyValue.key
	fKeyValueValue = 2 // KeyValue.value, AnyValue

	fAnyString = 1 // AnyValue.string_value
	fAnyBool   = 2 // AnyValue.bool_value
	fAnyInt    = 3 // AnyValue.int_value, int64
	fAnyDouble = 4 // AnyValue.double_value
	fAnyArray  = 5 // AnyValue.array_value, ArrayValue
	fAnyKVList = 6 // AnyValue.kvlist_value, KeyValueList

	fListValues = 1 // ArrayValue.values, KeyValueList.values
)

// Protobuf wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
)

// appendTag appends the key of field f with wire type w.
func appendTag(b []byte, f, w int) []byte {
	return binary.AppendUvarint(b, uint64(f)<<3|uint64(w))
}

func appendVarintField(b []byte, f int, v uint64) []byte {
	return binary.AppendUvarint(appendTag(b, f, wireVarint), v)
}

func appendFixed64Field(b []byte, f int, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(appendTag(b, f, wireFixed64), v)
}

func appendStringField(b []byte, f int, s string) []byte {
	b = binary.AppendUvarint(appendTag(b, f, wireBytes), uint64(len(s)))
	return append(b, s...)
}

// appendMessage appends field f holding the message body writes: it
// reserves one byte for the length, and moves the body when its length
// takes more.
func appendMessage(b []byte, f int, body func([]byte) []byte) []byte {
	b = appendTag(b, f, wireBytes)
	at := len(b)
	b = body(append(b, 0))
	n := len(b) - at - 1
	if n < 0x80 {
		b[at] = byte(n)
		return b
	}
	var lb [binary.MaxVarintLen64]byte
	ln := binary.PutUvarint(lb[:], uint64(n))
	b = append(b, lb[:ln-1]...)
	copy(b[at+ln:], b[at+1:at+1+n])
	copy(b[at:], lb[:ln])
	return b
}

// AppendProto appends the ExportLogsServiceRequest of records from res,
// in protobuf (the body of http/protobuf), to b. The records are written
// first, into scratch, so that the three enclosing messages, whose lengths
// need them, cost one copy rather than a move each.
func AppendProto(b []byte, res Resource, records []Record) []byte {
	b, _ = appendProto(b, nil, res, records)
	return b
}

// appendProto is AppendProto with the scratch buffer given, and returned
// for reuse.
func appendProto(b, scratch []byte, res Resource, records []Record) (_, _ []byte) {
	recs := scratch[:0]
	for i := range records {
		recs = appendMessage(recs, fScopeLogsRecords, func(b []byte) []byte {
			return appendRecord(b, &records[i])
		})
	}
	head := appendMessage(nil, fResourceLogsResource, func(b []byte) []byte {
		return appendKeyValues(b, fResourceAttributes, res.Attrs)
	})
	scope := appendMessage(nil, fScopeLogsScope, func(b []byte) []byte {
		if res.ScopeName != "" {
			b = appendStringField(b, fScopeName, res.ScopeName)
		}
		if res.ScopeVersion != "" {
			b = appendStringField(b, fScopeVersion, res.ScopeVersion)
		}
		return b
	})
	scopeLogs := len(scope) + len(recs)
	resourceLogs := len(head) + tagLen(fResourceLogsScopeLogs) + uvarintLen(scopeLogs) + scopeLogs
	b = appendTag(b, fRequestResourceLogs, wireBytes)
	b = binary.AppendUvarint(b, uint64(resourceLogs))
	b = append(b, head...)
	b = appendTag(b, fResourceLogsScopeLogs, wireBytes)
	b = binary.AppendUvarint(b, uint64(scopeLogs))
	b = append(b, scope...)
	return append(b, recs...), recs
}

func uvarintLen(n int) int {
	var lb [binary.MaxVarintLen64]byte
	return binary.PutUvarint(lb[:], uint64(n))
}

func tagLen(f int) int { return uvarintLen(f << 3) }

// unixNano is t in nanoseconds since the epoch, 0 for times before it.
func unixNano(t time.Time) uint64 {
	if t.Before(time.Unix(0, 0)) || t.After(time.Unix(0, math.MaxInt64)) {
		return 0
	}
	return uint64(t.UnixNano())
}

func appendRecord(b []byte, r *Record) []byte {
	ns := unixNano(r.Time)
	num, text := Severity(r.Level)
	b = appendFixed64Field(b, fRecordTime, ns)
	b = appendVarintField(b, fRecordSeverity, uint64(num))
	b = appendStringField(b, fRecordSeverityText, text)
	b = appendMessage(b, fRecordBody, func(b []byte) []byte {
		return appendStringField(b, fAnyString, r.Body)
	})
	b = appendKeyValues(b, fRecordAttributes, r.Attrs)
	return appendFixed64Field(b, fRecordObservedTime, ns)
}

func appendKeyValues(b []byte, f int, kvs []KeyValue) []byte {
	for _, kv := range kvs {
		b = appendMessage(b, f, func(b []byte) []byte {
			b = appendStringField(b, fKeyValueKey, kv.Key)
			return appendMessage(b, fKeyValueValue, func(b []byte) []byte {
				return appendAnyValue(b, kv.Value)
			})
		})
	}
	return b
}

// appendAnyValue appends the fields of the AnyValue of v (nothing for nil
// or an unknown type: an empty value).
func appendAnyValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case string:
		return appendStringField(b, fAnyString, v)
	case bool:
		n := uint64(0)
		if v {
			n = 1
		}
		return appendVarintField(b, fAnyBool, n)
	case int:
		return appendVarintField(b, fAnyInt, uint64(int64(v)))
	case int64:
		return appendVarintField(b, fAnyInt, uint64(v))
	case float64:
		return appendFixed64Field(b, fAnyDouble, math.Float64bits(v))
	case []any:
		return appendMessage(b, fAnyArray, func(b []byte) []byte {
			for _, e := range v {
				b = appendMessage(b, fListValues, func(b []byte) []byte { return appendAnyValue(b, e) })
			}
			return b
		})
	case map[string]any:
		return appendMessage(b, fAnyKVList, func(b []byte) []byte {
			return appendKeyValues(b, fListValues, sortedKVs(v))
		})
	}
	return b
}

// sortedKVs returns the members of m as attributes, by key.
func sortedKVs(m map[string]any) []KeyValue {
	kvs := make([]KeyValue, 0, len(m))
	for k, v := range m {
		kvs = append(kvs, KeyValue{k, v})
	}
	slices.SortFunc(kvs, func(a, b KeyValue) int {
		switch {
		case a.Key < b.Key:
			return -1
		case a.Key > b.Key:
			return 1
		}
		return 0
	})
	return kvs
}
