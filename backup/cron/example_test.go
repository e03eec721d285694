package cron_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"strongbox/backup/cron"
)

func ExampleParse() {
	s, err := cron.Parse("30 2 * * 1-5")
	fmt.Println(s, err)

	// The settings validation answers validation_invalid_cron with
	// PocketBase's message for the fault.
	_, err = cron.Parse("0 0 * * 7")
	if se, ok := errors.AsType[*cron.SyntaxError](err); ok {
		fmt.Println(se.Message())
	}
	_, err = cron.Parse("every day")
	if se, ok := errors.AsType[*cron.SyntaxError](err); ok {
		fmt.Println(se.Message() == cron.InvalidMessage)
	}
	// Output:
	// 30 2 * * 1-5 <nil>
	// Invalid segment value - must be between the min and max of the segment.
	// true
}

func ExampleSchedule_Next() {
	s, _ := cron.Parse("0 0 29 2 *")
	fmt.Println(s.Next(time.Date(2026, 11, 23, 15, 7, 0, 0, time.UTC)))

	never, _ := cron.Parse("0 0 31 2 *")
	fmt.Println(never.Next(time.Date(2026, 11, 23, 15, 7, 0, 0, time.UTC)).IsZero())
	// Output:
	// 2028-02-29 00:00:00 +0000 UTC
	// true
}

func ExampleScheduler() {
	// A clock that Wait moves on instead of sleeping.
	var mu sync.Mutex
	now := time.Date(2026, 11, 23, 23, 58, 30, 0, time.UTC)
	s := cron.New(func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	})
	ctx, cancel := context.WithCancel(context.Background())
	waits := 0
	s.Wait = func(_ context.Context, d time.Duration) bool {
		mu.Lock()
		defer mu.Unlock()
		if waits++; waits > 4 { // 23:59, 00:00, 00:01, 00:02
			cancel()
			return false
		}
		now = now.Add(d)
		return true
	}

	if err := s.Set("@daily", func(t time.Time) { fmt.Println("backup for", t.Format(time.RFC3339)) }); err != nil {
		fmt.Println(err)
	}
	s.Start(ctx)
	<-ctx.Done()
	s.Stop()
	// Output: backup for 2026-11-24T00:00:00Z
}
