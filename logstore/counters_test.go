package logstore

import (
	"testing"
	"time"
)

func TestCounters(t *testing.T) {
	t.Parallel()
	c := newClock()
	s := mustOpen(t, t.TempDir(), testOptions(c, &logRecorder{}))
	if got := s.Counters(); got.Entries != 0 || got.Retained != 0 || got.Dropped != 0 || got.Pending != 0 {
		t.Fatalf("new store: Counters() = %+v, want zeros but Bytes", got)
	}
	for range 3 {
		s.Add(Entry{Message: "GET /x", Request: &Request{Method: "GET", Status: 200}})
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	got := s.Counters()
	if got.Entries != 3 || got.Bytes <= 0 || got.Pending != 0 {
		t.Fatalf("after 3 entries: Counters() = %+v, want 3 entries, some bytes, none pending", got)
	}
	bytes := got.Bytes
	// Past maxDays, retention deletes them: counted, and gone from the sizes.
	c.Add(6 * 24 * time.Hour)
	if err := s.SetRetention(5, 0); err != nil {
		t.Fatal(err)
	}
	got = s.Counters()
	if got.Entries != 0 || got.Retained != 3 || got.RetainedBytes < bytes-int64(1<<12) || got.RetainedBytes == 0 {
		t.Errorf("after retention: Counters() = %+v, want 0 entries, 3 retained of about %d bytes", got, bytes)
	}
}
