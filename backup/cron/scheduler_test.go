package cron

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeClock is the Scheduler's clock and its Wait: each Wait hands its
// duration to the test, which moves the clock on and lets the Wait return.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	waits chan fakeWait

	pending *fakeWait  // a Wait received by step and not yet released (test goroutine only)
	sched   *Scheduler // whose runs step waits for; nil: none
}

type fakeWait struct {
	d    time.Duration
	done chan struct{}
}

func newFakeClock(start time.Time) *fakeClock {
	return &fakeClock{now: start, waits: make(chan fakeWait)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Wait(ctx context.Context, d time.Duration) bool {
	w := fakeWait{d, make(chan struct{})}
	select {
	case c.waits <- w:
	case <-ctx.Done():
		return false
	}
	select {
	case <-w.done:
		return true
	case <-ctx.Done():
		return false
	}
}

// step lets the scheduler's pending Wait return after moving the clock on
// by the duration asked for (plus skew, to model a late or early wake-up),
// then waits for the scheduler's next Wait, so that the tick in between is
// over, and for a run the tick started to finish. It returns the time after
// the step.
func (c *fakeClock) step(t *testing.T, skew time.Duration) time.Time {
	t.Helper()
	now := c.stepBusy(t, skew)
	c.idle(t)
	return now
}

// idle waits until no run is going. The scheduler is parked in a Wait
// the test has not released, so no run can start meanwhile.
func (c *fakeClock) idle(t *testing.T) {
	t.Helper()
	if c.sched == nil {
		return
	}
	done := make(chan struct{})
	go func() {
		c.sched.runs.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the job did not finish")
	}
}

// stepBusy is step without waiting for the run to finish.
func (c *fakeClock) stepBusy(t *testing.T, skew time.Duration) time.Time {
	t.Helper()
	w := c.nextWait(t)
	c.mu.Lock()
	c.now = c.now.Add(w.d + skew)
	now := c.now
	c.mu.Unlock()
	close(w.done)
	c.pending = ptr(c.nextWait(t))
	return now
}

func (c *fakeClock) nextWait(t *testing.T) fakeWait {
	t.Helper()
	if w := c.pending; w != nil {
		c.pending = nil
		return *w
	}
	select {
	case w := <-c.waits:
		return w
	case <-time.After(5 * time.Second):
		t.Fatal("the scheduler did not wait")
		return fakeWait{}
	}
}

func ptr[T any](v T) *T { return &v }

// recorder is a job that notes the minutes it ran for.
type recorder struct {
	mu   sync.Mutex
	runs []time.Time
}

func (r *recorder) job(t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs = append(r.runs, t)
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []string{}
	for _, t := range r.runs {
		out = append(out, t.Format("2006-01-02 15:04"))
	}
	return out
}

func startScheduler(t *testing.T, start time.Time) (*Scheduler, *fakeClock) {
	t.Helper()
	clk := newFakeClock(start)
	s := New(clk.Now)
	s.Wait = clk.Wait
	clk.sched = s
	s.Start(t.Context())
	t.Cleanup(s.Stop)
	return s, clk
}

func TestSchedulerRunsOncePerMatchingMinute(t *testing.T) {
	// Start mid-minute: the first wake-up is at the next boundary.
	s, clk := startScheduler(t, utc("2026-11-23 23:58").Add(20*time.Second))
	var rec recorder
	if err := s.Set("*/2 * * * *", rec.job); err != nil {
		t.Fatal(err)
	}
	if got := clk.step(t, 0); !got.Equal(utc("2026-11-23 23:59")) {
		t.Fatalf("first wake-up at %v, want the minute boundary", got)
	}
	for range 4 { // 00:00 .. 00:03
		clk.step(t, 0)
	}
	s.Stop()
	want := []string{"2026-11-24 00:00", "2026-11-24 00:02"}
	if diff := cmp.Diff(want, rec.got()); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
}

func TestSchedulerLateAndEarlyWakeUps(t *testing.T) {
	s, clk := startScheduler(t, utc("2026-11-23 10:00"))
	var rec recorder
	if err := s.Set("* * * * *", rec.job); err != nil {
		t.Fatal(err)
	}
	clk.step(t, 30*time.Second) // 10:01:30, late: runs for 10:01
	clk.step(t, 0)              // 10:02
	clk.step(t, -time.Second)   // 10:02:59, early: 10:02 again, not run
	clk.step(t, 0)              // 10:03
	s.Stop()
	want := []string{"2026-11-23 10:01", "2026-11-23 10:02", "2026-11-23 10:03"}
	if diff := cmp.Diff(want, rec.got()); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
}

func TestSchedulerSet(t *testing.T) {
	s, clk := startScheduler(t, utc("2026-11-23 10:00"))
	var a, b recorder
	if err := s.Set("@hourly", a.job); err != nil {
		t.Fatal(err)
	}
	for range 60 { // to 11:00
		clk.step(t, 0)
	}
	if err := s.Set("*/30 * * * *", b.job); err != nil {
		t.Fatal(err)
	}
	for range 30 { // to 11:30
		clk.step(t, 0)
	}
	if err := s.Set("", nil); err != nil {
		t.Fatal(err)
	}
	for range 90 { // to 13:00: off
		clk.step(t, 0)
	}
	if err := s.Set("not cron", a.job); err == nil {
		t.Errorf("Set(%q) = nil, want an error", "not cron")
	}
	for range 60 { // to 14:00: still off, the bad expression changed nothing
		clk.step(t, 0)
	}
	if err := s.Set("0 14 * * *", b.job); err != nil {
		t.Fatal(err)
	}
	// 14:00 went by while the scheduler was off: it is not made up for.
	clk.step(t, 0)
	s.Stop()
	if diff := cmp.Diff([]string{"2026-11-23 11:00"}, a.got()); diff != "" {
		t.Errorf("runs of the first job (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"2026-11-23 11:30"}, b.got()); diff != "" {
		t.Errorf("runs of the second job (-want +got):\n%s", diff)
	}
}

func TestSchedulerSetDuringDueMinute(t *testing.T) {
	// A reload right after a run must not run the new job for the same
	// minute.
	s, clk := startScheduler(t, utc("2026-11-23 10:59"))
	var a, b recorder
	if err := s.Set("0 * * * *", a.job); err != nil {
		t.Fatal(err)
	}
	clk.step(t, 0) // 11:00: a runs
	if err := s.Set("* * * * *", b.job); err != nil {
		t.Fatal(err)
	}
	clk.step(t, -time.Second) // 11:00:59, an early wake-up inside 11:00
	clk.step(t, 0)            // 11:01: b runs
	s.Stop()
	if diff := cmp.Diff([]string{"2026-11-23 11:00"}, a.got()); diff != "" {
		t.Errorf("runs of the first job (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"2026-11-23 11:01"}, b.got()); diff != "" {
		t.Errorf("runs of the second job (-want +got):\n%s", diff)
	}
}

func TestSchedulerNoOverlap(t *testing.T) {
	clk := newFakeClock(utc("2026-11-23 10:00"))
	var logs bytes.Buffer
	s := New(clk.Now)
	s.Wait = clk.Wait
	clk.sched = s
	s.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	s.Start(t.Context())
	t.Cleanup(s.Stop)

	release := make(chan struct{})
	started := make(chan time.Time, 10)
	var rec recorder
	if err := s.Set("* * * * *", func(t time.Time) {
		started <- t
		rec.job(t)
		<-release
	}); err != nil {
		t.Fatal(err)
	}
	clk.stepBusy(t, 0) // 10:01: runs and blocks
	<-started
	clk.stepBusy(t, 0) // 10:02: skipped
	clk.stepBusy(t, 0) // 10:03: skipped
	close(release)
	clk.idle(t)
	clk.step(t, 0) // 10:04: runs
	s.Stop()
	want := []string{"2026-11-23 10:01", "2026-11-23 10:04"}
	if diff := cmp.Diff(want, rec.got()); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if n := strings.Count(logs.String(), "previous run still going"); n != 2 {
		t.Errorf("logged %d skips, want 2; log:\n%s", n, logs.String())
	}
}

func TestSchedulerStopWaitsForJob(t *testing.T) {
	s, clk := startScheduler(t, utc("2026-11-23 10:00"))
	release := make(chan struct{})
	started := make(chan struct{})
	finished := false
	if err := s.Set("* * * * *", func(time.Time) {
		close(started)
		<-release
		finished = true
	}); err != nil {
		t.Fatal(err)
	}
	clk.stepBusy(t, 0)
	<-started
	stopped := make(chan struct{})
	go func() {
		s.Stop()
		close(stopped)
	}()
	select {
	case <-stopped:
		t.Fatal("Stop returned while the job was running")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Stop did not return after the job finished")
	}
	if !finished {
		t.Error("Stop returned before the job finished")
	}
}

func TestSchedulerContextCancel(t *testing.T) {
	clk := newFakeClock(utc("2026-11-23 10:00"))
	s := New(clk.Now)
	s.Wait = clk.Wait
	clk.sched = s
	ctx, cancel := context.WithCancel(t.Context())
	s.Start(ctx)
	var rec recorder
	if err := s.Set("* * * * *", rec.job); err != nil {
		t.Fatal(err)
	}
	clk.step(t, 0)
	cancel()
	s.Stop() // returns once the loop has seen the cancel
	s.Stop() // and a second Stop is harmless
	if diff := cmp.Diff([]string{"2026-11-23 10:01"}, rec.got()); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
}

func TestSchedulerJobPanic(t *testing.T) {
	clk := newFakeClock(utc("2026-11-23 10:00"))
	var logs bytes.Buffer
	s := New(clk.Now)
	s.Wait = clk.Wait
	clk.sched = s
	s.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	s.Start(t.Context())
	t.Cleanup(s.Stop)
	var rec recorder
	if err := s.Set("* * * * *", func(at time.Time) {
		rec.job(at)
		if at.Minute() == 1 {
			panic("boom")
		}
	}); err != nil {
		t.Fatal(err)
	}
	clk.step(t, 0) // 10:01 panics
	clk.step(t, 0) // 10:02 still runs
	s.Stop()
	if diff := cmp.Diff([]string{"2026-11-23 10:01", "2026-11-23 10:02"}, rec.got()); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if !strings.Contains(logs.String(), "boom") {
		t.Errorf("the panic was not logged; log:\n%s", logs.String())
	}
}

func TestSchedulerRealClock(t *testing.T) {
	// The real Wait: a short sleep ends, a cancelled one does not.
	if !sleep(t.Context(), time.Millisecond) {
		t.Error("sleep(1ms) = false, want true")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if sleep(ctx, time.Hour) {
		t.Error("sleep on a cancelled context = true, want false")
	}
	// New(nil) uses time.Now; Start and Stop with no schedule run nothing.
	s := New(nil)
	s.Start(t.Context())
	s.Stop()
}
