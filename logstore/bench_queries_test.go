package logstore

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// The query table of issue 21 over a seeded store, the queries timed as
// the server runs them (List or Stats, then the JSON of the answer):
//
//	go test -run '^$' -bench ListQueries -benchtime 21x ./logstore
//	STRONGBOX_BENCH_LOGS=10000000 go test -run '^$' -bench ListQueries -benchtime 21x -timeout 30m ./logstore
//
// The store of STRONGBOX_BENCH_LOGS request logs (1,000,000 by default) is
// seeded once into os.TempDir()/strongbox-logstore-bench-N and kept for the
// next run (reseeded when retention has dropped some of it; delete the
// directory to reclaim its disk, about 220 bytes a log). Each query
// reports its median time as p50-ms besides the mean of ns/op, the time of
// its first run as first-ms (before the store kept its filter's memo and
// counts per chunk: a new filter), and the process's CPU time per query as
// cpu-ms (on all cores: a machine shared with other work inflates it less
// than the elapsed times).

var benchQueries = []struct {
	name  string
	q     Query
	stats bool
}{
	{name: "SortCreated", q: Query{Sort: "-created", PerPage: 50}},
	{name: "Status400", q: Query{Filter: "(data.status>=400)", Sort: "-created", PerPage: 50}},
	{name: "Stats", stats: true},
	{name: "MessageLike", q: Query{Filter: `message~"bac"`, PerPage: 50}},
	{name: "URLStatusPage100", q: Query{Filter: `(data.url~"health" && data.status=200)`, Page: 100, PerPage: 50}},
	{name: "Page2000", q: Query{Page: 2000, PerPage: 1}},
}

var (
	queryStoreOnce sync.Once
	queryStore     *Store
	queryStoreErr  error
)

// benchLogs returns the size of the store of BenchmarkListQueries.
func benchLogs(tb testing.TB) int {
	n := million
	if v := os.Getenv("STRONGBOX_BENCH_LOGS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			tb.Fatalf("STRONGBOX_BENCH_LOGS=%q is not a positive count", v)
		}
	}
	return n
}

// openBenchStore opens the cached seeded store of n logs, seeding it first
// when it is missing or incomplete.
func openBenchStore(n int) (*Store, error) {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("strongbox-logstore-bench-%d", n))
	opts := Options{MaxDays: 5, MaxBytes: 1 << 40}
	if s, err := Open(dir, opts); err == nil && s.Len() == n {
		return s, nil
	} else if err == nil {
		s.Close()
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := Seed(dir, n, opts); err != nil {
		return nil, err
	}
	return Open(dir, opts)
}

func BenchmarkListQueries(b *testing.B) {
	if testing.Short() {
		b.Skip("seeds a large store")
	}
	n := benchLogs(b)
	queryStoreOnce.Do(func() {
		start := time.Now()
		queryStore, queryStoreErr = openBenchStore(n)
		if queryStoreErr == nil {
			b.Logf("opened %d logs in %s", queryStore.Len(), time.Since(start).Round(time.Millisecond))
		}
	})
	if queryStoreErr != nil {
		b.Fatal(queryStoreErr)
	}
	s := queryStore
	for _, bq := range benchQueries {
		b.Run(bq.name, func(b *testing.B) {
			var times []time.Duration
			cpu := processCPU()
			for b.Loop() {
				t0 := time.Now()
				var v any
				var err error
				if bq.stats {
					v, err = s.Stats("")
				} else {
					v, err = s.List(bq.q)
				}
				if err == nil {
					_, err = json.Marshal(v)
				}
				if err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(t0))
			}
			cpu = processCPU() - cpu
			b.ReportMetric(float64(times[0].Nanoseconds())/1e6, "first-ms")
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Nanoseconds())/1e6, "p50-ms")
			b.ReportMetric(float64(cpu.Nanoseconds())/1e6/float64(len(times)), "cpu-ms")
		})
	}
}
