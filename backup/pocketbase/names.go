package pocketbase

import "strconv"

// QuoteName returns a name read from PocketBase's files (a collection,
// table, field, column, option or settings key) as a message or a report
// prints it: as it is when it is not empty and made of ASCII letters,
// digits and '_' only, as every name PocketBase itself accepts is; else
// quoted as a Go string (strconv.Quote). So a crafted data.db can neither
// start a line of its own in a report nor send a terminal escape
// sequence, and an odd name shows as odd.
func QuoteName(s string) string {
	if s == "" {
		return `""`
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return strconv.Quote(s)
		}
	}
	return s
}
