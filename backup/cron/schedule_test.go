package cron

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// parseTests are also the seeds of FuzzParse.
var parseTests = []struct {
	name  string
	expr  string
	field string // "" when valid or when the fault is the whole expression
	msg   string // PocketBase's message; "" when valid
}{
	{name: "every minute", expr: "* * * * *"},
	{name: "numbers", expr: "5 4 3 2 1"},
	{name: "ranges", expr: "0-59 0-23 1-31 1-12 0-6"},
	{name: "steps", expr: "*/15 */6 */10 */3 */2"},
	{name: "range step", expr: "10-40/10 1-23/2 1-31/31 1-12/12 1-5/6"},
	{name: "lists", expr: "0,15,30-45/5 0,12 1,15 1,6,12 0,6"},
	{name: "step 1 on a value", expr: "5/1 * * * *"},
	{name: "plus sign", expr: "+5 * * * *"},
	{name: "leading zero", expr: "05 07 09 08 00"},
	{name: "max step", expr: "*/59 */23 */31 */12 */6"},
	{name: "yearly", expr: "@yearly"},
	{name: "annually", expr: "@annually"},
	{name: "monthly", expr: "@monthly"},
	{name: "weekly", expr: "@weekly"},
	{name: "daily", expr: "@daily"},
	{name: "midnight", expr: "@midnight"},
	{name: "hourly", expr: "@hourly"},

	{name: "empty", expr: "", msg: InvalidMessage},
	{name: "four fields", expr: "* * * *", msg: InvalidMessage},
	{name: "six fields", expr: "0 * * * * *", msg: InvalidMessage},
	{name: "double space", expr: "0  * * * *", msg: InvalidMessage},
	{name: "leading space", expr: " 0 * * * *", msg: InvalidMessage},
	{name: "trailing space", expr: "0 * * * * ", msg: InvalidMessage},
	{name: "tab", expr: "0\t* * * *", msg: InvalidMessage},
	{name: "unknown macro", expr: "@reboot", msg: InvalidMessage},
	{name: "every macro", expr: "@every 1h", msg: InvalidMessage},
	{name: "macro upper case", expr: "@DAILY", msg: InvalidMessage},
	{name: "macro with space", expr: "@daily ", msg: InvalidMessage},
	{name: "too long", expr: strings.Repeat("1,", 200) + "1 * * * *", msg: InvalidMessage},

	{name: "minute 60", expr: "60 * * * *", field: "minute",
		msg: "Invalid segment value - must be between the min and max of the segment."},
	{name: "hour 24", expr: "0 24 * * *", field: "hour",
		msg: "Invalid segment value - must be between the min and max of the segment."},
	{name: "day 0", expr: "0 0 0 * *", field: "day of month",
		msg: "Invalid segment value - must be between the min and max of the segment."},
	{name: "month 13", expr: "0 0 * 13 *", field: "month",
		msg: "Invalid segment value - must be between the min and max of the segment."},
	{name: "sunday 7", expr: "0 0 * * 7", field: "day of week",
		msg: "Invalid segment value - must be between the min and max of the segment."},
	{name: "weekday name", expr: "0 0 * * MON", field: "day of week",
		msg: `Strconv.Atoi: parsing "MON": invalid syntax.`},
	{name: "month name", expr: "0 0 1 JAN *", field: "month",
		msg: `Strconv.Atoi: parsing "JAN": invalid syntax.`},
	{name: "question mark", expr: "0 0 ? * *", field: "day of month",
		msg: `Strconv.Atoi: parsing "?": invalid syntax.`},
	{name: "empty list item", expr: "1,,2 * * * *", field: "minute",
		msg: `Strconv.Atoi: parsing "": invalid syntax.`},
	{name: "huge number", expr: "99999999999999999999 * * * *", field: "minute",
		msg: `Strconv.Atoi: parsing "99999999999999999999": value out of range.`},
	{name: "step 0", expr: "*/0 * * * *", field: "minute",
		msg: "Invalid segment step boundary - the step must be between 1 and the 59."},
	{name: "step above max", expr: "*/60 * * * *", field: "minute",
		msg: "Invalid segment step boundary - the step must be between 1 and the 59."},
	{name: "weekday step 7", expr: "* * * * */7", field: "day of week",
		msg: "Invalid segment step boundary - the step must be between 1 and the 6."},
	{name: "negative step", expr: "*/-5 * * * *", field: "minute",
		msg: "Invalid segment step boundary - the step must be between 1 and the 59."},
	{name: "empty step", expr: "*/ * * * *", field: "minute",
		msg: `Strconv.Atoi: parsing "": invalid syntax.`},
	{name: "two slashes", expr: "*/5/2 * * * *", field: "minute",
		msg: "Invalid segment step format - must be in the format */n or 1-30/n."},
	{name: "step on a value", expr: "5/10 * * * *", field: "minute",
		msg: "Invalid segement step - step > 1 could be used only with the wildcard or range format."},
	{name: "step checked before value", expr: "x/0 * * * *", field: "minute",
		msg: "Invalid segment step boundary - the step must be between 1 and the 59."},
	{name: "reversed range", expr: "0 0 * 5-3 *", field: "month",
		msg: "Invalid segment range maximum - must be between 5 and 12."},
	{name: "range end above max", expr: "0 0 * * 1-7", field: "day of week",
		msg: "Invalid segment range maximum - must be between 1 and 6."},
	{name: "range start below min", expr: "0 0 0-5 * *", field: "day of month",
		msg: "Invalid segment range minimum - must be between 1 and 31."},
	{name: "open range", expr: "5- * * * *", field: "minute",
		msg: `Strconv.Atoi: parsing "": invalid syntax.`},
	{name: "negative value", expr: "-5 * * * *", field: "minute",
		msg: `Strconv.Atoi: parsing "": invalid syntax.`},
	{name: "three part range", expr: "1-2-3 * * * *", field: "minute",
		msg: "Invalid segment range format - the range must have 1 or 2 parts."},
	{name: "star range", expr: "*-5 * * * *", field: "minute",
		msg: `Strconv.Atoi: parsing "*": invalid syntax.`},
	{name: "double star", expr: "** * * * *", field: "minute",
		msg: `Strconv.Atoi: parsing "**": invalid syntax.`},
	{name: "first fault wins", expr: "60 24 * * *", field: "minute",
		msg: "Invalid segment value - must be between the min and max of the segment."},
}

func TestParse(t *testing.T) {
	for _, tt := range parseTests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.expr)
			if tt.msg == "" {
				if err != nil {
					t.Fatalf("Parse(%q) = %v, want a schedule", tt.expr, err)
				}
				if s.String() != tt.expr {
					t.Errorf("Parse(%q).String() = %q, want the expression back", tt.expr, s.String())
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want an error", tt.expr, s)
			}
			if !errors.Is(err, ErrSyntax) {
				t.Errorf("Parse(%q) = %v, which is not ErrSyntax", tt.expr, err)
			}
			se, ok := errors.AsType[*SyntaxError](err)
			if !ok {
				t.Fatalf("Parse(%q) = %T, want *SyntaxError", tt.expr, err)
			}
			if se.Field != tt.field {
				t.Errorf("Parse(%q).Field = %q, want %q", tt.expr, se.Field, tt.field)
			}
			if se.Message() != tt.msg {
				t.Errorf("Parse(%q).Message() = %q, want %q", tt.expr, se.Message(), tt.msg)
			}
			if !strings.HasPrefix(err.Error(), "cron: ") {
				t.Errorf("Parse(%q).Error() = %q, want the package prefix", tt.expr, err)
			}
		})
	}
}

func TestSyntaxErrorOffset(t *testing.T) {
	tests := []struct {
		expr   string
		offset int
	}{
		{"60 * * * *", 0},
		{"* 0,1,x * * *", 6},
		{"* * * * 1-7", 8},
		{"0,5,10 0 1 1 0,7", 15},
	}
	for _, tt := range tests {
		_, err := Parse(tt.expr)
		se, ok := errors.AsType[*SyntaxError](err)
		if !ok {
			t.Fatalf("Parse(%q) = %v, want *SyntaxError", tt.expr, err)
		}
		if se.Offset != tt.offset {
			t.Errorf("Parse(%q).Offset = %d, want %d (%v)", tt.expr, se.Offset, tt.offset, err)
		}
	}
}

func mustParse(t testing.TB, expr string) *Schedule {
	t.Helper()
	s, err := Parse(expr)
	if err != nil {
		t.Fatalf("Parse(%q) = %v", expr, err)
	}
	return s
}

func utc(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestMatches(t *testing.T) {
	tests := []struct {
		name string
		expr string
		at   string // UTC; 2026-11-23 is a Monday
		want bool
	}{
		{"every minute", "* * * * *", "2026-11-23 15:07", true},
		{"minute", "7 * * * *", "2026-11-23 15:07", true},
		{"wrong minute", "8 * * * *", "2026-11-23 15:07", false},
		{"hour", "0 15 * * *", "2026-11-23 15:00", true},
		{"wrong hour", "0 14 * * *", "2026-11-23 15:00", false},
		{"step hit", "*/15 * * * *", "2026-11-23 15:45", true},
		{"step miss", "*/15 * * * *", "2026-11-23 15:46", false},
		{"range step hit", "10-40/10 * * * *", "2026-11-23 15:40", true},
		{"range step miss", "10-40/10 * * * *", "2026-11-23 15:50", false},
		{"day step", "0 0 */10 * *", "2026-11-21 00:00", true},
		{"day step miss", "0 0 */10 * *", "2026-11-20 00:00", false},
		{"list", "0 0 * 1,6,11 *", "2026-11-23 00:00", true},
		{"sunday is 0", "0 0 * * 0", "2026-11-22 00:00", true},
		{"saturday is 6", "0 0 * * 6", "2026-11-21 00:00", true},
		{"monday not sunday", "0 0 * * 0", "2026-11-23 00:00", false},
		{"weekday range", "0 9 * * 1-5", "2026-11-23 09:00", true},
		{"weekend", "0 9 * * 1-5", "2026-11-22 09:00", false},
		// PocketBase ANDs day of month and day of week; classic cron would
		// fire on every 13th and on every Friday.
		{"friday 13th", "0 0 13 * 5", "2026-11-13 00:00", true},
		{"13th not friday", "0 0 13 * 5", "2026-10-13 00:00", false},
		{"friday not 13th", "0 0 13 * 5", "2026-11-20 00:00", false},
		{"leap day", "0 0 29 2 *", "2028-02-29 00:00", true},
		{"yearly", "@yearly", "2027-01-01 00:00", true},
		{"yearly miss", "@yearly", "2027-01-02 00:00", false},
		{"monthly", "@monthly", "2026-12-01 00:00", true},
		{"weekly", "@weekly", "2026-11-22 00:00", true},
		{"weekly miss", "@weekly", "2026-11-23 00:00", false},
		{"daily", "@daily", "2026-11-23 00:00", true},
		{"midnight miss", "@midnight", "2026-11-23 00:01", false},
		{"hourly", "@hourly", "2026-11-23 15:00", true},
		{"hourly miss", "@hourly", "2026-11-23 15:30", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustParse(t, tt.expr)
			if got := s.Matches(utc(tt.at)); got != tt.want {
				t.Errorf("Parse(%q).Matches(%s) = %v, want %v", tt.expr, tt.at, got, tt.want)
			}
		})
	}
}

func TestMatchesUsesUTC(t *testing.T) {
	s := mustParse(t, "0 0 * * *")
	east := time.FixedZone("UTC+3", 3*3600)
	at := time.Date(2026, 11, 23, 3, 0, 0, 0, east) // midnight UTC
	if !s.Matches(at) {
		t.Errorf("Matches(%v) = false, want true (midnight UTC)", at)
	}
	if s.Matches(time.Date(2026, 11, 23, 0, 0, 0, 0, east)) {
		t.Errorf("Matches(midnight UTC+3) = true, want false")
	}
	if !s.Matches(utc("2026-11-23 00:00").Add(59 * time.Second)) {
		t.Errorf("Matches(00:00:59) = false, want true (seconds are ignored)")
	}
}

func TestNext(t *testing.T) {
	tests := []struct {
		name  string
		expr  string
		after string
		want  string // "" for the zero time
	}{
		{"next minute", "* * * * *", "2026-11-23 15:07", "2026-11-23 15:08"},
		{"strictly after", "7 * * * *", "2026-11-23 15:07", "2026-11-23 16:07"},
		{"hour rollover", "5 * * * *", "2026-11-23 15:59", "2026-11-23 16:05"},
		{"day rollover", "30 1 * * *", "2026-11-23 23:59", "2026-11-24 01:30"},
		{"month rollover", "0 0 1 * *", "2026-11-23 15:07", "2026-12-01 00:00"},
		{"year rollover", "@yearly", "2026-12-31 23:59", "2027-01-01 00:00"},
		{"31st skips short months", "0 12 31 * *", "2026-03-31 12:00", "2026-05-31 12:00"},
		{"leap day", "0 0 29 2 *", "2026-11-23 15:07", "2028-02-29 00:00"},
		{"leap day after one", "0 0 29 2 *", "2028-02-29 00:00", "2032-02-29 00:00"},
		{"no leap day in 2100", "0 0 29 2 *", "2096-02-29 00:00", "2104-02-29 00:00"},
		{"leap day in 2000", "0 0 29 2 *", "1996-02-29 00:00", "2000-02-29 00:00"},
		{"sunday", "0 3 * * 0", "2026-11-23 15:07", "2026-11-29 03:00"},
		{"weekly", "@weekly", "2026-11-22 00:00", "2026-11-29 00:00"},
		{"weekdays over a weekend", "0 9 * * 1-5", "2026-11-27 09:00", "2026-11-30 09:00"},
		{"step", "*/20 * * * *", "2026-11-23 15:41", "2026-11-23 16:00"},
		{"range step", "10-40/15 * * * *", "2026-11-23 15:26", "2026-11-23 15:40"},
		{"list of months", "0 0 1 3,9 *", "2026-11-23 15:07", "2027-03-01 00:00"},
		{"friday the 13th", "0 0 13 * 5", "2026-11-13 00:00", "2027-08-13 00:00"},
		{"leap day monday", "0 0 29 2 1", "2026-11-23 15:07", "2044-02-29 00:00"},
		{"february 31st", "0 0 31 2 *", "2026-11-23 15:07", ""},
		{"february 30th", "* * 30 2 *", "2026-11-23 15:07", ""},
		{"april 31st", "0 0 31 4 *", "2026-11-23 15:07", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustParse(t, tt.expr)
			got := s.Next(utc(tt.after))
			var want time.Time
			if tt.want != "" {
				want = utc(tt.want)
			}
			if !got.Equal(want) {
				t.Errorf("Parse(%q).Next(%s) = %v, want %v", tt.expr, tt.after, got, want)
			}
		})
	}
}

func TestNextSeconds(t *testing.T) {
	s := mustParse(t, "* * * * *")
	after := utc("2026-11-23 15:07").Add(30 * time.Second)
	if got, want := s.Next(after), utc("2026-11-23 15:08"); !got.Equal(want) {
		t.Errorf("Next(15:07:30) = %v, want %v", got, want)
	}
	east := time.FixedZone("UTC+3", 3*3600)
	got := s.Next(time.Date(2026, 11, 23, 18, 7, 0, 0, east))
	if want := utc("2026-11-23 15:08"); !got.Equal(want) || got.Location() != time.UTC {
		t.Errorf("Next(18:07 UTC+3) = %v, want %v in UTC", got, want)
	}
}

// TestNextAgreesWithMatches walks two years minute by minute for a few
// schedules and checks that Next lands on exactly the minutes that Matches.
func TestNextAgreesWithMatches(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	for _, expr := range []string{"*/7 3-5 * * *", "0 0 13 * 5", "0 0 29 2 *", "59 23 31 * 0,6"} {
		s := mustParse(t, expr)
		start := utc("2027-06-01 00:00")
		end := start.AddDate(2, 0, 0)
		next := s.Next(start.Add(-time.Minute))
		for m := start; m.Before(end); m = m.Add(time.Minute) {
			if !s.Matches(m) {
				continue
			}
			if !next.Equal(m) {
				t.Fatalf("%q: Next gave %v, but %v matches first", expr, next, m)
			}
			next = s.Next(m)
		}
	}
}

func BenchmarkNextImpossible(b *testing.B) {
	s := mustParse(b, "0 0 31 2 *")
	at := utc("2026-11-23 15:07")
	for b.Loop() {
		s.Next(at)
	}
}

func FuzzParse(f *testing.F) {
	for _, tt := range parseTests {
		f.Add(tt.expr, int64(1795446420))
	}
	f.Fuzz(func(t *testing.T, expr string, unix int64) {
		s, err := Parse(expr)
		if err != nil {
			if _, ok := errors.AsType[*SyntaxError](err); !ok {
				t.Fatalf("Parse(%q) = %T, want *SyntaxError", expr, err)
			}
			return
		}
		// Keep the time within a few thousand years so that Date arithmetic
		// stays far from the limits of time.Time.
		after := time.Unix(unix%(1<<37), 0)
		next := s.Next(after)
		if next.IsZero() {
			return
		}
		if !next.After(after) {
			t.Fatalf("Parse(%q).Next(%v) = %v, not after it", expr, after, next)
		}
		if !s.Matches(next) || next.Second() != 0 || next.Location() != time.UTC {
			t.Fatalf("Parse(%q).Next(%v) = %v, not a matching UTC minute", expr, after, next)
		}
	})
}
