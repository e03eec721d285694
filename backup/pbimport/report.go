package pbimport

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"strongbox/authn"
	"strongbox/backup/pocketbase"
)

// Report is what Import imported and what it skipped,
// and why. Text renders it.
type Report struct {
	// DryRun: nothing was written.
	DryRun bool
	// StaleRemoved are the temporary folders of unfinished imports into
	// the same dir that the import removed first.
	StaleRemoved []string
	// Collections are the auth collections imported, in PocketBase's
	// order, with their records.
	Collections []*ImportedCollection
	// ExternalAuths are the OAuth2 links (_externalAuths), AuthOrigins
	// the sign-in origins (_authOrigins).
	ExternalAuths, AuthOrigins Count
	// Settings are the settings sections imported.
	Settings []string
	// Logs is the number of logs imported (counted, on a dry run);
	// LogsExpired of them are older than settings.logs.maxDays
	// (LogsMaxDays) and go with retention.
	Logs, LogsExpired, LogsMaxDays int
	// Mail is the state of the imported SMTP settings when they were on
	// in PocketBase; nil when they were off or not imported.
	Mail *MailState
	// Skipped is everything else left out, in the order met.
	Skipped []Skip
}

// MailState says whether the imported SMTP settings are live: On, the
// first serve sends mail through Host:Port; TurnedOff, Options.NoMail
// turned them off.
type MailState struct {
	On, TurnedOff bool
	Host          string
	Port          int
}

// ImportedCollection is an auth collection imported, and its records.
type ImportedCollection struct {
	Name    string // as the source has it (Text quotes it)
	Records Count
}

// Count counts the items of one kind imported, and those skipped by
// reason.
type Count struct {
	Imported int
	Skipped  map[string]int
}

// add counts n items imported and the skipped ones.
func (c *Count) add(n int, skips []authn.ImportSkip) {
	c.Imported += n
	for _, s := range skips {
		if c.Skipped == nil {
			c.Skipped = map[string]int{}
		}
		c.Skipped[trimSkip(s.Reason)]++
	}
}

// skipped returns the number of items skipped.
func (c Count) skipped() int {
	n := 0
	for _, k := range c.Skipped {
		n += k
	}
	return n
}

// Skip is something an import left out: Kind is collection,
// field, option, rule, provider, index, settings, setting or transient;
// Name says which (the names taken from the source as
// pocketbase.QuoteName prints them, an index's or a rule's text quoted);
// Reason why.
type Skip struct {
	Kind, Name, Reason string
}

// addCollection adds an imported collection to the report.
func (r *Report) addCollection(name string) *ImportedCollection {
	c := &ImportedCollection{Name: name}
	r.Collections = append(r.Collections, c)
	return c
}

// Text renders the report, one fact a line, each starting with a word
// that says what it is about, so that the lines can be searched:
//
//	removed unfinished import .sb_data.import-123
//	collection users records: 98 imported, 2 skipped
//	  skipped 2 records: email: Must be a valid email address.
//	external auths: 3 imported, 0 skipped
//	auth origins: 2 imported, 0 skipped
//	settings: imported meta, smtp, backups, logs, rateLimits, trustedProxy, batch
//	logs: 1000 imported
//	logs: 10 older than settings.logs.maxDays (5 days): retention drops them
//	mail: SMTP is on (smtp.example.com:587): the first serve sends mail through it; import with --no-mail to turn it off
//	skipped collection posts (base): strongbox stores no base records
//
// Counts by reason are sorted by reason; the skipped lines keep the order
// the import met them in.
func (r *Report) Text() string {
	var b strings.Builder
	for _, s := range r.StaleRemoved {
		fmt.Fprintf(&b, "removed unfinished import %s\n", printable(s))
	}
	for _, c := range r.Collections {
		fmt.Fprintf(&b, "collection %s records: %d imported, %d skipped\n", q(c.Name), c.Records.Imported, c.Records.skipped())
		writeReasons(&b, "record", c.Records.Skipped)
	}
	for _, x := range []struct {
		what, one string
		c         Count
	}{{"external auths", "external auth", r.ExternalAuths}, {"auth origins", "auth origin", r.AuthOrigins}} {
		fmt.Fprintf(&b, "%s: %d imported, %d skipped\n", x.what, x.c.Imported, x.c.skipped())
		writeReasons(&b, x.one, x.c.Skipped)
	}
	if len(r.Settings) > 0 {
		fmt.Fprintf(&b, "settings: imported %s\n", strings.Join(r.Settings, ", "))
	} else {
		fmt.Fprintf(&b, "settings: none imported (strongbox's defaults)\n")
	}
	if r.DryRun {
		fmt.Fprintf(&b, "logs: %d counted (dry run: not written)\n", r.Logs)
	} else {
		fmt.Fprintf(&b, "logs: %d imported\n", r.Logs)
	}
	if r.LogsExpired > 0 {
		fmt.Fprintf(&b, "logs: %d older than settings.logs.maxDays (%d days): retention drops them\n", r.LogsExpired, r.LogsMaxDays)
	}
	switch m := r.Mail; {
	case m == nil:
	case m.On:
		fmt.Fprintf(&b, "mail: SMTP is on (%s): the first serve sends mail through it; import with --no-mail to turn it off\n",
			printable(net.JoinHostPort(m.Host, strconv.Itoa(m.Port))))
	case m.TurnedOff:
		fmt.Fprintf(&b, "mail: SMTP turned off (--no-mail): mails go to the outbox (mail/ in the data dir) until it is turned on in the dashboard's mail settings\n")
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "skipped %s %s: %s\n", s.Kind, printable(s.Name), printable(s.Reason))
	}
	return b.String()
}

// writeReasons writes the skip counts by reason, sorted by reason.
func writeReasons(b *strings.Builder, one string, byReason map[string]int) {
	for _, reason := range slices.Sorted(maps.Keys(byReason)) {
		n := byReason[reason]
		what := one
		if n != 1 {
			what += "s"
		}
		fmt.Fprintf(b, "  skipped %d %s: %s\n", n, what, printable(reason))
	}
}

// q is pocketbase.QuoteName: every name the report or an error of the
// import takes from the source goes through it.
func q(name string) string { return pocketbase.QuoteName(name) }

// quotePath quotes each dot-separated key of path, a path of keys taken
// from the source (lostKeys), as q does.
func quotePath(path string) string {
	keys := strings.Split(path, ".")
	for i, k := range keys {
		keys[i] = q(k)
	}
	return strings.Join(keys, ".")
}

// printable returns s, a line's text, as it is when it is valid UTF-8
// and every rune of it prints (strconv.IsPrint: no control character,
// line break or bidi override), else quoted: the last guard of a report
// line against a source text (a validation message quoting a value, say)
// that would start a line of its own or drive the terminal.
func printable(s string) string {
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return !strconv.IsPrint(r) }) {
		return strconv.Quote(s)
	}
	return s
}
