package settings

import (
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"strongbox/logstore/journal"
)

// TestSubscribe: a subscriber gets the current settings at once, then
// every committed change, in order and before Update returns; a refused
// change (invalid, a failed edit, a full disk) is not notified, and after
// cancel nothing is.
func TestSubscribe(t *testing.T) {
	s, fsys, _, _ := newFaultyStore(t, nil)
	var got []int
	cancel := s.Subscribe(func(v Settings) { got = append(got, v.Logs.MaxDays) })
	var other []int
	defer s.Subscribe(func(v Settings) { other = append(other, v.Logs.MaxDays) })()
	if want := []int{5}; !slices.Equal(got, want) {
		t.Fatalf("after Subscribe, calls = %v, want %v (the current settings)", got, want)
	}

	for _, days := range []int{3, 3, 0, 7} {
		if _, err := s.Update(func(v *Settings) error { v.Logs.MaxDays = days; return nil }); err != nil {
			t.Fatal(err)
		}
		// Update returns only once every subscriber has the change.
		if last := got[len(got)-1]; last != days {
			t.Fatalf("Update(maxDays %d) returned before the subscriber saw it (last call %d)", days, last)
		}
	}
	if _, err := s.Update(func(v *Settings) error { v.Logs.MaxDays = -1; return nil }); err == nil {
		t.Fatal("an invalid update was accepted")
	}
	if _, err := s.Update(func(v *Settings) error { v.Logs.MaxDays = 1; return errors.New("no") }); err == nil {
		t.Fatal("an update whose edit failed was accepted")
	}
	fsys.SetFree(0)
	if _, err := s.Update(func(v *Settings) error { v.Logs.MaxDays = 2; return nil }); !errors.Is(err, journal.ErrStorageFull) {
		t.Fatalf("update on a full disk: %v, want journal.ErrStorageFull", err)
	}
	fsys.SetFree(-1)
	want := []int{5, 3, 3, 0, 7}
	if !slices.Equal(got, want) {
		t.Errorf("calls = %v, want %v (refused changes are not notified)", got, want)
	}
	if !slices.Equal(other, want) {
		t.Errorf("second subscriber's calls = %v, want %v", other, want)
	}

	cancel()
	cancel()
	if _, err := s.Update(func(v *Settings) error { v.Logs.MaxDays = 9; return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("calls after cancel = %v, want %v", got, want)
	}
	if last := other[len(other)-1]; last != 9 {
		t.Errorf("cancelling one subscriber stopped another: its last call %d, want 9", last)
	}
}

// TestSubscribeConcurrent: under concurrent updates, and subscribers that
// join while they run, each subscriber sees a gapless run of the committed
// changes in commit order, one call at a time, and ends on the current
// settings. Each update increments logs.maxDays, so commit order is the
// order of the values.
func TestSubscribeConcurrent(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "s"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const writers, updates, subscribers = 4, 25, 4

	type record struct {
		calls    []int
		inFlight atomic.Int32
		overlaps atomic.Int32
	}
	subscribe := func(r *record) func() {
		return s.Subscribe(func(v Settings) {
			if r.inFlight.Add(1) > 1 {
				r.overlaps.Add(1)
			}
			r.calls = append(r.calls, v.Logs.MaxDays)
			r.inFlight.Add(-1)
		})
	}
	records := make([]*record, subscribers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			for range updates {
				if _, err := s.Update(func(v *Settings) error { v.Logs.MaxDays++; return nil }); err != nil {
					t.Error(err)
				}
			}
		})
		// Subscribers join while the updates run.
		records[i] = &record{}
		defer subscribe(records[i])()
	}
	wg.Wait()

	last := s.Get().Logs.MaxDays
	if want := 5 + writers*updates; last != want {
		t.Fatalf("maxDays = %d after %d increments, want %d", last, writers*updates, want)
	}
	for i, r := range records {
		if n := r.overlaps.Load(); n > 0 {
			t.Errorf("subscriber %d was called concurrently %d times", i, n)
		}
		first := r.calls[0]
		var want []int
		for d := first; d <= last; d++ {
			want = append(want, d)
		}
		if diff := cmp.Diff(want, r.calls); diff != "" {
			t.Errorf("subscriber %d calls, from its first (-want +got):\n%s", i, diff)
		}
	}
}
