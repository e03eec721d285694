package validation

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// Error is the failure of one input field, rendered as {code, message} with
// params when it has any. The message is PocketBase's English text.
type Error struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Params  map[string]any `json:"params,omitempty"`
}

// New returns the failure code with the message msg and no params.
func New(code, msg string) *Error { return &Error{Code: code, Message: msg} }

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Errors holds the failures of an input, keyed like the input: each value is
// an *Error, or an Errors for the failures inside an object or a list (keys
// "0", "1", … for list elements), so that {"oauth2": {"enabled": …}} reads
// as the field oauth2.enabled. An empty Errors means no failure.
type Errors map[string]error

// Error lists the failures as "path: message", joined by "; ", with the
// paths in a fixed order (keys sorted, list indexes by number), so the text
// is the same for the same failures: "name: Cannot be blank.;
// rules.0.label: Must be in a valid format.".
func (e Errors) Error() string {
	var b strings.Builder
	e.write(&b, "")
	if b.Len() == 0 {
		return "validation: no failures"
	}
	return b.String()
}

func (e Errors) write(b *strings.Builder, prefix string) {
	keys := make([]string, 0, len(e))
	for k := range e {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	for _, k := range keys {
		switch v := e[k].(type) {
		case nil:
		case Errors:
			v.write(b, prefix+k+".")
		default:
			if b.Len() > 0 {
				b.WriteString("; ")
			}
			b.WriteString(prefix + k + ": " + v.Error())
		}
	}
}

// compareKeys orders list indexes by number, before any other key, and
// other keys as strings.
func compareKeys(a, b string) int {
	i, errA := strconv.Atoi(a)
	j, errB := strconv.Atoi(b)
	switch {
	case errA == nil && errB == nil:
		return cmp.Compare(i, j)
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return strings.Compare(a, b)
}

// Sub returns the nested Errors at key, first putting a new one there if
// key holds none (or holds an *Error, which it replaces).
func (e Errors) Sub(key string) Errors {
	sub, _ := e[key].(Errors)
	if sub == nil {
		sub = Errors{}
		e[key] = sub
	}
	return sub
}
