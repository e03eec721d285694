package otlp

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The protocols of OTEL_EXPORTER_OTLP_LOGS_PROTOCOL the export speaks.
const (
	ProtoProtobuf = "http/protobuf" // the default
	ProtoJSON     = "http/json"
)

// DefaultTimeout is the deadline of one export request when
// OTEL_EXPORTER_OTLP_LOGS_TIMEOUT and OTEL_EXPORTER_OTLP_TIMEOUT are unset
// (the OTel default, 10 s).
const DefaultTimeout = 10 * time.Second

// EnvVars are the environment variables Config reads, as every OTel SDK
// reads them (the OTel specification's "OpenTelemetry Protocol Exporter"
// and "Environment Variable Specification"); the ones of the logs signal
// win over the general ones.
var EnvVars = []string{
	"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT",
	"OTEL_EXPORTER_OTLP_LOGS_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS",
	"OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL",
	"OTEL_EXPORTER_OTLP_LOGS_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT",
	"OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES",
}

// Config is where and how the logs are exported.
type Config struct {
	// Endpoint is the full URL logs are POSTed to, such as
	// http://collector:4318/v1/logs.
	Endpoint string
	// Headers are sent with every request (an API key): secrets, never
	// logged, shown or put in an error.
	Headers [][2]string
	// Protocol is ProtoProtobuf or ProtoJSON.
	Protocol string
	// Timeout is the deadline of one request.
	Timeout time.Duration
	// ServiceName is OTEL_SERVICE_NAME; "" = the application's name.
	ServiceName string
	// Resource are the attributes of OTEL_RESOURCE_ATTRIBUTES, in order.
	Resource []KeyValue
}

// FromEnv reads the configuration from the OTel environment variables
// through getenv. It returns nil, and no error, when no endpoint is set:
// no export. A malformed value is an error naming its variable (never
// quoting a header's value or the endpoint, which may hold credentials).
func FromEnv(getenv func(string) string) (*Config, error) {
	endpoint, err := envEndpoint(getenv)
	if err != nil || endpoint == "" {
		return nil, err
	}
	c := &Config{Endpoint: endpoint, Protocol: ProtoProtobuf, Timeout: DefaultTimeout, ServiceName: strings.TrimSpace(getenv("OTEL_SERVICE_NAME"))}
	if name, v := pick(getenv, "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"); v != "" {
		switch v = strings.TrimSpace(v); v {
		case ProtoProtobuf, ProtoJSON:
			c.Protocol = v
		case "grpc":
			return nil, fmt.Errorf("%s=grpc: strongbox exports over OTLP/HTTP only: use http/protobuf (the default) or http/json, and the receiver's HTTP port (4318)", name)
		default:
			return nil, fmt.Errorf("%s=%q: want http/protobuf or http/json", name, v)
		}
	}
	if name, v := pick(getenv, "OTEL_EXPORTER_OTLP_LOGS_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"); v != "" {
		ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || ms < 1 || ms > 3_600_000 {
			return nil, fmt.Errorf("%s=%q: want a timeout in milliseconds, 1 to 3600000", name, v)
		}
		c.Timeout = time.Duration(ms) * time.Millisecond
	}
	if name, v := pick(getenv, "OTEL_EXPORTER_OTLP_LOGS_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS"); v != "" {
		if c.Headers, err = ParseHeaders(v); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if v := getenv("OTEL_RESOURCE_ATTRIBUTES"); v != "" {
		pairs, err := parseList(v, true)
		if err != nil {
			return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
		}
		for _, p := range pairs {
			c.Resource = append(c.Resource, KeyValue{p[0], p[1]})
		}
	}
	return c, nil
}

// pick returns the first of the variables that is set, and its value.
func pick(getenv func(string) string, names ...string) (string, string) {
	for _, n := range names {
		if v := getenv(n); v != "" {
			return n, v
		}
	}
	return names[0], ""
}

// envEndpoint returns the logs endpoint: OTEL_EXPORTER_OTLP_LOGS_ENDPOINT
// as it is, or OTEL_EXPORTER_OTLP_ENDPOINT with v1/logs appended to its
// path; "" when neither is set.
func envEndpoint(getenv func(string) string) (string, error) {
	name, v := pick(getenv, "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
	v = strings.TrimSpace(v)
	if v == "" {
		return "", nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Fragment != "" {
		return "", fmt.Errorf("%s is not an http:// or https:// URL with a host", name)
	}
	if name == "OTEL_EXPORTER_OTLP_ENDPOINT" {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/logs"
		u.RawPath = ""
	}
	return u.String(), nil
}

// ParseHeaders parses the value of OTEL_EXPORTER_OTLP_HEADERS: a list of
// key=value separated by commas (the W3C Baggage format, without
// properties), spaces around each trimmed, values percent-decoded (%2C is
// a comma). Keys must be HTTP header names. Errors name a header, never
// its value.
func ParseHeaders(s string) ([][2]string, error) {
	pairs, err := parseList(s, false)
	if err != nil {
		return nil, err
	}
	for _, p := range pairs {
		if !validToken(p[0]) {
			return nil, fmt.Errorf("%q is not an HTTP header name", p[0])
		}
		if strings.ContainsAny(p[1], "\r\n\x00") {
			return nil, fmt.Errorf("the value of header %s holds a line break or NUL", p[0])
		}
	}
	return pairs, nil
}

// parseList parses key=value,… with percent-decoded values; show says
// whether an error may quote the value (not for headers). Empty members
// (a trailing comma) are skipped.
func parseList(s string, show bool) ([][2]string, error) {
	var out [][2]string
	for member := range strings.SplitSeq(s, ",") {
		member = strings.TrimSpace(member)
		if member == "" {
			continue
		}
		k, v, ok := strings.Cut(member, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			what := "a member"
			if show {
				what = strconv.Quote(member)
			}
			return nil, fmt.Errorf("%s is not key=value", what)
		}
		dv, err := url.PathUnescape(v)
		if err != nil {
			return nil, fmt.Errorf("the value of %s is not percent-encoded correctly (write %%25 for %%)", k)
		}
		out = append(out, [2]string{k, dv})
	}
	if len(out) == 0 {
		return nil, errors.New("no key=value in it")
	}
	return out, nil
}

// validToken reports whether s is an HTTP token (RFC 9110 §5.6.2), the
// syntax of a header name.
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// Redacted returns the endpoint as it may be shown: scheme, host and path,
// without the user info, query or fragment.
func (c *Config) Redacted() string {
	return Redact(c.Endpoint)
}

// Redact returns endpoint without its user info, query and fragment.
func Redact(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return ""
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}
