package otlp

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// field is one protobuf field as decodeFields reads it.
type field struct {
	num  int
	wire int
	v    uint64 // varint and fixed64
	b    []byte // length-delimited
}

// decodeFields parses a protobuf message into its fields (the tests'
// decoder, to check the bytes AppendProto writes).
func decodeFields(b []byte) ([]field, error) {
	var out []field
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 || key>>3 == 0 || key>>3 > math.MaxInt32 {
			return nil, errors.New("bad key")
		}
		b = b[n:]
		f := field{num: int(key >> 3), wire: int(key & 7)}
		switch f.wire {
		case wireVarint:
			if f.v, n = binary.Uvarint(b); n <= 0 {
				return nil, errors.New("bad varint")
			}
			b = b[n:]
		case wireFixed64:
			if len(b) < 8 {
				return nil, errors.New("short fixed64")
			}
			f.v, b = binary.LittleEndian.Uint64(b), b[8:]
		case wireBytes:
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return nil, errors.New("bad length")
			}
			f.b, b = b[n:n+int(l)], b[n+int(l):]
		default:
			return nil, errors.New("unknown wire type")
		}
		out = append(out, f)
	}
	return out, nil
}

// sub returns the payloads of the fields numbered num.
func sub(t testing.TB, b []byte, num int) [][]byte {
	if t != nil {
		t.Helper()
	}
	fs, err := decodeFields(b)
	if err != nil {
		if t == nil {
			panic(err) // the fake receiver's: net/http answers it
		}
		t.Fatalf("decode: %v", err)
	}
	var out [][]byte
	for _, f := range fs {
		if f.num == num {
			out = append(out, f.b)
		}
	}
	return out
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	var hexed []string
	for _, line := range strings.Split(s, "\n") {
		line, _, _ = strings.Cut(line, "#")
		hexed = append(hexed, strings.Fields(line)...)
	}
	b, err := hex.DecodeString(strings.Join(hexed, ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var (
	goldenRes = Resource{Attrs: []KeyValue{{"service.name", "sb"}}, ScopeName: "s"}
	goldenRec = []Record{{Time: time.Unix(1, 0), Level: 0, Body: "hi", Attrs: []KeyValue{{"k", int64(1)}}}}
)

// TestProtoGolden: the bytes of a small request, worked out by hand from
// the field numbers of the .proto files (see proto.go).
func TestProtoGolden(t *testing.T) {
	want := unhex(t, `
		0a 4a                                   # ExportLogsServiceRequest.resource_logs (1), 74 bytes
		  0a 16                                   # ResourceLogs.resource (1), 22 bytes
		    0a 14                                   # Resource.attributes (1), KeyValue of 20 bytes
		      0a 0c 736572766963652e6e616d65          # key (1) "service.name"
		      12 04 0a 02 7362                        # value (2): AnyValue.string_value (1) "sb"
		  12 30                                   # ResourceLogs.scope_logs (2), 48 bytes
		    0a 03 0a 01 73                          # ScopeLogs.scope (1): InstrumentationScope.name (1) "s"
		    12 29                                   # ScopeLogs.log_records (2), 41 bytes
		      09 00ca9a3b00000000                     # time_unix_nano (1), fixed64 1e9
		      10 09                                   # severity_number (2) 9, INFO
		      1a 04 494e464f                          # severity_text (3) "INFO"
		      2a 04 0a 02 6869                        # body (5): string_value "hi"
		      32 07 0a 01 6b 12 02 18 01              # attributes (6): key "k", value int_value (3) 1
		      59 00ca9a3b00000000                     # observed_time_unix_nano (11), fixed64 1e9`)
	if got := AppendProto(nil, goldenRes, goldenRec); !bytes.Equal(got, want) {
		t.Errorf("AppendProto =\n%x\nwant\n%x", got, want)
	}
}

// TestProtoValues: every kind of attribute value, a long body (lengths of
// two bytes and more) and the severities come back from the decoder.
func TestProtoValues(t *testing.T) {
	long := strings.Repeat("x", 70000)
	rec := Record{Time: time.Unix(0, 1), Level: 8, Body: long, Attrs: []KeyValue{
		{"s", "v"}, {"t", true}, {"f", false}, {"i", -3}, {"d", 1.5}, {"nil", nil},
		{"a", []any{"x", int64(2)}}, {"m", map[string]any{"b": "2", "a": "1"}},
	}}
	b := AppendProto(nil, Resource{}, []Record{rec})
	rl := sub(t, b, fRequestResourceLogs)[0]
	sl := sub(t, rl, fResourceLogsScopeLogs)[0]
	lr := sub(t, sl, fScopeLogsRecords)[0]
	fs, _ := decodeFields(lr)
	byNum := map[int]field{}
	for _, f := range fs {
		byNum[f.num] = f
	}
	if byNum[fRecordTime].v != 1 || byNum[fRecordSeverity].v != 17 || string(byNum[fRecordSeverityText].b) != "ERROR" {
		t.Errorf("time, severity = %d, %d %q; want 1, 17 ERROR", byNum[fRecordTime].v, byNum[fRecordSeverity].v, byNum[fRecordSeverityText].b)
	}
	if body := sub(t, byNum[fRecordBody].b, fAnyString); len(body) != 1 || string(body[0]) != long {
		t.Errorf("the long body did not come back")
	}
	attrs := sub(t, lr, fRecordAttributes)
	wantVals := []string{
		"0a0176",                 // string "v"
		"1001",                   // bool true
		"1000",                   // bool false
		"18fdffffffffffffffff01", // int64 -3, ten bytes
		"21000000000000f83f",     // double 1.5
		"",                       // nil: an empty AnyValue
		"2a090a030a01780a021802", // array ["x", 2]
	}
	for i, kv := range attrs[:7] {
		v := sub(t, kv, fKeyValueValue)[0]
		if got := hex.EncodeToString(v); got != wantVals[i] {
			t.Errorf("attribute %d value = %s, want %s", i, got, wantVals[i])
		}
	}
	// The map: its members in key order.
	m := sub(t, sub(t, sub(t, attrs[7], fKeyValueValue)[0], fAnyKVList)[0], fListValues)
	if len(m) != 2 || string(sub(t, m[0], fKeyValueKey)[0]) != "a" || string(sub(t, m[1], fKeyValueKey)[0]) != "b" {
		t.Errorf("the map's members are not a, b")
	}
	for _, tc := range []struct {
		level int
		num   int
		text  string
	}{{-4, 5, "DEBUG"}, {0, 9, "INFO"}, {4, 13, "WARN"}, {8, 17, "ERROR"}, {2, 11, "INFO+2"}, {-20, 1, "DEBUG-16"}, {40, 24, "ERROR+32"}} {
		if n, s := Severity(tc.level); n != tc.num || s != tc.text {
			t.Errorf("Severity(%d) = %d %q, want %d %q", tc.level, n, s, tc.num, tc.text)
		}
	}
}

// TestJSONGolden: the OTLP JSON encoding of the golden request: camelCase
// keys, 64-bit integers as strings, the enum as a number.
func TestJSONGolden(t *testing.T) {
	want := `{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"sb"}}]},` +
		`"scopeLogs":[{"scope":{"name":"s"},"logRecords":[{"timeUnixNano":"1000000000","observedTimeUnixNano":"1000000000",` +
		`"severityNumber":9,"severityText":"INFO","body":{"stringValue":"hi"},"attributes":[{"key":"k","value":{"intValue":"1"}}]}]}]}]}`
	if got := string(AppendJSON(nil, goldenRes, goldenRec)); got != want {
		t.Errorf("AppendJSON =\n%s\nwant\n%s", got, want)
	}
	rec := Record{Body: "a\"\n<", Attrs: []KeyValue{{"n", math.NaN()}, {"inf", math.Inf(-1)}, {"d", 0.25}, {"b", true},
		{"a", []any{nil, "x"}}, {"m", map[string]any{"z": int64(math.MaxInt64)}}}}
	b := AppendJSON(nil, Resource{ScopeName: "n", ScopeVersion: "v"}, []Record{rec})
	if !json.Valid(b) {
		t.Fatalf("invalid JSON: %s", b)
	}
	for _, part := range []string{`"doubleValue":"NaN"`, `"doubleValue":"-Infinity"`, `"doubleValue":0.25`, `"boolValue":true`,
		`{"arrayValue":{"values":[{},{"stringValue":"x"}]}}`, `{"kvlistValue":{"values":[{"key":"z","value":{"intValue":"9223372036854775807"}}]}}`,
		`"scope":{"name":"n","version":"v"}`, `"timeUnixNano":"0"`} {
		if !strings.Contains(string(b), part) {
			t.Errorf("JSON lacks %s:\n%s", part, b)
		}
	}
}

// FuzzProtoRoundTrip: whatever the strings and numbers, the decoder finds
// them where the .proto says, and never fails on AppendProto's bytes.
func FuzzProtoRoundTrip(f *testing.F) {
	f.Add("hi", "k", "v", 0, int64(1e9))
	f.Add(strings.Repeat("long", 100), "", "\x00\xff", -4, int64(-1))
	f.Fuzz(func(t *testing.T, body, key, val string, level int, ns int64) {
		rec := Record{Time: time.Unix(0, ns), Level: level, Body: body, Attrs: []KeyValue{{key, val}, {"n", ns}}}
		b := AppendProto(nil, Resource{Attrs: []KeyValue{{"service.name", val}}}, []Record{rec})
		rl := sub(t, b, fRequestResourceLogs)
		if len(rl) != 1 {
			t.Fatal("not one ResourceLogs")
		}
		lr := sub(t, sub(t, sub(t, rl[0], fResourceLogsScopeLogs)[0], fScopeLogsRecords)[0], fRecordAttributes)
		if len(lr) != 2 || string(sub(t, lr[0], fKeyValueKey)[0]) != key || string(sub(t, sub(t, lr[0], fKeyValueValue)[0], fAnyString)[0]) != val {
			t.Fatalf("attribute %q=%q did not come back", key, val)
		}
		if !json.Valid(AppendJSON(nil, Resource{}, []Record{rec})) {
			t.Fatal("invalid JSON")
		}
	})
}

// FuzzDecodeFields: the tests' decoder never panics, and what it reads
// re-encodes to the same bytes when they are canonical.
func FuzzDecodeFields(f *testing.F) {
	f.Add(AppendProto(nil, goldenRes, goldenRec))
	f.Add([]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		fs, err := decodeFields(b)
		if err != nil {
			return
		}
		var re []byte
		for _, fd := range fs {
			switch fd.wire {
			case wireVarint:
				re = appendVarintField(re, fd.num, fd.v)
			case wireFixed64:
				re = appendFixed64Field(re, fd.num, fd.v)
			case wireBytes:
				re = appendStringField(re, fd.num, string(fd.b))
			}
		}
		if again, err := decodeFields(re); err != nil || len(again) != len(fs) {
			t.Fatalf("re-encoded fields do not decode alike: %v", err)
		}
	})
}
