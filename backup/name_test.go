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

func TestValidKey(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		want     bool
		wantAuto bool
	}{
		{"name", "a.zip", true, false},
		{"auto", "@auto_sb_backup_20261123152309.zip", true, true},
		{"auto of a max-length name", "@auto_" + strings.Repeat("a", 146) + ".zip", true, true},
		{"auto of a too long name", "@auto_" + strings.Repeat("a", 147) + ".zip", false, false},
		{"prefix only", "@auto_", false, false},
		{"prefix and suffix", "@auto_.zip", false, false},
		{"doubled prefix", "@auto_@auto_a.zip", false, false},
		{"other at", "@a.zip", false, false},
		{"prefix upper case", "@AUTO_a.zip", false, false},
		{"prefix not first", "x@auto_a.zip", false, false},
		{"auto of a bad name", "@auto_A.zip", false, false},
		{"auto path", "@auto_../a.zip", false, false},
		{"empty", "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ValidKey(tt.in); got != tt.want {
				t.Errorf("ValidKey(%q) = %v, want %v", tt.in, got, tt.want)
			}
			if got := IsAuto(tt.in); got != tt.wantAuto {
				t.Errorf("IsAuto(%q) = %v, want %v", tt.in, got, tt.wantAuto)
			}
		})
	}
}

func TestNewAutoName(t *testing.T) {
	now := time.Date(2026, 11, 23, 16, 4, 5, 0, time.FixedZone("x", 3600))
	taken := map[string]bool{"@auto_sb_backup_20261123150405.zip": true, "sb_backup_20261123150405_2.zip": true}
	got := NewAutoName(now, func(k string) bool { return taken[k] })
	if want := "@auto_sb_backup_20261123150405_2.zip"; got != want {
		t.Errorf("NewAutoName(%v) = %q, want %q", now, got, want)
	}
	if !ValidKey(got) || ValidName(got) || !IsAuto(got) {
		t.Errorf("NewAutoName(%v) = %q: ValidKey %v, ValidName %v, IsAuto %v; want true, false, true", now, got, ValidKey(got), ValidName(got), IsAuto(got))
	}
}
