package main

import (
	"bytes"
	"go/parser"
	"go/token"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeUnboundCreatesNothing: a start that cannot bind creates
// nothing, not even the data dir, as the README says.
func TestServeUnboundCreatesNothing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, tt := range []struct{ name, addr, wantErr string }{
		{"port out of range", "127.0.0.1:99999", "invalid port"},
		{"not an address", "bogus", "bogus"},
		{"port in use", ln.Addr().String(), "address already in use"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "sb_data")
			err := run(t.Context(), []string{"serve", "--http", tt.addr, "--dir", dir}, envOf("STRONGBOX_BCRYPT_COST", "4"), io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("serve --http %s = %v, want an error containing %q", tt.addr, err, tt.wantErr)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("serve --http %s left the data dir %s behind (stat: %v)", tt.addr, dir, err)
			}
		})
	}
}

// TestMistypedDir: the commands that work on existing data refuse a data
// dir that does not exist or holds no strongbox data, naming it, and
// create nothing; upsert and create may start a new data dir.
func TestMistypedDir(t *testing.T) {
	env := envOf("STRONGBOX_BCRYPT_COST", "4")
	commands := []struct {
		name string
		args []string
	}{
		{"superuser update", []string{"superuser", "update", "a@example.com", "password123"}},
		{"superuser delete", []string{"superuser", "delete", "a@example.com"}},
		{"superuser otp", []string{"superuser", "otp", "a@example.com"}},
		{"backup list", []string{"backup", "list"}},
		{"backup create", []string{"backup", "create"}},
		{"backup create named", []string{"backup", "create", "x.zip"}},
		{"backup restore", []string{"backup", "restore", "x.zip"}},
	}
	dirs := []struct {
		name    string
		make    func(t *testing.T) string
		wantErr string
	}{
		{"missing", func(t *testing.T) string { return filepath.Join(t.TempDir(), "sb_dtaa") }, "does not exist"},
		{"no data", func(t *testing.T) string {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not strongbox"), 0o600); err != nil {
				t.Fatal(err)
			}
			return dir
		}, "holds no strongbox data"},
	}
	for _, cmd := range commands {
		for _, d := range dirs {
			t.Run(cmd.name+"/"+d.name, func(t *testing.T) {
				dir := d.make(t)
				before, _ := os.ReadDir(dir)
				err := run(t.Context(), append(cmd.args, "--dir", dir), env, io.Discard, io.Discard)
				if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), d.wantErr) {
					t.Errorf("%v on a %s dir = %v, want an error naming %s with %q", cmd.args, d.name, err, dir, d.wantErr)
				}
				if after, _ := os.ReadDir(dir); len(after) != len(before) {
					t.Errorf("%v on a %s dir changed it: %d entries, had %d", cmd.args, d.name, len(after), len(before))
				}
				if d.name == "missing" {
					if _, err := os.Stat(dir); !os.IsNotExist(err) {
						t.Errorf("%v created the missing data dir (stat: %v)", cmd.args, err)
					}
				}
			})
		}
	}
	for _, action := range []string{"upsert", "create"} {
		t.Run("superuser "+action+" starts a data dir", func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "new")
			if err := run(t.Context(), []string{"superuser", action, "a@example.com", "password123", "--dir", dir}, env, io.Discard, io.Discard); err != nil {
				t.Fatalf("superuser %s on a new data dir: %v", action, err)
			}
			if err := run(t.Context(), []string{"superuser", "update", "a@example.com", "password456", "--dir", dir}, env, io.Discard, io.Discard); err != nil {
				t.Errorf("superuser update on the dir %s made: %v", action, err)
			}
		})
	}
}

// readmeSection returns the lines of README.md from the heading to the
// next heading of the same level.
func readmeSection(t *testing.T, heading string) []string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no %q", heading)
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return strings.Split(rest, "\n")
}

// TestREADMECommandLine: the README's command-line block is the usage
// `strongbox --help` prints, and its configuration table is the one
// `serve --help` prints, so that neither can drift from the code.
func TestREADMECommandLine(t *testing.T) {
	var help bytes.Buffer
	if err := run(t.Context(), []string{"--help"}, noEnv, &help, io.Discard); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, line := range strings.Split(strings.TrimSpace(help.String()), "\n")[1:] {
		want = append(want, strings.TrimSpace(line))
	}
	var block []string
	in := false
	for _, line := range readmeSection(t, "## Command line") {
		if line == "```" {
			if in {
				break
			}
			in = true
			continue
		}
		if in {
			block = append(block, line)
		}
	}
	if strings.Join(block, "\n") != strings.Join(want, "\n") {
		t.Errorf("the README's command-line block:\n%s\nwant what --help prints:\n%s", strings.Join(block, "\n"), strings.Join(want, "\n"))
	}

	var rows []string
	for _, line := range readmeSection(t, "## Configuration") {
		if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| flag ") {
			rows = append(rows, line)
		}
	}
	var serveHelp bytes.Buffer
	if err := run(t.Context(), []string{"serve", "--help"}, noEnv, &serveHelp, io.Discard); err != nil {
		t.Fatal(err)
	}
	var wantRows []string
	for _, s := range settings() {
		wantRows = append(wantRows, s.markdownRow())
		if !strings.Contains(serveHelp.String(), "  "+s.env+"  ") || !strings.Contains(serveHelp.String(), s.meaning) {
			t.Errorf("serve --help does not list %s (%s):\n%s", s.env, s.meaning, serveHelp.String())
		}
		if s.flag != "" && !strings.Contains(serveHelp.String(), "\n  -"+s.flag[2:]+" ") {
			t.Errorf("serve --help has no flag %s:\n%s", s.flag, serveHelp.String())
		}
	}
	if strings.Join(rows, "\n") != strings.Join(wantRows, "\n") {
		t.Errorf("the README's configuration table:\n%s\nwant the one serve --help prints:\n%s", strings.Join(rows, "\n"), strings.Join(wantRows, "\n"))
	}
}

// TestDocCommands: the command list at the top of the package doc
// (doc.go, what go doc strongbox shows) is the usage `strongbox help`
// prints, every command with its flags.
func TestDocCommands(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil {
		t.Fatal("doc.go has no package doc")
	}
	var listed []string
	for _, line := range strings.Split(f.Doc.Text(), "\n") {
		if cmd, ok := strings.CutPrefix(line, "\tstrongbox "); ok {
			listed = append(listed, "strongbox "+cmd)
		} else if len(listed) > 0 {
			break // the first block only
		}
	}
	var help bytes.Buffer
	if err := run(t.Context(), []string{"help"}, noEnv, &help, io.Discard); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, line := range strings.Split(strings.TrimSpace(help.String()), "\n")[1:] {
		want = append(want, strings.TrimSpace(line))
	}
	if strings.Join(listed, "\n") != strings.Join(want, "\n") {
		t.Errorf("doc.go lists the commands:\n%s\nwant what strongbox help prints:\n%s", strings.Join(listed, "\n"), strings.Join(want, "\n"))
	}
}
