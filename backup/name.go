package backup

import (
	"strconv"
	"strings"
	"time"
)

// MaxNameLen is the longest valid archive name, in characters
// (PocketBase's message: "The length must be between 1 and 150.").
const MaxNameLen = 150

// ValidName reports whether name is a valid archive name: 1 to 150
// characters matching ^[a-z0-9_-]+\.zip$ (PocketBase's rule,
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

// AutoPrefix starts the key of every archive the auto-backup schedule
// creates, as "@auto_pb_backup_" does in PocketBase. No valid
// name starts with "@", so a user can neither create nor upload an archive
// that the schedule's pruning would take for one of its own.
const AutoPrefix = "@auto_"

// ValidKey reports whether key is the key of a stored archive: a
// [ValidName], or [AutoPrefix] followed by a ValidName (an automatic
// backup). Every Dir method that takes an existing or new key accepts
// both; Put, which stores an upload under the client's name, takes a
// ValidName only.
func ValidKey(key string) bool {
	return ValidName(strings.TrimPrefix(key, AutoPrefix))
}

// IsAuto reports whether key is the key of an automatic backup.
func IsAuto(key string) bool {
	return strings.HasPrefix(key, AutoPrefix) && ValidKey(key)
}

// NewAutoName returns the key of an automatic backup,
// @auto_sb_backup_YYYYMMDDHHMMSS.zip in UTC, for which exists reports
// false, made unique as NewName does.
func NewAutoName(now time.Time, exists func(string) bool) string {
	return AutoPrefix + NewName(now, func(name string) bool { return exists(AutoPrefix + name) })
}

// NewName returns a generated archive name, sb_backup_YYYYMMDDHHMMSS.zip
// in UTC, for which exists reports false. If the plain name is taken it
// tries _2, _3, … before .zip, so a second backup within the same second
// never overwrites the first (PocketBase silently does).
func NewName(now time.Time, exists func(string) bool) string {
	stem := "sb_backup_" + now.UTC().Format("20060102150405")
	name := stem + ".zip"
	for i := 2; exists(name); i++ {
		name = stem + "_" + strconv.Itoa(i) + ".zip"
	}
	return name
}
