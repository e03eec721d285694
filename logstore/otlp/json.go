package otlp

import (
	"encoding/json"
	"math"
	"strconv"
)

// AppendJSON appends the ExportLogsServiceRequest of records from res in
// the OTLP JSON encoding (the body of http/json) to b: the protobuf JSON
// mapping with lowerCamelCase keys, 64-bit integers (times, intValue) as
// decimal strings, enums (severityNumber) as numbers, and the doubles
// that JSON has no number for as "NaN", "Infinity" and "-Infinity".
func AppendJSON(b []byte, res Resource, records []Record) []byte {
	b = append(b, `{"resourceLogs":[{"resource":{"attributes":`...)
	b = appendJSONKeyValues(b, res.Attrs)
	b = append(b, `},"scopeLogs":[{"scope":{`...)
	sep := ""
	if res.ScopeName != "" {
		b = appendJSONString(append(b, `"name":`...), res.ScopeName)
		sep = ","
	}
	if res.ScopeVersion != "" {
		b = appendJSONString(append(b, sep+`"version":`...), res.ScopeVersion)
	}
	b = append(b, `},"logRecords":[`...)
	for i := range records {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONRecord(b, &records[i])
	}
	return append(b, `]}]}]}`...)
}

func appendJSONRecord(b []byte, r *Record) []byte {
	ns := strconv.FormatUint(unixNano(r.Time), 10)
	num, text := Severity(r.Level)
	b = append(b, `{"timeUnixNano":"`...)
	b = append(b, ns...)
	b = append(b, `","observedTimeUnixNano":"`...)
	b = append(b, ns...)
	b = append(b, `","severityNumber":`...)
	b = strconv.AppendInt(b, int64(num), 10)
	b = appendJSONString(append(b, `,"severityText":`...), text)
	b = appendJSONString(append(b, `,"body":{"stringValue":`...), r.Body)
	b = appendJSONKeyValues(append(b, `},"attributes":`...), r.Attrs)
	return append(b, '}')
}

func appendJSONKeyValues(b []byte, kvs []KeyValue) []byte {
	b = append(b, '[')
	for i, kv := range kvs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(append(b, `{"key":`...), kv.Key)
		b = appendJSONValue(append(b, `,"value":`...), kv.Value)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendJSONValue appends the AnyValue of v ({} for nil or an unknown
// type).
func appendJSONValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case string:
		return append(appendJSONString(append(b, `{"stringValue":`...), v), '}')
	case bool:
		return append(strconv.AppendBool(append(b, `{"boolValue":`...), v), '}')
	case int:
		return append(strconv.AppendInt(append(b, `{"intValue":"`...), int64(v), 10), `"}`...)
	case int64:
		return append(strconv.AppendInt(append(b, `{"intValue":"`...), v, 10), `"}`...)
	case float64:
		b = append(b, `{"doubleValue":`...)
		switch {
		case math.IsNaN(v):
			b = append(b, `"NaN"`...)
		case math.IsInf(v, 1):
			b = append(b, `"Infinity"`...)
		case math.IsInf(v, -1):
			b = append(b, `"-Infinity"`...)
		default:
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		}
		return append(b, '}')
	case []any:
		b = append(b, `{"arrayValue":{"values":[`...)
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONValue(b, e)
		}
		return append(b, `]}}`...)
	case map[string]any:
		b = append(b, `{"kvlistValue":{"values":`...)
		return append(appendJSONKeyValues(b, sortedKVs(v)), `}}`...)
	}
	return append(b, `{}`...)
}

// appendJSONString appends s as a JSON string, as encoding/json writes it.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
