package cron

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// MaxLen is the longest expression Parse considers, in bytes. PocketBase has
// no limit; every field listed value by value still fits in 256 bytes for
// the expressions people write, and the bound keeps a hostile settings body
// from costing more than a glance.
const MaxLen = 256

// InvalidMessage is the message PocketBase gives, under the code
// validation_invalid_cron, for an expression that is neither a macro nor five
// space-separated fields. SyntaxError.Message returns it or
// the message for a more particular fault.
const InvalidMessage = "Invalid cron expression - must be a valid macro or to have exactly 5 space separated segments."

// ErrSyntax is matched (errors.Is) by every error Parse returns.
var ErrSyntax = errors.New("cron: invalid expression")

// SyntaxError describes why Parse refused an expression.
type SyntaxError struct {
	Offset int    // byte offset of the offending item in the expression
	Field  string // "minute", "hour", "day of month", "month", "day of week"; "" for the whole expression
	Reason string // what is wrong, in this package's words
	msg    string // PocketBase's message for the same fault, sentenized
}

// Error reports the fault in the package's error style.
func (e *SyntaxError) Error() string {
	if e.Field == "" {
		return "cron: " + e.Reason
	}
	return fmt.Sprintf("cron: %s field at offset %d: %s", e.Field, e.Offset, e.Reason)
}

// Is makes errors.Is(err, ErrSyntax) true.
func (e *SyntaxError) Is(target error) bool { return target == ErrSyntax }

// Message returns the message PocketBase v0.31 shows for the same fault under
// the code validation_invalid_cron: PocketBase passes the error text of
// tools/cron.NewSchedule to the validator, and the API sentenizes it (first
// letter upper case, a final period). Faults that PocketBase does not have
// (the length bound) get InvalidMessage.
func (e *SyntaxError) Message() string {
	if e.msg == "" {
		return InvalidMessage
	}
	return e.msg
}

// Schedule is a parsed expression: the set of minutes it matches.
type Schedule struct {
	expr    string
	minutes uint64 // bit i: minute i
	hours   uint32 // bit i: hour i
	days    uint32 // bit i: day of month i (1-31)
	months  uint16 // bit i: month i (1-12)
	wdays   uint8  // bit i: weekday i (0 = Sunday)
}

// String returns the expression the schedule was parsed from.
func (s *Schedule) String() string { return s.expr }

// macros are PocketBase's, spelled out (tools/cron/schedule.go).
var macros = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

type fieldSpec struct {
	name     string
	min, max int
}

var fieldSpecs = [5]fieldSpec{
	{"minute", 0, 59},
	{"hour", 0, 23},
	{"day of month", 1, 31},
	{"month", 1, 12},
	{"day of week", 0, 6},
}

// Parse parses a cron expression or macro (see the package documentation).
// An error is always a *SyntaxError.
func Parse(expr string) (*Schedule, error) {
	if len(expr) > MaxLen {
		return nil, &SyntaxError{Offset: MaxLen, Reason: fmt.Sprintf("expression longer than %d bytes", MaxLen)}
	}
	src := expr
	if m, ok := macros[expr]; ok {
		src = m
	}
	fields := strings.Split(src, " ")
	if len(fields) != 5 {
		return nil, &SyntaxError{
			Reason: fmt.Sprintf("want a macro or 5 fields separated by single spaces, have %d", len(fields)),
			msg:    InvalidMessage,
		}
	}
	var sets [5]uint64
	off := 0
	for i, f := range fields {
		set, err := parseField(f, off, fieldSpecs[i])
		if err != nil {
			return nil, err
		}
		sets[i] = set
		off += len(f) + 1
	}
	return &Schedule{
		expr:    expr,
		minutes: sets[0],
		hours:   uint32(sets[1]),
		days:    uint32(sets[2]),
		months:  uint16(sets[3]),
		wdays:   uint8(sets[4]),
	}, nil
}

// parseField parses one comma-separated field starting at byte off of the
// expression. Its checks come in PocketBase's order (the step of an item
// before its range), so that the first fault found is the one PocketBase
// reports.
func parseField(f string, off int, spec fieldSpec) (uint64, *SyntaxError) {
	var set uint64
	for item := range strings.SplitSeq(f, ",") {
		bad := func(reason, msg string) *SyntaxError {
			return &SyntaxError{Offset: off, Field: spec.name, Reason: reason, msg: sentenize(msg)}
		}
		rng, stepText, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			if strings.Contains(stepText, "/") {
				return 0, bad(fmt.Sprintf("%q has more than one '/'", item),
					"invalid segment step format - must be in the format */n or 1-30/n")
			}
			n, err := strconv.Atoi(stepText)
			if err != nil {
				return 0, bad(fmt.Sprintf("step %q is not a number", stepText), err.Error())
			}
			if n < 1 || n > spec.max {
				return 0, bad(fmt.Sprintf("step %d outside 1-%d", n, spec.max),
					fmt.Sprintf("invalid segment step boundary - the step must be between 1 and the %d", spec.max))
			}
			step = n
		}

		var lo, hi int
		switch loText, hiText, isRange := strings.Cut(rng, "-"); {
		case rng == "*":
			lo, hi = spec.min, spec.max
		case !isRange:
			if step != 1 {
				return 0, bad(fmt.Sprintf("step on the single value %q (use * or a range)", rng),
					"invalid segement step - step > 1 could be used only with the wildcard or range format")
			}
			n, err := strconv.Atoi(rng)
			if err != nil {
				return 0, bad(fmt.Sprintf("%q is not a number", rng), err.Error())
			}
			if n < spec.min || n > spec.max {
				return 0, bad(fmt.Sprintf("value %d outside %d-%d", n, spec.min, spec.max),
					"invalid segment value - must be between the min and max of the segment")
			}
			lo, hi = n, n
		case strings.Contains(hiText, "-"):
			return 0, bad(fmt.Sprintf("range %q has more than one '-'", rng),
				"invalid segment range format - the range must have 1 or 2 parts")
		default:
			a, err := strconv.Atoi(loText)
			if err != nil {
				return 0, bad(fmt.Sprintf("range start %q is not a number", loText), err.Error())
			}
			if a < spec.min || a > spec.max {
				return 0, bad(fmt.Sprintf("range start %d outside %d-%d", a, spec.min, spec.max),
					fmt.Sprintf("invalid segment range minimum - must be between %d and %d", spec.min, spec.max))
			}
			b, err := strconv.Atoi(hiText)
			if err != nil {
				return 0, bad(fmt.Sprintf("range end %q is not a number", hiText), err.Error())
			}
			if b < a || b > spec.max {
				return 0, bad(fmt.Sprintf("range end %d outside %d-%d", b, a, spec.max),
					fmt.Sprintf("invalid segment range maximum - must be between %d and %d", a, spec.max))
			}
			lo, hi = a, b
		}
		for v := lo; v <= hi; v += step {
			set |= 1 << v
		}
		off += len(item) + 1
	}
	return set, nil
}

// sentenize is PocketBase's inflector.Sentenize, which the API applies to
// every validation message: trim, upper-case the first letter, and end with
// a period unless the text already ends with '.', '?' or '!'.
func sentenize(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	r := []rune(s)
	out := string(unicode.ToUpper(r[0])) + string(r[1:])
	switch r[len(r)-1] {
	case '.', '?', '!':
		return out
	}
	return out + "."
}

// Matches reports whether the minute of t, taken in UTC, is one the schedule
// names. Seconds are ignored. Every field must match (see the package
// documentation on day of month and day of week).
func (s *Schedule) Matches(t time.Time) bool {
	t = t.UTC()
	return s.minutes&(1<<t.Minute()) != 0 &&
		s.hours&(1<<t.Hour()) != 0 &&
		s.days&(1<<t.Day()) != 0 &&
		s.months&(1<<t.Month()) != 0 &&
		s.wdays&(1<<t.Weekday()) != 0
}

// searchYears bounds Next. The Gregorian calendar, weekdays included,
// repeats every 400 years (146097 days are 20871 weeks), so a schedule that
// matches no minute in 400 years matches none ever.
const searchYears = 400

// Next returns the first minute strictly after after (a time whose seconds
// are zero, in UTC) that the schedule matches. It returns the zero time if
// there is none: a schedule such as "0 0 31 2 *" (February 31st) or
// "0 0 30 2 *" never matches, and Next gives up after 400 years rather than
// search for ever.
func (s *Schedule) Next(after time.Time) time.Time {
	t := after.UTC().Truncate(time.Minute).Add(time.Minute)
	end := t.AddDate(searchYears, 0, 1)
	for t.Before(end) {
		y, mo, d := t.Date()
		switch {
		case s.months&(1<<mo) == 0:
			t = time.Date(y, mo+1, 1, 0, 0, 0, 0, time.UTC)
		case s.days&(1<<d) == 0 || s.wdays&(1<<t.Weekday()) == 0:
			t = time.Date(y, mo, d+1, 0, 0, 0, 0, time.UTC)
		case s.hours&(1<<t.Hour()) == 0:
			t = t.Truncate(time.Hour).Add(time.Hour)
		case s.minutes&(1<<t.Minute()) == 0:
			t = t.Add(time.Minute)
		default:
			return t
		}
	}
	return time.Time{}
}
