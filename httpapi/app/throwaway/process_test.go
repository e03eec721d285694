package throwaway

import "testing"

func TestParseReadyLine(t *testing.T) {
	for _, tt := range []struct {
		line, base string
		ok         bool
	}{
		{ReadyLine("0.1.0-dev", "http://127.0.0.1:8090", "./sb_data"), "http://127.0.0.1:8090", true},
		{ReadyLine("1.2.3", "http://[::1]:41234", "/tmp/a dir"), "http://[::1]:41234", true},
		{"strongbox 0.1.0 listening on 127.0.0.1:8090", "", false},
		{"time=… level=INFO msg=\"listening on http://127.0.0.1:8090\"", "", false},
		{"", "", false},
	} {
		base, ok := ParseReadyLine(tt.line)
		if base != tt.base || ok != tt.ok {
			t.Errorf("ParseReadyLine(%q) = %q, %v; want %q, %v", tt.line, base, ok, tt.base, tt.ok)
		}
	}
}

func TestLineWriter(t *testing.T) {
	var got []string
	w := &lineWriter{line: func(s string) { got = append(got, s) }}
	for _, p := range []string{"a", "b\nc", "\n\nd"} {
		w.Write([]byte(p))
	}
	if want := []string{"ab", "c", ""}; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("lines %q, want %q", got, want)
	}
	tail := &tailWriter{}
	tail.Write([]byte("first\nsecond line\n\n"))
	if got := tail.last(); got != "second line" {
		t.Errorf("last() = %q, want the last non-empty line", got)
	}
}
