package pocketbase

import "testing"

func TestQuoteName(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "users", "users"},
		{"system", "_superusers", "_superusers"},
		{"digits", "pbc_3142635823", "pbc_3142635823"},
		{"empty", "", `""`},
		{"space", "my users", `"my users"`},
		{"line break", "a\ncollection b", `"a\ncollection b"`},
		{"escape", "a\x1b[31m", `"a\x1b[31m"`},
		{"dot", "a.b", `"a.b"`},
		{"non-ASCII", "usüers", `"usüers"`},
		{"invalid UTF-8", "a\xff", `"a\xff"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := QuoteName(tt.in); got != tt.want {
				t.Errorf("QuoteName(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}
