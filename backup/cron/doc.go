// Package cron does one job: it decides when the automatic backup runs. It
// parses the cron expression of the settings field backups.cron, answers
// whether a given minute matches it, and runs one job on that schedule,
// checked once a minute in UTC.
//
// # Expressions
//
// The syntax and meaning are PocketBase v0.31's (tools/cron/schedule.go),
// because the same settings must be accepted, refused and obeyed alike:
//
//	expr    = macro | field " " field " " field " " field " " field
//	macro   = "@yearly" | "@annually" | "@monthly" | "@weekly" | "@daily" | "@midnight" | "@hourly"
//	field   = item { "," item }
//	item    = ( "*" | number | number "-" number ) [ "/" number ]
//	number  = [ "+" ] digit { digit }
//
// The fields are minute 0-59, hour 0-23, day of month 1-31, month 1-12 and
// day of week 0-6 (Sunday is 0). Facts that differ from other crons:
//
//   - The five fields are separated by exactly one space: no tabs, no
//     leading, trailing or doubled spaces.
//   - No names (MON, JAN), no 7 for Sunday, no "?", "L", "W" or "#", no
//     "@every", no seconds field. Macros match exactly, case included.
//   - A step is 1 up to the field's maximum (so "*/60" is refused for
//     minutes); a step above 1 needs "*" or a range ("5/10" is refused, while
//     "5/1" is accepted and means 5).
//   - A number is what Go's strconv.Atoi accepts there, so "+5" and "05"
//     both mean 5.
//   - All five fields must match. Where classic cron fires when either the
//     day of month or the day of week matches (both being restricted),
//     PocketBase requires both (Schedule.IsDue checks every field), so
//     "0 0 13 * 5" fires only on a Friday the 13th.
//   - Times are taken in UTC.
//
// A refused expression gives a *SyntaxError. Its Message is the text
// PocketBase puts under the code validation_invalid_cron for the same input;
// InvalidMessage is the most common of them.
//
// # Scheduler
//
// Scheduler wakes at every minute boundary and runs its job if that minute
// matches. It never runs the job twice for the same minute, and never runs
// it concurrently with itself: a minute that comes due while the previous
// run is still going is skipped and logged. Set replaces the schedule at any
// time (the settings reload); Stop waits for a running job.
package cron
