package journal

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestReadFrames reads frames of every size (empty, small, past spanAhead,
// runs past MaxSpan) in ascending, descending, repeated and sparse orders
// and checks each payload against ReadAt's; an offset that is not a frame,
// or a frame with a flipped bit, is an error, as with ReadAt.
func TestReadFrames(t *testing.T) {
	var recs []string
	for i := range 200 {
		n := []int{0, 1, 220, 5000, 70_000}[i%5]
		recs = append(recs, strings.Repeat(string(rune('a'+i%26)), n))
	}
	path, offs := writeJournal(t, recs...)
	f, err := Open(path, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rev := slices.Clone(offs)
	slices.Reverse(rev)
	orders := map[string][]int64{
		"ascending":  offs,
		"descending": rev,
		"repeated":   {offs[3], offs[3], offs[2], offs[2], offs[9]},
		"sparse":     {offs[0], offs[50], offs[51], offs[199]},
		"last":       {offs[199]},
		"none":       nil,
	}
	for name, order := range orders {
		var got []string
		_, err := f.ReadFrames(nil, order, func(i int, p []byte) error {
			if want, err := f.ReadAt(order[i]); err != nil || string(want) != string(p) {
				t.Errorf("%s: frame %d at %d: %d bytes, ReadAt %d (%v)", name, i, order[i], len(p), len(want), err)
			}
			got = append(got, string(p))
			return nil
		})
		if err != nil || len(got) != len(order) {
			t.Errorf("%s: %d frames read of %d, %v", name, len(got), len(order), err)
		}
	}
	bad := [][]int64{{offs[1] + 1}, {offs[0], offs[1] + 3}, {0}, {f.Size()}, {f.Size() + 100}}
	for _, order := range bad {
		if _, err := f.ReadFrames(nil, order, func(int, []byte) error { return nil }); err == nil {
			t.Errorf("ReadFrames(%v) read a frame that is not there", order)
		}
	}
	f.Close()

	// A flipped bit in a payload: a checksum error.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[offs[2]+FrameOverhead+5] ^= 1
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err = Open(path, Options{}, nil) // lenient: the damaged frame is skipped, the file kept
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.ReadFrames(nil, offs[:4], func(int, []byte) error { return nil }); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("ReadFrames over a damaged frame: %v, want a checksum error", err)
	}
}
