package filterlang

import (
	"fmt"
	"strings"
)

// Sort limits.
const (
	// MaxSortFields is the most fields a sort expression may name.
	MaxSortFields = 8
	// maxSortName is the longest sort field name, in bytes.
	maxSortName = 255
)

// RandomSort is the sort field name that asks for a random order.
const RandomSort = "@random"

// SortField is one key of a sort expression.
type SortField struct {
	Name string // field name as written, or RandomSort
	Desc bool   // written with a leading '-'
}

// ParseSort parses a sort expression: comma-separated field names, each
// optionally prefixed with '-' (descending) or '+' (ascending, the
// default), with surrounding whitespace ignored. RandomSort ("@random") is
// always accepted; every other name must satisfy known (nil known accepts
// every name). An empty s yields no fields and no error. Empty pieces
// ("a,,b", a trailing comma), a second sign ("--x", "+-x"), names longer
// than 255 bytes, more than MaxSortFields fields and unknown names are
// reported as a *SyntaxError at the offending piece.
func ParseSort(s string, known func(name string) bool) ([]SortField, error) {
	if s == "" {
		return nil, nil
	}
	var out []SortField
	for off := 0; ; {
		piece, rest, more := strings.Cut(s[off:], ",")
		pos := off + len(piece) - len(strings.TrimLeft(piece, " \t\n\r\v\f"))
		name := strings.TrimSpace(piece)
		if len(out) == MaxSortFields {
			return nil, &SyntaxError{Offset: pos, Msg: fmt.Sprintf("too many sort fields (max %d)", MaxSortFields)}
		}
		f := SortField{Name: name}
		switch {
		case strings.HasPrefix(name, "-"):
			f.Name, f.Desc = name[1:], true
		case strings.HasPrefix(name, "+"):
			f.Name = name[1:]
		}
		switch {
		case name == "":
			return nil, &SyntaxError{Offset: pos, Msg: "empty sort field"}
		case f.Name == "":
			return nil, &SyntaxError{Offset: pos, Msg: fmt.Sprintf("sort field %q has no name", name)}
		case f.Name[0] == '-' || f.Name[0] == '+':
			return nil, &SyntaxError{Offset: pos + 1, Msg: fmt.Sprintf("sort field %q has more than one sign", name)}
		case len(f.Name) > maxSortName:
			return nil, &SyntaxError{Offset: pos, Msg: fmt.Sprintf("sort field name longer than %d bytes", maxSortName)}
		case f.Name != RandomSort && known != nil && !known(f.Name):
			return nil, &SyntaxError{Offset: pos, Msg: fmt.Sprintf("unknown sort field %q", f.Name)}
		}
		out = append(out, f)
		if !more {
			return out, nil
		}
		off = len(s) - len(rest)
	}
}
