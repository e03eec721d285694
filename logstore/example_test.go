package logstore_test

import (
	"encoding/json"
	"fmt"
	"log"
	"os"
	"time"

	"strongbox/logstore"
)

// fixedClock makes the examples' output stable.
func fixedClock() time.Time { return time.Date(2026, 11, 22, 9, 40, 31, 376e6, time.UTC) }

func Example() {
	dir, _ := os.MkdirTemp("", "logs")
	defer os.RemoveAll(dir)

	s, err := logstore.Open(dir, logstore.Options{MaxDays: 5, Now: fixedClock})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	// The HTTP layer adds one entry per request; Add never waits for the disk.
	for _, r := range []struct {
		method, url string
		status      int
	}{{"GET", "/api/health", 200}, {"GET", "/api/backups", 401}, {"DELETE", "/api/backups/a.zip", 204}} {
		e := logstore.Entry{Message: r.method + " " + r.url, Request: &logstore.Request{
			Method: r.method, URL: r.url, Status: r.status, RemoteIP: "127.0.0.1", UserIP: "127.0.0.1"}}
		if r.status >= 400 {
			e.Level, e.Request.Error = 8, "The request requires valid record authorization token."
		}
		s.Add(e)
	}
	if err := s.Flush(); err != nil { // durable and listable
		log.Fatal(err)
	}

	page, err := s.List(logstore.Query{Filter: "data.status >= 400 || data.method = 'DELETE'", Sort: "-data.status"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(page.TotalItems, "matching")
	for _, e := range page.Items {
		fmt.Println(e.Level, e.Message)
	}
	// Output:
	// 2 matching
	// 8 GET /api/backups
	// 0 DELETE /api/backups/a.zip
}

func ExampleStore_Stats() {
	dir, _ := os.MkdirTemp("", "logs")
	defer os.RemoveAll(dir)
	s, err := logstore.Open(dir, logstore.Options{MaxDays: 5, Now: fixedClock})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	for i := range 5 {
		s.Add(logstore.Entry{Created: fixedClock().Add(time.Duration(i) * 25 * time.Minute), Message: "tick"})
	}
	s.Flush()

	stats, err := s.Stats("rowid > 1")
	if err != nil {
		log.Fatal(err)
	}
	out, _ := json.Marshal(stats)
	fmt.Println(string(out))
	// Output:
	// [{"date":"2026-11-22 10:00:00.000Z","total":3},{"date":"2026-11-22 11:00:00.000Z","total":1}]
}

func ExampleEntry_MarshalJSON() {
	e := logstore.Entry{
		ID:      "0fw9f95em5p46kn",
		Created: fixedClock(),
		Message: "GET /api/health",
		Request: &logstore.Request{ExecTime: 0.140419, Method: "GET", RemoteIP: "127.0.0.1", Status: 200,
			URL: "/api/health", UserAgent: "curl/7.88.1", UserIP: "127.0.0.1"},
	}
	out, _ := json.Marshal(e)
	fmt.Println(string(out))
	// Output:
	// {"id":"0fw9f95em5p46kn","created":"2026-11-22 09:40:31.376Z","data":{"auth":"","execTime":0.140419,"method":"GET","referer":"","remoteIP":"127.0.0.1","status":200,"type":"request","url":"/api/health","userAgent":"curl/7.88.1","userIP":"127.0.0.1"},"message":"GET /api/health","level":0}
}

func ExampleStore_Get() {
	dir, _ := os.MkdirTemp("", "logs")
	defer os.RemoveAll(dir)
	s, err := logstore.Open(dir, logstore.Options{MaxDays: 5, Now: fixedClock})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	s.Add(logstore.Entry{Level: 8, Message: "Failed to restore backup", Attrs: map[string]any{"key": "a.zip"}})
	s.Flush()

	page, _ := s.List(logstore.Query{})
	e, err := s.Get(page.Items[0].ID)
	fmt.Println(len(e.ID), e.Message, e.Attrs["key"], err)
	_, err = s.Get("doesnotexist123")
	fmt.Println(err)
	// Output:
	// 15 Failed to restore backup a.zip <nil>
	// logstore: entry not found
}

func ExampleSeed() {
	dir, _ := os.MkdirTemp("", "logs")
	defer os.RemoveAll(dir)
	if err := logstore.Seed(dir, 1000, logstore.Options{Now: fixedClock}); err != nil {
		log.Fatal(err)
	}
	s, err := logstore.Open(dir, logstore.Options{MaxDays: 5, Now: fixedClock})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	fmt.Println(s.Len(), "entries")
	// Output:
	// 1000 entries
}
