package mail_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"net/mail"

	strongmail "strongbox/authn/mail"
)

func TestOutboxWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mail")
	o := &strongmail.Outbox{Dir: dir}
	path, err := o.Write(testMessage(), testDate)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(path) != dir || !strings.HasPrefix(filepath.Base(path), "20261123T170000.000000000Z-") || filepath.Ext(path) != ".eml" {
		t.Errorf("Write = %q, want %s/20261123T170000.000000000Z-*.eml", path, dir)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// An ASCII mail is written 7bit: the file reads as the mail's text.
	if !strings.Contains(string(raw), "Content-Transfer-Encoding: 7bit\r\n") || !strings.Contains(string(raw), "<strong>12345678</strong>") {
		t.Errorf("file = %s, want 7bit parts with the code as it is", raw)
	}
	msg, err := mail.ReadMessage(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatalf("ReadMessage: %v", err)
	}
	if g, w := msg.Header.Get("To"), "<user@example.com>"; g != w {
		t.Errorf("To = %q, want %q", g, w)
	}
	if parts := readParts(t, msg); !strings.Contains(parts["text/plain"], "12345678") {
		t.Errorf("text part = %q, want the code", parts["text/plain"])
	}
	if names := list(t, dir); len(names) != 1 {
		t.Errorf("folder holds %q, want one file and no temporary one", names)
	}
}

func TestOutboxBounded(t *testing.T) {
	dir := t.TempDir()
	o := &strongmail.Outbox{Dir: dir, Max: 3}
	var written []string
	for i := range 5 {
		p, err := o.Write(testMessage(), testDate.Add(time.Duration(i)*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		written = append(written, filepath.Base(p))
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Write(testMessage(), testDate.Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	got := list(t, dir)
	want := append(slices.Clone(written[3:]), got[2], "notes.txt")
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("folder = %q, want %q (the 3 newest mails, and the other file kept)", got, want)
	}
}

func TestOutboxRefusesInjection(t *testing.T) {
	dir := t.TempDir()
	m := testMessage()
	m.Subject = "a\r\nBcc: x@example.com"
	if _, err := (&strongmail.Outbox{Dir: dir}).Write(m, testDate); err == nil {
		t.Fatal("Write = nil, want ErrHeaderInjection")
	}
	if names := list(t, dir); len(names) != 0 {
		t.Errorf("folder = %q, want empty", names)
	}
}

func list(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}
