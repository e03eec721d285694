package otlp

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want *Config
	}{
		{"unset: no export", map[string]string{"OTEL_SERVICE_NAME": "x", "OTEL_EXPORTER_OTLP_HEADERS": "a=b"}, nil},
		{"base endpoint gets /v1/logs", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"},
			&Config{Endpoint: "http://collector:4318/v1/logs", Protocol: ProtoProtobuf, Timeout: DefaultTimeout}},
		{"base endpoint with a path and a slash", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://h/otlp/"},
			&Config{Endpoint: "https://h/otlp/v1/logs", Protocol: ProtoProtobuf, Timeout: DefaultTimeout}},
		{"the logs endpoint as it is, over the base", map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT":      "http://other:4318",
			"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://vl:9428/insert/opentelemetry/v1/logs",
			"OTEL_EXPORTER_OTLP_PROTOCOL":      "grpc", // overridden by the logs one
			"OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "http/json",
			"OTEL_EXPORTER_OTLP_TIMEOUT":       "1",
			"OTEL_EXPORTER_OTLP_LOGS_TIMEOUT":  "2500",
			"OTEL_EXPORTER_OTLP_HEADERS":       "ignored=1",
			"OTEL_EXPORTER_OTLP_LOGS_HEADERS":  " Authorization = Bearer%20abc%2C%3Dd , x-k=v%25,",
			"OTEL_SERVICE_NAME":                " shop ",
			"OTEL_RESOURCE_ATTRIBUTES":         "deployment.environment=prod,team=a%20b",
		}, &Config{
			Endpoint: "http://vl:9428/insert/opentelemetry/v1/logs", Protocol: ProtoJSON, Timeout: 2500 * time.Millisecond,
			Headers:     [][2]string{{"Authorization", "Bearer abc,=d"}, {"x-k", "v%"}},
			ServiceName: "shop", Resource: []KeyValue{{"deployment.environment", "prod"}, {"team", "a b"}},
		}},
		{"the general timeout", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h", "OTEL_EXPORTER_OTLP_TIMEOUT": "300"},
			&Config{Endpoint: "http://h/v1/logs", Protocol: ProtoProtobuf, Timeout: 300 * time.Millisecond}},
	} {
		got, err := FromEnv(envOf(tc.env))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s: (-want +got)\n%s", tc.name, d)
		}
	}
}

// TestFromEnvErrors: a bad value is an error naming the variable, and
// never quotes a header's value or the endpoint.
func TestFromEnvErrors(t *testing.T) {
	const secret = "s3cr3t-token"
	base := "http://h:4318"
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://" + secret + "@h"}, "OTEL_EXPORTER_OTLP_ENDPOINT is not an http:// or https:// URL"},
		{map[string]string{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "h:4318/?k=" + secret}, "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT is not"},
		{map[string]string{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://" + secret + "%zz@h"}, "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT is not"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: strongbox exports over OTLP/HTTP only"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "thrift"}, `OTEL_EXPORTER_OTLP_LOGS_PROTOCOL="thrift": want http/protobuf or http/json`},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_EXPORTER_OTLP_LOGS_TIMEOUT": "10s"}, "OTEL_EXPORTER_OTLP_LOGS_TIMEOUT=\"10s\": want a timeout in milliseconds"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_EXPORTER_OTLP_TIMEOUT": "0"}, "OTEL_EXPORTER_OTLP_TIMEOUT=\"0\""},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_EXPORTER_OTLP_HEADERS": "api-key=" + secret + "%zz"}, "OTEL_EXPORTER_OTLP_HEADERS: the value of api-key is not percent-encoded"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_EXPORTER_OTLP_LOGS_HEADERS": secret}, "OTEL_EXPORTER_OTLP_LOGS_HEADERS: a member is not key=value"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_EXPORTER_OTLP_HEADERS": "bad key=" + secret}, `OTEL_EXPORTER_OTLP_HEADERS: "bad key" is not an HTTP header name`},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_EXPORTER_OTLP_HEADERS": "k=" + secret + "%0d%0aX: y"}, "the value of header k holds a line break"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_EXPORTER_OTLP_HEADERS": ",,"}, "OTEL_EXPORTER_OTLP_HEADERS: no key=value"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_RESOURCE_ATTRIBUTES": "noequals"}, `OTEL_RESOURCE_ATTRIBUTES: "noequals" is not key=value`},
	} {
		_, err := FromEnv(envOf(tc.env))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("FromEnv(%v) = %v, want an error with %q", tc.env, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("FromEnv(%v): the error %q quotes the secret", tc.env, err)
		}
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pw@h:4318/v1/logs?api_key=x#f": "https://h:4318/v1/logs",
		"http://h/v1/logs":                           "http://h/v1/logs",
		"::":                                         "",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzParseHeaders: ParseHeaders never panics; what it accepts has HTTP
// header names and values without line breaks, and survives percent
// encoding its values back.
func FuzzParseHeaders(f *testing.F) {
	for _, s := range []string{"a=b", " k = v%20w ,x=y", "k=%zz", "=v", "k=v=w", ",,,", "k=%0a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hs, err := ParseHeaders(s)
		if err != nil {
			return
		}
		var parts []string
		for _, h := range hs {
			if !validToken(h[0]) || strings.ContainsAny(h[1], "\r\n") {
				t.Fatalf("accepted %q", h)
			}
			parts = append(parts, h[0]+"="+pctEncode(h[1]))
		}
		again, err := ParseHeaders(strings.Join(parts, ","))
		if err != nil || !cmp.Equal(again, hs) {
			t.Fatalf("%q: re-encoded as %q gives %q, %v", hs, parts, again, err)
		}
	})
}

// pctEncode percent-encodes every byte but letters and digits.
func pctEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b.WriteByte(c)
		} else {
			b.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[c>>4])+string("0123456789abcdef"[c&15])))
		}
	}
	return b.String()
}
