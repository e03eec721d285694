package backup

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// Retention says which automatic archives the schedule keeps: restic's
// `forget --keep-last N --keep-daily N --keep-weekly N --keep-monthly N`
// rule, applied to the automatic archives only ([IsAuto]). Each policy
// of count N keeps the newest archive of each of the N most recent
// periods (UTC days, ISO 8601 weeks, months) that hold at least one
// archive; a period without one is skipped, not counted, so a gap never
// costs history. Last keeps the N newest archives outright (the settings'
// cronMaxKeep). An archive kept by any policy is kept. As in restic since
// 0.17, a policy that still has periods left when it reaches the oldest
// archive keeps that one too, so that the history reaches as far back as
// the counts allow. A policy of 0 is not used; all four 0 keep everything.
// The rule counts periods that hold archives, not calendar days before
// now, so it needs no clock: a schedule that stopped for a month keeps
// its last archives rather than losing them all.
type Retention struct {
	Last, Daily, Weekly, Monthly int
}

// Prune returns the automatic archives of list that r does not keep, newest
// first, and those it keeps, newest first; manual and uploaded archives are
// in neither. An archive's time is its modification time in UTC (the
// instant its create completed); equal times are ordered by key, the
// greater key newer, so that the result does not depend on list's order.
func (r Retention) Prune(list []Info) (drop, keep []Info) {
	autos := make([]Info, 0, len(list))
	for _, i := range list {
		if IsAuto(i.Key) {
			autos = append(autos, i)
		}
	}
	slices.SortFunc(autos, func(x, y Info) int {
		return cmp.Or(y.Modified.Compare(x.Modified), strings.Compare(y.Key, x.Key))
	})
	if r.Last <= 0 && r.Daily <= 0 && r.Weekly <= 0 && r.Monthly <= 0 {
		return nil, autos
	}
	policies := []*bucketPolicy{
		{left: r.Last, period: nil},
		{left: r.Daily, period: func(t time.Time) int { y, m, d := t.Date(); return y*10000 + int(m)*100 + d }},
		{left: r.Weekly, period: func(t time.Time) int { y, w := t.ISOWeek(); return y*100 + w }},
		{left: r.Monthly, period: func(t time.Time) int { y, m, _ := t.Date(); return y*100 + int(m) }},
	}
	for n, a := range autos {
		kept := false
		for _, p := range policies {
			kept = p.take(a.Modified.UTC(), n, n == len(autos)-1) || kept
		}
		if kept {
			keep = append(keep, a)
		} else {
			drop = append(drop, a)
		}
	}
	return drop, keep
}

// bucketPolicy is one policy of a [Retention] while Prune walks the
// archives newest first: it keeps the first archive of each new period
// until it has kept left of them.
type bucketPolicy struct {
	left   int
	period func(time.Time) int // nil: every archive is a period of its own (Last)
	last   int
	seen   bool
}

// take reports whether the policy keeps the archive of time t, the nth
// newest, and the oldest if oldest is set.
func (p *bucketPolicy) take(t time.Time, n int, oldest bool) bool {
	if p.left <= 0 {
		return false
	}
	v := n
	if p.period != nil {
		v = p.period(t)
	}
	if p.seen && v == p.last && !oldest {
		return false
	}
	p.seen, p.last = true, v
	p.left--
	return true
}
