package backup

import (
	"strconv"
	"strings"
	"time"
)

// MaxNameLen is the longest valid archive name, in characters
// (reference §1.4: "The length must be between 1 and 150.").
const MaxNameLen = 150

// ValidName reports whether name is a valid archive name: 1 to 150
// characters matching ^[a-z0-9_-]+\.zip$ (reference §1.4, rule
// validation_match_invalid).
func ValidName(name string) bool {
	if len(name) > MaxNameLen {
		return false
	}
	stem, ok := strings.CutSuffix(name, ".zip")
	if !ok || stem == "" {
		return false
	}
	for i := 0; i < len(stem); i++ {
		c := stem[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// NewName returns a generated archive name, sb_backup_YYYYMMDDHHMMSS.zip
// in UTC, for which exists reports false. If the plain name is taken it
// tries _2, _3, … before .zip, so a second backup within the same second
// never overwrites the first (the reference silently does).
func NewName(now time.Time, exists func(string) bool) string {
	stem := "sb_backup_" + now.UTC().Format("20060102150405")
	name := stem + ".zip"
	for i := 2; exists(name); i++ {
		name = stem + "_" + strconv.Itoa(i) + ".zip"
	}
	return name
}
