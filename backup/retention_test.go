package backup

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// autoAt is an automatic archive modified at the RFC 3339 time ts, keyed by it.
func autoAt(ts string) Info {
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		panic(err)
	}
	return Info{Key: AutoPrefix + "sb_backup_" + t.UTC().Format("20060102150405") + ".zip", Modified: t}
}

// stamps are the UTC times of the archives' keys, in order.
func stamps(list []Info) []string {
	out := make([]string, 0, len(list))
	for _, i := range list {
		out = append(out, i.Modified.UTC().Format("2006-01-02T15:04"))
	}
	return out
}

// TestRetentionPrune checks restic's forget rule: the newest archive of
// each of the last N periods that hold one, per policy, the union of the
// policies, the oldest archive kept while a policy has periods left, UTC
// days, ISO weeks across a year's end, months, gaps, and that manual
// archives are never in either list.
func TestRetentionPrune(t *testing.T) {
	// Four a day, at 00, 06, 12, 18 h, from 2026-03-01 to 2026-03-04.
	var fourADay []Info
	for d := 1; d <= 4; d++ {
		for _, h := range []int{0, 6, 12, 18} {
			fourADay = append(fourADay, autoAt(fmt.Sprintf("2026-03-%02dT%02d:00:00Z", d, h)))
		}
	}
	manual := Info{Key: "manual.zip", Modified: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	tests := []struct {
		name     string
		r        Retention
		list     []Info
		wantKeep []string
	}{
		{"all zero keeps all", Retention{}, []Info{autoAt("2026-03-01T00:00:00Z"), autoAt("2026-03-02T00:00:00Z")},
			[]string{"2026-03-02T00:00", "2026-03-01T00:00"}},
		{"last 2 is cronMaxKeep", Retention{Last: 2}, fourADay,
			[]string{"2026-03-04T18:00", "2026-03-04T12:00"}},
		{"daily 2: newest of each day", Retention{Daily: 2}, fourADay,
			[]string{"2026-03-04T18:00", "2026-03-03T18:00"}},
		{"daily 5 with 4 days: all days, and the oldest", Retention{Daily: 5}, fourADay,
			[]string{"2026-03-04T18:00", "2026-03-03T18:00", "2026-03-02T18:00", "2026-03-01T18:00", "2026-03-01T00:00"}},
		{"daily counts days that have one, not calendar days", Retention{Daily: 2},
			[]Info{autoAt("2026-03-20T10:00:00Z"), autoAt("2026-03-05T10:00:00Z"), autoAt("2026-03-01T10:00:00Z")},
			[]string{"2026-03-20T10:00", "2026-03-05T10:00"}},
		{"daily in UTC, whatever the archive's zone", Retention{Daily: 2},
			[]Info{autoAt("2026-03-02T01:00:00+02:00"), autoAt("2026-03-01T20:00:00Z"), autoAt("2026-02-28T12:00:00Z")}, // the first two on 2026-03-01 in UTC
			[]string{"2026-03-01T23:00", "2026-02-28T12:00"}},
		{"day boundary at UTC midnight", Retention{Daily: 2},
			[]Info{autoAt("2026-03-02T00:00:00Z"), autoAt("2026-03-01T23:59:59Z"), autoAt("2026-03-01T00:00:00Z")},
			[]string{"2026-03-02T00:00", "2026-03-01T23:59"}},
		// 2026 has 53 ISO weeks: Thu 2026-12-31 and Sat 2027-01-02 are in
		// 2026-W53, Mon 2027-01-04 starts 2027-W01.
		{"weekly across the year's end", Retention{Weekly: 3},
			[]Info{autoAt("2027-01-04T08:00:00Z"), autoAt("2027-01-02T08:00:00Z"), autoAt("2026-12-31T08:00:00Z"), autoAt("2026-12-28T08:00:00Z"), autoAt("2026-12-20T08:00:00Z")},
			[]string{"2027-01-04T08:00", "2027-01-02T08:00", "2026-12-20T08:00"}},
		{"weekly: Sunday ends the ISO week", Retention{Weekly: 2},
			[]Info{autoAt("2026-03-09T00:00:00Z"), autoAt("2026-03-08T23:59:00Z"), autoAt("2026-03-02T00:00:00Z")}, // Mon, Sun, Mon
			[]string{"2026-03-09T00:00", "2026-03-08T23:59"}},
		{"monthly: month boundary and gap", Retention{Monthly: 3},
			[]Info{autoAt("2026-05-01T00:00:00Z"), autoAt("2026-04-30T23:59:00Z"), autoAt("2026-04-01T00:00:00Z"), autoAt("2026-01-15T00:00:00Z"), autoAt("2025-12-31T00:00:00Z")},
			[]string{"2026-05-01T00:00", "2026-04-30T23:59", "2026-01-15T00:00"}},
		{"union of the policies", Retention{Last: 1, Daily: 2, Weekly: 2, Monthly: 2},
			[]Info{autoAt("2026-03-10T12:00:00Z"), autoAt("2026-03-10T06:00:00Z"), autoAt("2026-03-09T06:00:00Z"), autoAt("2026-03-04T06:00:00Z"),
				autoAt("2026-03-03T06:00:00Z"), autoAt("2026-02-20T06:00:00Z"), autoAt("2026-02-10T06:00:00Z"), autoAt("2026-01-10T06:00:00Z")},
			// last: 03-10 12h; daily: 03-10 12h, 03-09; weekly (W11, W10): 03-10 12h, 03-04;
			// monthly: 03-10 12h, 02-20.
			[]string{"2026-03-10T12:00", "2026-03-09T06:00", "2026-03-04T06:00", "2026-02-20T06:00"}},
		{"manual archives are never counted", Retention{Last: 1}, []Info{manual, autoAt("2026-03-01T00:00:00Z"), autoAt("2026-03-02T00:00:00Z")},
			[]string{"2026-03-02T00:00"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The result does not depend on the order of the list.
			for range 3 {
				list := slices.Clone(tt.list)
				rand.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
				drop, keep := tt.r.Prune(list)
				if got := stamps(keep); !slices.Equal(got, tt.wantKeep) {
					t.Fatalf("%+v.Prune: kept %v, want %v", tt.r, got, tt.wantKeep)
				}
				for _, i := range append(drop, keep...) {
					if !IsAuto(i.Key) {
						t.Fatalf("%+v.Prune: %s is in a list", tt.r, i.Key)
					}
				}
				if len(drop)+len(keep) != len(slices.DeleteFunc(list, func(i Info) bool { return !IsAuto(i.Key) })) {
					t.Fatalf("%+v.Prune: %d dropped + %d kept, not every automatic archive", tt.r, len(drop), len(keep))
				}
			}
		})
	}
}

// TestRetentionTies: equal times are ordered by key, the greater newer,
// as the pruning of cronMaxKeep always did.
func TestRetentionTies(t *testing.T) {
	mt := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	list := []Info{{Key: "@auto_a.zip", Modified: mt}, {Key: "@auto_c.zip", Modified: mt}, {Key: "@auto_b.zip", Modified: mt}}
	drop, keep := Retention{Last: 2}.Prune(list)
	if len(keep) != 2 || keep[0].Key != "@auto_c.zip" || keep[1].Key != "@auto_b.zip" || len(drop) != 1 || drop[0].Key != "@auto_a.zip" {
		t.Fatalf("Prune = drop %v, keep %v; want drop @auto_a, keep @auto_c, @auto_b", drop, keep)
	}
}

// BenchmarkRetentionPrune: a year of hourly archives (8760), keeping 24
// last, 7 daily, 5 weekly and 12 monthly.
func BenchmarkRetentionPrune(b *testing.B) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	list := make([]Info, 8760)
	for i := range list {
		list[i] = Info{Key: fmt.Sprintf("@auto_sb_backup_%d.zip", i), Modified: base.Add(time.Duration(i) * time.Hour)}
	}
	r := Retention{Last: 24, Daily: 7, Weekly: 5, Monthly: 12}
	for b.Loop() {
		r.Prune(list)
	}
}
