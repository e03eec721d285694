package backup

import (
	"errors"
	"testing"
	"time"
)

func TestStats(t *testing.T) {
	var s Stats
	if got := s.Snapshot(); got != (StatsSnapshot{}) {
		t.Fatalf("zero Stats: Snapshot() = %+v", got)
	}
	t0 := time.Date(2025, 5, 1, 3, 0, 0, 0, time.UTC)
	s.Record(t0, t0.Add(2*time.Second), Info{Key: "a.zip", Size: 1234}, nil)
	s.Record(t0.Add(time.Hour), t0.Add(time.Hour+time.Second), Info{}, errors.New("disk full"))
	want := StatsSnapshot{Succeeded: 1, Failed: 1, LastSuccess: t0.Add(2 * time.Second), LastDuration: 2 * time.Second, LastSize: 1234}
	if got := s.Snapshot(); got != want {
		t.Errorf("Snapshot() = %+v, want %+v", got, want)
	}
}
