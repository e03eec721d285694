package metrics

import (
	"bytes"
	"net/http"
	"runtime"
	rtmetrics "runtime/metrics"
	"slices"
	"sync"
	"time"
)

// ContentType is the media type of the text exposition format 0.0.4.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Path is the one path the metrics listener answers.
const Path = "/metrics"

// Registry holds the gather functions whose samples make up a scrape.
// Each is called at every scrape, in the scrape's goroutine, and reads
// what it reports then (a store's counters, a queue's depth): nothing is
// copied between scrapes. It is safe for concurrent use.
type Registry struct {
	mu      sync.Mutex
	gathers []func(*Writer)
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry { return &Registry{} }

// Register adds fn to every scrape from now on. fn must be quick (a
// scrape waits for it) and must not call Register.
func (r *Registry) Register(fn func(*Writer)) {
	r.mu.Lock()
	r.gathers = append(r.gathers, fn)
	r.mu.Unlock()
}

// Gather runs every gather function into a new Writer.
func (r *Registry) Gather() *Writer {
	r.mu.Lock()
	fns := slices.Clone(r.gathers)
	r.mu.Unlock()
	w := NewWriter()
	for _, fn := range fns {
		fn(w)
	}
	return w
}

// ServeHTTP serves a scrape at GET (or HEAD) /metrics. Other paths are
// 404 and other methods 405 with an Allow header, in plain text, as
// Prometheus exporters answer: the metrics listener is not the API.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if req.URL.Path != Path {
		http.Error(w, "404 page not found: metrics are at "+Path, http.StatusNotFound)
		return
	}
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
		return
	}
	var b bytes.Buffer
	r.Gather().WriteTo(&b)
	w.Header().Set("Content-Type", ContentType)
	w.Header().Set("Cache-Control", "no-store")
	if req.Method == http.MethodHead {
		return
	}
	w.Write(b.Bytes())
}

// Runtime returns the gather function of the Go runtime's and the
// process's basics, with the names of the Prometheus Go client:
// go_goroutines, go_memstats_heap_alloc_bytes, go_gc_duration_seconds'
// count as go_gc_cycles_total, go_info, process_start_time_seconds (start).
// It reads runtime/metrics, which stops no world, not runtime.MemStats.
func Runtime(start time.Time) func(*Writer) {
	samples := []rtmetrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/sched/gomaxprocs:threads"},
	}
	var mu sync.Mutex
	return func(w *Writer) {
		mu.Lock()
		rtmetrics.Read(samples)
		heap, gcs, total, procs := samples[0].Value.Uint64(), samples[1].Value.Uint64(), samples[2].Value.Uint64(), samples[3].Value.Uint64()
		mu.Unlock()
		w.Gauge("go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine()))
		w.Gauge("go_memstats_heap_alloc_bytes", "Number of heap bytes allocated and still in use.", float64(heap))
		w.Gauge("go_memstats_sys_bytes", "Number of bytes obtained from the system.", float64(total))
		w.Counter("go_gc_cycles_total", "Number of completed GC cycles.", float64(gcs))
		w.Gauge("go_sched_gomaxprocs_threads", "The current runtime.GOMAXPROCS setting.", float64(procs))
		w.Gauge("go_info", "Information about the Go environment.", 1, "version", runtime.Version())
		w.Gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", float64(start.UnixNano())/1e9)
	}
}
