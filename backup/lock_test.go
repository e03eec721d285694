package backup

import (
	"sync"
	"testing"
)

func TestLock(t *testing.T) {
	var l Lock
	if _, _, ok := l.Held(); ok {
		t.Fatal("zero Lock is held")
	}
	release, ok := l.TryLock(KindCreate, "a.zip")
	if !ok {
		t.Fatal("TryLock on a free lock failed")
	}
	if _, ok := l.TryLock(KindRestore, "b.zip"); ok {
		t.Error("second TryLock succeeded while held")
	}
	tests := []struct {
		name string
		key  string
		want bool
	}{
		{"locked key", "a.zip", true},
		{"other key", "b.zip", false},
		{"empty key", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := l.Busy(tt.key); got != tt.want {
				t.Errorf("Busy(%q) = %v, want %v", tt.key, got, tt.want)
			}
		})
	}
	if kind, key, ok := l.Held(); !ok || kind != KindCreate || key != "a.zip" {
		t.Errorf("Held() = %v, %q, %v, want create, a.zip, true", kind, key, ok)
	}
	release()
	if l.Busy("a.zip") {
		t.Error("Busy after release")
	}
	r2, ok := l.TryLock(KindCreate, "")
	if !ok {
		t.Fatal("TryLock after release failed")
	}
	release() // a second call of the old release must not free the new holder
	if _, _, ok := l.Held(); !ok {
		t.Error("stale release freed the lock")
	}
	if l.Busy("") {
		t.Error(`Busy("") during an auto-named create`)
	}
	r2()
}

func TestLockOneWinner(t *testing.T) {
	var l Lock
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for range 16 {
		wg.Go(func() {
			if _, ok := l.TryLock(KindCreate, "x.zip"); ok {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if wins != 1 {
		t.Errorf("%d TryLock calls won, want 1", wins)
	}
}
