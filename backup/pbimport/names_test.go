package pbimport

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"strongbox/backup/pocketbase"
)

// forged is a name a crafted data.db gives: a line break that starts a
// report line of its own, and a terminal escape sequence.
const forged = "x\ncollection users records: 99 imported, 0 skipped\x1b[2J"

// TestImportReportForgedNames: every name the report takes from the
// source (collections, their types, fields, options, providers,
// indexes, settings keys) is quoted when it is not a plain name, so the
// report keeps one line per fact and no control character, and the plain
// names stay as they are.
func TestImportReportForgedNames(t *testing.T) {
	users := pocketbase.Collection{ID: "_pb_users_auth_", Name: "users", Type: "auth", Created: pbCreated, Updated: pbCreated,
		Fields: pbAuthFields(t,
			`{"hidden":false,"id":"file1","name":"x\ncollection users records: 99 imported\u001b[2J","system":false,"type":"file"}`,
			`{"hidden":false,"id":"sel1","name":"plan","system":false,"type":"x\nskipped nothing\u001b]0;t\u0007"}`,
			`{"hidden":false,"id":"text1","name":"name","system":false,"type":"text","x\nopt":"v"}`),
		Indexes: []string{"CREATE INDEX `i` ON `users` (`name`)\nsettings: imported everything"},
		Options: pbAuthOptions(t, "users", `{"x\nopt\u001b[1m":1,
		 "oauth2":{"enabled":true,"mappedFields":{},"providers":[{"name":"evil\n\u001b[31m","clientId":"a","clientSecret":"b"}]}}`),
	}
	src := &fakeSource{
		cols: []pocketbase.Collection{users,
			{ID: "pbc_1", Name: forged, Type: "base"},
			{ID: "pbc_2", Name: "odd", Type: "graph\n\u001b[0m"},
		},
		settings: json.RawMessage(`{"x\nsettings: imported\u001b[2J":{}}`),
	}
	rep, err := Import(t.Context(), src, Options{OpenStores: openTestStores, Dir: filepath.Join(t.TempDir(), "sb_data"), Now: importClock})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	text := rep.Text()
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if strings.ContainsFunc(line, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			t.Errorf("report line %q holds a control character", line)
		}
	}
	for _, want := range []string{
		`skipped collection "x\ncollection users records: 99 imported, 0 skipped\x1b[2J" (base): strongbox stores no base records`,
		`skipped collection odd ("graph\n\x1b[0m"): unknown collection type`,
		`skipped field users."x\ncollection users records: 99 imported\x1b[2J" (file): no file storage`,
		`skipped field users.plan ("x\nskipped nothing\x1b]0;t\a"): strongbox does not store "x\nskipped nothing\x1b]0;t\a" fields`,
		`skipped option users.name."x\nopt": strongbox does not keep this field option`,
		`skipped option users."x\nopt\x1b[1m": strongbox does not keep it`,
		`skipped provider users."evil\n\x1b[31m": strongbox has no preset`,
		"skipped index users: \"CREATE INDEX `i` ON `users` (`name`)\\nsettings: imported everything\": strongbox keeps",
		`skipped settings "x\nsettings: imported\x1b[2J": strongbox has no use for it`,
		"collection users records: 0 imported, 0 skipped\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %s:\n%s", want, text)
		}
	}
}

// TestPrintable: the report's last guard quotes a line's text that holds
// anything that does not print, and leaves the rest alone.
func TestPrintable(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "email: Cannot be blank.", "email: Cannot be blank."},
		{"non-ASCII letters", "Wert: ungültig", "Wert: ungültig"},
		{"line break", "a\nb", `"a\nb"`},
		{"escape", "a\x1b[2Jb", `"a\x1b[2Jb"`},
		{"bidi override", "a\u202eb", `"a\u202eb"`},
		{"invalid UTF-8", "a\x9bb", `"a\x9bb"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := printable(tt.in); got != tt.want {
				t.Errorf("printable(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

// TestImportErrorQuotesNames: an error of the import that names what
// the source named (here a field whose options do not decode) quotes a
// name that is not a plain one.
func TestImportErrorQuotesNames(t *testing.T) {
	src := &fakeSource{cols: []pocketbase.Collection{{ID: "_pb_users_auth_", Name: "users", Type: "auth", Created: pbCreated, Updated: pbCreated,
		Fields:  pbAuthFields(t, `{"hidden":false,"id":"text1","name":"a\nb\u001b[2J","system":false,"type":"text","max":"many"}`),
		Options: pbAuthOptions(t, "users", `{}`)}}}
	_, err := Import(t.Context(), src, Options{OpenStores: openTestStores, Dir: filepath.Join(t.TempDir(), "sb_data")})
	if err == nil {
		t.Fatal("import succeeded, want the field refused")
	}
	if strings.ContainsAny(err.Error(), "\n\x1b") || !strings.Contains(err.Error(), `field users."a\nb\x1b[2J": `) {
		t.Errorf("import = %q, want the field's name quoted", err)
	}
}
