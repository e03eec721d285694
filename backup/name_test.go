package backup

import (
	"strings"
	"testing"
	"time"
)

func TestValidName(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"simple", "a.zip", true},
		{"generated", "sb_backup_20261123152309.zip", true},
		{"dash digits", "x-1_2.zip", true},
		{"max length", strings.Repeat("a", 146) + ".zip", true},
		{"too long", strings.Repeat("a", 147) + ".zip", false},
		{"empty", "", false},
		{"only suffix", ".zip", false},
		{"no suffix", "abc", false},
		{"upper case", "A.zip", false},
		{"upper suffix", "a.ZIP", false},
		{"dot in stem", "a.b.zip", false},
		{"at sign", "@auto_x.zip", false},
		{"slash", "a/b.zip", false},
		{"dotdot", "../a.zip", false},
		{"backslash", `a\b.zip`, false},
		{"space", "a b.zip", false},
		{"temp file", ".tmp-0123.zip", false},
		{"unicode", "é.zip", false},
		{"trailing", "a.zip ", false},
		{"nul", "a\x00.zip", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ValidName(tt.in); got != tt.want {
				t.Errorf("ValidName(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestNewName(t *testing.T) {
	now := time.Date(2026, 11, 23, 16, 4, 5, 999, time.FixedZone("x", 3600))
	tests := []struct {
		name  string
		taken []string
		want  string
	}{
		{"free", nil, "sb_backup_20261123150405.zip"},
		{"taken once", []string{"sb_backup_20261123150405.zip"}, "sb_backup_20261123150405_2.zip"},
		{"taken twice", []string{"sb_backup_20261123150405.zip", "sb_backup_20261123150405_2.zip"}, "sb_backup_20261123150405_3.zip"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exists := func(s string) bool {
				for _, x := range tt.taken {
					if x == s {
						return true
					}
				}
				return false
			}
			got := NewName(now, exists)
			if got != tt.want {
				t.Errorf("NewName(%v) = %q, want %q", now, got, tt.want)
			}
			if !ValidName(got) {
				t.Errorf("NewName(%v) = %q, which ValidName refuses", now, got)
			}
		})
	}
}
