package cron

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Scheduler runs one job on a Schedule, checked at each minute boundary in
// UTC, as PocketBase's cron ticker does for its auto-backup job.
//
// Logger and Wait may be set before Start; the other methods are safe to call
// from any goroutine at any time.
type Scheduler struct {
	// Logger receives a warning when a due minute is skipped because the
	// previous run is still going, and an error when the job panics. Nil
	// discards.
	Logger *slog.Logger

	// Wait sleeps for d, reporting false if ctx ends first. Nil uses a real
	// timer; tests substitute one that advances their clock instead.
	Wait func(ctx context.Context, d time.Duration) bool

	now func() time.Time

	mu      sync.Mutex
	sched   *Schedule
	job     func(time.Time)
	last    time.Time // the last minute that was due (run or skipped)
	running bool
	stop    context.CancelFunc
	done    chan struct{}
	runs    sync.WaitGroup
}

// New returns a stopped Scheduler with no schedule that reads the time from
// now (time.Now if nil).
func New(now func() time.Time) *Scheduler {
	if now == nil {
		now = time.Now
	}
	return &Scheduler{now: now}
}

// Set replaces the schedule and the job; an empty expr turns the scheduler
// off. It may be called at any time, before or after Start, as settings are
// reloaded. On a parse error nothing changes and the *SyntaxError is
// returned. A run already going finishes undisturbed, and a minute that was
// already due does not come due again under the new schedule.
func (s *Scheduler) Set(expr string, job func(time.Time)) error {
	var sched *Schedule
	if expr != "" {
		var err error
		if sched, err = Parse(expr); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sched, s.job = sched, job
	return nil
}

// Start starts the loop that runs the job; it returns at once. The loop ends
// when ctx ends or Stop is called; either way, Stop is what waits for the
// loop and for a running job to finish. Calling Start on a started Scheduler
// does nothing.
func (s *Scheduler) Start(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop != nil {
		return
	}
	ctx, s.stop = context.WithCancel(ctx)
	s.done = make(chan struct{})
	go s.loop(ctx, s.done)
}

// Stop ends the loop and waits for it and for a job that is running, so it
// must not be called from the job. A Scheduler that has been stopped may be
// started again.
func (s *Scheduler) Stop() {
	s.mu.Lock()
	stop, done := s.stop, s.done
	s.stop, s.done = nil, nil
	s.mu.Unlock()
	if stop == nil {
		return
	}
	stop()
	<-done
}

func (s *Scheduler) loop(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	defer s.runs.Wait()
	wait := s.Wait
	if wait == nil {
		wait = sleep
	}
	for {
		// Sleep until the next minute boundary. The time is read afresh each
		// round, so a late wake-up or a clock step costs at most one minute
		// and never shifts the ticks off the boundary.
		now := s.now().UTC()
		if !wait(ctx, now.Truncate(time.Minute).Add(time.Minute).Sub(now)) {
			return
		}
		s.tick(s.now().UTC().Truncate(time.Minute))
	}
}

// tick runs the job for minute t if t is due.
func (s *Scheduler) tick(t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// !t.After(s.last): a wake-up a hair early, or a clock set back, gives a
	// minute that was already due; it does not run again.
	if s.sched == nil || s.job == nil || !t.After(s.last) || !s.sched.Matches(t) {
		return
	}
	s.last = t
	if s.running {
		s.logger().Warn("cron: previous run still going, skipping this one",
			"minute", t.Format(time.RFC3339), "schedule", s.sched.String())
		return
	}
	s.running = true
	s.runs.Add(1)
	go s.run(s.job, t)
}

func (s *Scheduler) run(job func(time.Time), t time.Time) {
	defer s.runs.Done()
	defer func() {
		s.mu.Lock()
		s.running = false
		s.mu.Unlock()
	}()
	// A panic in the job must not take the server down with it (house
	// style: panics never cross a package boundary); it is logged instead.
	defer func() {
		if r := recover(); r != nil {
			s.logger().Error("cron: job panicked", "minute", t.Format(time.RFC3339), "panic", fmt.Sprint(r))
		}
	}()
	job(t)
}

func (s *Scheduler) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

// sleep is the real Wait.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
