package main

import (
	"os/exec"
	"strings"
	"testing"
)

// depsRules is a statement of policy, in the manner of go/build's
// deps_test.go: which project packages each package may import. Do not
// relax a rule to fix a build; move the code instead. Lower packages know
// nothing of HTTP, and the conformance suite stays runnable against any
// server, so it imports nothing from the project but its own SMTP sink and
// OAuth2 provider, which import nothing from it.
var depsRules = map[string][]string{
	"strongbox/logstore/journal":  {},
	"strongbox/filterlang":        {},
	"strongbox/conformance":       {"strongbox/conformance/smtpsink", "strongbox/conformance/oauth2provider"},
	"strongbox/httpapi/ratelimit": {},
	"strongbox/backup/cron":       {},
	// authn compiles mfa.rule with filterlang, a leaf that touches no
	// file, network or HTTP (see forbiddenStd).
	"strongbox/authn":    {"strongbox/logstore/journal", "strongbox/authn/validation", "strongbox/authn/lowprio", "strongbox/filterlang", "strongbox/authn/totp", "strongbox/authn/webauthn"},
	"strongbox/logstore": {"strongbox/logstore/journal", "strongbox/filterlang"},
	// api is the HTTP API: routes, handlers, the error envelope and status
	// codes, over the stores.
	"strongbox/httpapi/api": {"strongbox/backup", "strongbox/authn", "strongbox/authn/webauthn", "strongbox/authn/mail", "strongbox/authn/oauth2", "strongbox/authn/validation", "strongbox/logstore", "strongbox/logstore/journal", "strongbox/logstore/otlp", "strongbox/filterlang", "strongbox/httpapi/settings", "strongbox/httpapi/ratelimit", "strongbox/httpapi/dashboard"},
	// app runs the server: the one package besides main that imports both
	// the stores and the HTTP API (httpapi/api). No rule lists it, so no
	// lower package may import it.
	"strongbox/httpapi/app": {"strongbox/httpapi/metrics", "strongbox/backup/age", "strongbox/authn", "strongbox/authn/lowprio", "strongbox/authn/mail", "strongbox/authn/oauth2", "strongbox/authn/validation", "strongbox/logstore", "strongbox/logstore/journal", "strongbox/logstore/otlp", "strongbox/httpapi/api", "strongbox/httpapi/ratelimit", "strongbox/httpapi/settings", "strongbox/backup", "strongbox/backup/cron", "strongbox/backup/s3", "strongbox/backup/pbimport", "strongbox/backup/stream"},
	"strongbox":             {"*"},

	// metrics writes the Prometheus text format and serves /metrics:
	// stdlib only. The stores know nothing of it: app gathers their
	// counters (their own getters) at each scrape.
	"strongbox/httpapi/metrics": {},

	// dashboard serves the embedded dashboard's files: stdlib only, and no
	// knowledge of the API it talks to.
	"strongbox/httpapi/dashboard": {},

	// throwaway starts a server for a run of the conformance suite, in
	// this process through a serve function its caller passes, or as a
	// child process running `strongbox serve`: stdlib only.
	"strongbox/httpapi/app/throwaway": {},

	// settings is the settings document the server lifecycle (app) owns:
	// its sections, their validation (cron expressions with backup/cron, age keys with backup/age,
	// errors in the validation vocabulary) and its journal. It knows
	// nothing of HTTP; httpapi/api serves it and app applies it.
	"strongbox/httpapi/settings": {"strongbox/logstore/journal", "strongbox/authn/validation", "strongbox/backup/cron", "strongbox/backup/age"},

	// otlp exports logs over OTLP/HTTP: stdlib only; its caller (app)
	// gives it the log store as a Source, so it imports no store.
	"strongbox/logstore/otlp": {},

	// journaltest is a test helper: a file system that fails on demand.
	"strongbox/logstore/journal/journaltest": {"strongbox/logstore/journal"},

	// lowprio runs work on OS threads of a lower priority (bcrypt, the
	// log export): stdlib only, a leaf any package may import.
	"strongbox/authn/lowprio": {},

	// validation is the vocabulary of input errors that every store
	// returns and httpapi/api renders: a leaf, so that any package may import it.
	"strongbox/authn/validation": {},

	// oauth2 talks to OAuth2/OIDC providers: stdlib, and the validation
	// leaf for its URL rule (validation.HTTPURL).
	"strongbox/authn/oauth2": {"strongbox/authn/validation"},
	// oauth2provider is the conformance suite's OAuth2/OIDC provider,
	// which the OAuth2 tests of the other packages use too: stdlib only.
	"strongbox/conformance/oauth2provider": {},

	// totp computes and checks authenticator-app codes (RFC 4226/6238):
	// stdlib only, no state.
	"strongbox/authn/totp": {},
	// webauthn verifies WebAuthn ceremonies (CBOR, COSE keys,
	// attestation, assertions): stdlib only, no HTTP server nor store.
	"strongbox/authn/webauthn": {},
	// webauthntest is a software authenticator for tests.
	"strongbox/authn/webauthntest": {"strongbox/authn/webauthn"},

	// mail sends mail (SMTP or .eml files): stdlib only.
	"strongbox/authn/mail": {},
	// smtpsink is the conformance suite's SMTP sink, which the mail tests
	// of the other packages use too: stdlib only.
	"strongbox/conformance/smtpsink": {},

	// backup takes files and hooks from its caller instead of importing
	// the stores. Of the project it imports only the S3 client, whose
	// Object and missing-key error an ObjectStore speaks (the client
	// satisfies it as it is; its caller makes the client), and age,
	// which encrypts and opens the archives (Keys).
	"strongbox/backup": {"strongbox/backup/s3", "strongbox/backup/age"},
	// s3 is an S3 client (SigV4 by hand over net/http): stdlib only, and
	// no knowledge of the server's routes.
	"strongbox/backup/s3": {},
	// age reads and writes age v1 files (the encryption of archives):
	// stdlib and x/crypto only.
	"strongbox/backup/age": {},

	// stream ships the changes of the journals to a bucket and restores
	// them: it reads journal sections, speaks to the bucket through its
	// own interface (the S3 client's Object), and knows nothing of HTTP
	// or of the stores.
	"strongbox/backup/stream": {"strongbox/backup/s3", "strongbox/logstore/journal"},
	// s3test starts a real S3 server (versitygw) for tests: stdlib only.
	"strongbox/backup/s3/s3test": {},
	// sqlite reads SQLite database files (and their WAL) read-only,
	// for the import from PocketBase: stdlib only.
	"strongbox/backup/sqlite": {},
	// backuptest is a test helper: an in-memory S3 bucket, a
	// backup.ObjectStore that fails as the S3 client does.
	"strongbox/backup/backuptest": {"strongbox/backup", "strongbox/backup/s3"},
	// pocketbase reads a PocketBase data dir or backup archive (its SQLite
	// files through backup/sqlite) for an import; writing strongbox's
	// stores is its caller's work.
	"strongbox/backup/pocketbase": {"strongbox/backup/sqlite"},
	// pbimport converts what backup/pocketbase reads into a new data dir:
	// the auth store and the log store it writes itself, the settings
	// through an interface it defines (the settings store is the server's),
	// so it imports nothing under httpapi; app opens the stores for it.
	"strongbox/backup/pbimport": {"strongbox/authn", "strongbox/authn/validation", "strongbox/logstore", "strongbox/logstore/journal", "strongbox/backup/pocketbase"},
}

// forbiddenStd lists standard packages a project package must not import.
var forbiddenStd = map[string][]string{
	"strongbox/filterlang":        {"net/http", "os"},
	"strongbox/logstore":          {"net/http"},
	"strongbox/logstore/journal":  {"net/http"},
	"strongbox/authn":             {"net/http"},
	"strongbox/httpapi/ratelimit": {"net/http"},
	"strongbox/backup/cron":       {"net/http"},
	"strongbox/backup":            {"net/http"},
	"strongbox/backup/stream":     {"net/http"},
	"strongbox/backup/backuptest": {"net/http"},
	"strongbox/backup/sqlite":     {"net/http"},
	"strongbox/backup/age":        {"net/http", "os"},
	"strongbox/backup/pocketbase": {"net/http"},
	"strongbox/backup/pbimport":   {"net/http"},

	"strongbox/logstore/journal/journaltest": {"net/http"},
	"strongbox/httpapi/settings":             {"net/http"},
	"strongbox/authn/validation":             {"net/http"},
	"strongbox/authn/mail":                   {"net/http"},
	"strongbox/authn/totp":                   {"net/http", "os"},
	"strongbox/authn/webauthn":               {"net/http"},
	"strongbox/conformance/smtpsink":         {"net/http"},
}

func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, imports := fields[0], fields[1:]
		allowed, known := depsRules[pkg]
		if !known {
			t.Errorf("package %s has no rule in depsRules: add one", pkg)
			continue
		}
		for _, imp := range imports {
			if strings.HasPrefix(imp, "strongbox") {
				if !ruleAllows(allowed, imp) {
					t.Errorf("%s imports %s, which depsRules does not allow", pkg, imp)
				}
				continue
			}
			for _, bad := range forbiddenStd[pkg] {
				if imp == bad {
					t.Errorf("%s imports %s, which forbiddenStd does not allow", pkg, imp)
				}
			}
		}
	}
}

func ruleAllows(allowed []string, imp string) bool {
	for _, a := range allowed {
		if a == "*" || a == imp {
			return true
		}
	}
	return false
}
