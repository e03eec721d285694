package otlp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"
)

// benchRecords are request logs as the server maps them.
func benchRecords(n int) []Record {
	out := make([]Record, n)
	for i := range out {
		out[i] = Record{Time: time.Unix(1_700_000_000, int64(i)), Level: 0, Body: fmt.Sprintf("GET /api/collections/posts/records/%d", i),
			Attrs: []KeyValue{
				{"log.record.uid", "0000000001abcde"}, {"http.request.method", "GET"},
				{"url.path", fmt.Sprintf("/api/collections/posts/records/%d", i)}, {"http.response.status_code", int64(200)},
				{"client.address", "10.1.2.3"}, {"user_agent.original", "Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0"},
				{"strongbox.exec_time", 0.42}, {"strongbox.auth_collection", "users"}, {"strongbox.type", "request"},
			}}
	}
	return out
}

// BenchmarkEncode: a batch of 1000 request logs, protobuf and JSON, gzipped
// as sent.
func BenchmarkEncode(b *testing.B) {
	recs := benchRecords(DefaultBatch)
	res := Resource{Attrs: []KeyValue{{"service.name", "shop"}}, ScopeName: "strongbox"}
	for _, proto := range []string{ProtoProtobuf, ProtoJSON} {
		b.Run(proto, func(b *testing.B) {
			e := New(Options{Config: Config{Protocol: proto}, Resource: func() Resource { return res }})
			for b.Loop() {
				e.encode(recs)
			}
			b.ReportMetric(float64(b.N*len(recs))/b.Elapsed().Seconds(), "logs/s")
		})
	}
}

// BenchmarkExport: the exporter drains a backlog to a receiver on loopback
// that reads and discards each body.
func BenchmarkExport(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer srv.Close()
	recs := benchRecords(DefaultBatch)
	src := func(after int64, n int) (Batch, error) {
		return Batch{Records: recs, Last: after + int64(len(recs)), Newest: 1 << 40, Key: 1}, nil
	}
	e := New(Options{Config: Config{Endpoint: srv.URL, Protocol: ProtoProtobuf, Timeout: 10 * time.Second}, Source: src,
		CursorPath: filepath.Join(b.TempDir(), "c")})
	cur := Cursor{Key: 1}
	for b.Loop() {
		cur, _ = e.step(context.Background(), cur)
	}
	b.ReportMetric(float64(b.N*len(recs))/b.Elapsed().Seconds(), "logs/s")
}
