package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"strongbox/authn"
	"strongbox/httpapi/app"
	"strongbox/logstore"
	"strongbox/logstore/otlp"
)

// The defaults of the two settings that are flags too.
const (
	defaultHTTP = "127.0.0.1:8090"
	defaultDir  = "./sb_data"
)

// setting is one row of the configuration: a flag, an environment
// variable or both, with its default, given as a value (def) or in words
// (defWords).
type setting struct {
	flag, env, def, defWords, meaning string
}

// settings is the configuration, in one table: `serve --help` prints it,
// and the README's configuration table is this table (TestREADMECommandLine
// compares them).
func settings() []setting {
	return []setting{
		{"--http", "STRONGBOX_HTTP", defaultHTTP, "", "listen address"},
		{"--dir", "STRONGBOX_DIR", defaultDir, "", "data directory"},
		{"--metrics", "STRONGBOX_METRICS_ADDR", "", "off", "address of a listener of its own serving GET /metrics (Prometheus text format), such as 127.0.0.1:9464"},
		{"", "STRONGBOX_SUPERUSER_EMAIL", app.DefaultSuperuserEmail, "", "first superuser's email (new data dir only)"},
		{"", "STRONGBOX_SUPERUSER_PASSWORD", "", "random, printed once", "first superuser's password (new data dir only)"},
		{"", "STRONGBOX_BCRYPT_COST", strconv.Itoa(authn.DefaultCost), "", "bcrypt cost of new password hashes (4 makes tests fast; keep 10+ in production)"},
		{"", "STRONGBOX_LOGS_MAX_MB", strconv.Itoa(logstore.DefaultMaxBytes >> 20), "", "cap on stored request logs: past it the oldest segments are deleted"},
		{"", "STRONGBOX_BACKUP_MAX_UPLOAD_MB", strconv.Itoa(int(app.DefaultMaxUpload >> 20)), "", "largest archive a backup upload may send"},
		{"", "STRONGBOX_OAUTH2_ALLOW_PRIVATE", "", "off", "1 allows OAuth2 provider URLs on loopback, link-local and private addresses (a provider on your own network)"},
		{"", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "", "off", "URL every stored log is exported to over OTLP/HTTP, as is (e.g. http://collector:4318/v1/logs)"},
		{"", "OTEL_EXPORTER_OTLP_ENDPOINT", "", "off", "base URL of the OTLP receiver, /v1/logs appended (when the one above is unset)"},
		{"", "OTEL_EXPORTER_OTLP_LOGS_HEADERS", "", "none", "headers of the export, key=value,… percent-encoded (an API key: never shown); or OTEL_EXPORTER_OTLP_HEADERS"},
		{"", "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", otlp.ProtoProtobuf, "", "protocol of the export, or http/json (grpc is refused); or OTEL_EXPORTER_OTLP_PROTOCOL"},
		{"", "OTEL_EXPORTER_OTLP_LOGS_TIMEOUT", strconv.Itoa(int(otlp.DefaultTimeout / time.Millisecond)), "", "deadline of one export request in ms; or OTEL_EXPORTER_OTLP_TIMEOUT"},
		{"", "OTEL_SERVICE_NAME", "", "the app name", "service.name of the exported logs"},
		{"", "OTEL_RESOURCE_ATTRIBUTES", "", "none", "more resource attributes of the exported logs, key=value,…"},
	}
}

// markdownRow is s as a row of the README's configuration table.
func (s setting) markdownRow() string {
	cell := func(v string) string {
		if v == "" {
			return ""
		}
		return "`" + v + "`"
	}
	def := cell(s.def)
	if s.defWords != "" {
		def = s.defWords
	}
	row := "|"
	for _, v := range []string{cell(s.flag), cell(s.env), def, s.meaning} {
		if v != "" {
			row += " " + v
		}
		row += " |"
	}
	return row
}

// printEnvironment prints the environment variables of the configuration,
// after a command's flags in its --help.
func printEnvironment(w io.Writer) {
	fmt.Fprintln(w, "environment (a flag given overrides its variable):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range settings() {
		def := s.def
		if s.defWords != "" {
			def = s.defWords
		}
		flagOf := ""
		if s.flag != "" {
			flagOf = ", flag " + s.flag
		}
		fmt.Fprintf(tw, "  %s\t%s (default %s%s)\n", s.env, s.meaning, def, flagOf)
	}
	tw.Flush()
}

// config is the configuration of a data dir's stores, from flags and the
// environment.
type config struct {
	app.Options
	err error // a malformed environment value
}

func baseConfig(fs *flag.FlagSet, getenv func(string) string) *config {
	c := &config{Options: app.Options{BcryptCost: authn.DefaultCost}}
	fs.StringVar(&c.Dir, "dir", envOr(getenv, "STRONGBOX_DIR", defaultDir), "data directory (env STRONGBOX_DIR)")
	if v := getenv("STRONGBOX_BCRYPT_COST"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			c.err = fmt.Errorf("STRONGBOX_BCRYPT_COST=%q is not a number", v)
		}
		c.BcryptCost = n
	}
	if n, err := envMiB(getenv, "STRONGBOX_LOGS_MAX_MB"); err != nil {
		c.err = err
	} else {
		c.LogsMaxBytes = n
	}
	return c
}

// envMiB returns the environment variable key, a size in MiB from 1 to
// 2^30, in bytes; 0 when it is unset.
func envMiB(getenv func(string) string, key string) (int64, error) {
	v := getenv(key)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 || n > 1<<30 {
		return 0, fmt.Errorf("%s=%q is not a size in MiB", key, v)
	}
	return n << 20, nil
}

// envBool returns the environment variable key as a boolean (1, true,
// 0, false, as strconv.ParseBool reads them); false when it is unset.
func envBool(getenv func(string) string, key string) (bool, error) {
	v := getenv(key)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s=%q: want 1 or 0", key, v)
	}
	return b, nil
}

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}
