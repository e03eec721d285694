package sqlite

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// TestDamaged truncates a fixture at every page boundary and damages a
// byte of each page header and cell area: every outcome is rows or
// ErrCorrupt, never a panic or a hang.
func TestDamaged(t *testing.T) {
	seed := seedFiles(t)["seed-tree.db"]
	const pageSize = 512
	for n := 0; n < len(seed); n += pageSize {
		openBytes(t, seed[:n], nil)
		openBytes(t, seed[:n+pageSize/2], nil)
	}
	for page := 0; page < len(seed)/pageSize; page++ {
		for _, at := range []int{0, 3, 4, 5, 8, 9, 10, 11, 12, 13, 200, 511} {
			b := bytes.Clone(seed)
			off := page*pageSize + at
			if page == 0 {
				off += 100
			}
			if off >= len(b) {
				continue
			}
			b[off] ^= 0xff
			openBytes(t, b, nil)
		}
	}
}

// TestCycle points the right-most child of the root page of table t at
// the root itself.
func TestCycle(t *testing.T) {
	seed := bytes.Clone(seedFiles(t)["seed-tree.db"])
	db, err := OpenReaderAt(bytes.NewReader(seed), int64(len(seed)), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := db.Table("t")
	if err != nil {
		t.Fatal(err)
	}
	root := int(tb.RootPage-1) * 512
	if seed[root] != pageTableInterior {
		t.Fatalf("the root of t is page type 0x%02x, want an interior page", seed[root])
	}
	binary.BigEndian.PutUint32(seed[root+8:], tb.RootPage)
	db, err = OpenReaderAt(bytes.NewReader(seed), int64(len(seed)), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.Rows("t")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	if err := rows.Err(); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("Err() = %v, want ErrCorrupt naming a cycle", err)
	}
}
