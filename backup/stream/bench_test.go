package stream

import (
	"context"
	"strings"
	"testing"

	"strongbox/backup/backuptest"
)

// BenchmarkShipIncrement measures one step of the shipper under a
// steady log load: a capture, the diff, and an increment of 64 KiB
// appended since the step before (about what 300 ms of requests add to a
// log segment), encoded and stored in an in-memory bucket. The writes to
// the journal are not timed. MB/s counts the bytes shipped.
func BenchmarkShipIncrement(b *testing.B) {
	d := newDataDir(b)
	frame := strings.Repeat("x", 1000)
	frames := make([]string, 64)
	for i := range frames {
		frames[i] = frame
	}
	write := func() {
		for _, p := range frames {
			if _, err := d.files["logs/0001"].Append([]byte(p)); err != nil {
				b.Fatal(err)
			}
		}
		if err := d.files["logs/0001"].Sync(); err != nil {
			b.Fatal(err)
		}
	}
	d.write("logs/0001", "first")
	s := newShipper(Options{Bucket: &backuptest.Bucket{}, Capture: d.capture, MaxObjects: 1 << 30})
	ctx := context.Background()
	if err := s.step(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(frames) * len(frame)))
	for b.Loop() {
		b.StopTimer()
		write()
		b.StartTimer()
		if err := s.step(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
