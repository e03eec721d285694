// Command otlpsink is an OTLP/HTTP receiver that reads each request's body
// and answers 200 with an empty ExportLogsServiceResponse, counting the
// bytes: the receiver of testdata/export-health-wrk.sh's DISCARD=1 runs, so
// that the figure measures strongbox's own cost of exporting, not a log
// engine's ingestion on the same cores. Not part of the module's packages
// (testdata is left out of ./...):
//
//	go build -o /tmp/x/otlpsink ./testdata/otlpsink
//	/tmp/x/otlpsink 127.0.0.1:19428
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: otlpsink HOST:PORT")
		os.Exit(2)
	}
	var bytes atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, io.LimitReader(r.Body, 64<<20))
		bytes.Add(n)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})
	srv := &http.Server{Addr: os.Args[1], Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
