package stream

import (
	"bytes"
	"crypto/sha256"
	"io"
	"strings"
	"testing"
	"time"
)

// object encodes an object of the given entries, for the seeds.
func object(t testing.TB, kind byte, seq uint64, entries ...string) []byte {
	var buf bytes.Buffer
	w := NewWriter(&buf, Header{Kind: kind, Gen: 7, Seq: seq, Time: time.Unix(1700000000, 0), N: len(entries)})
	off := int64(0)
	for _, data := range entries {
		e := &Entry{Name: "logs/a", Op: OpAppend, Off: off, Len: int64(len(data)),
			Marks: []Mark{{End: off + int64(len(data)), Time: time.Unix(1700000000, 5)}}}
		if err := w.Entry(e, strings.NewReader(data), sha256.New()); err != nil {
			t.Fatal(err)
		}
		off += int64(len(data))
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzReader decodes arbitrary bytes as an object: it never panics nor
// allocates past its bounds, every part of the API answers on any input,
// and an object accepted whole has its trailer's sum.
func FuzzReader(f *testing.F) {
	f.Add(object(f, KindBase, 0, "hello"))               // a valid base
	f.Add(object(f, KindIncrement, 3, "ab", "cdef", "")) // a valid increment, an empty entry
	f.Add(object(f, KindBase, 0)[:20])                   // truncated header
	f.Add([]byte("SBSTRM\x00\x01"))                      // magic alone
	f.Add(append(object(f, KindBase, 0, "x"), 0))        // a byte past the trailer
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return
			}
			body, err := io.ReadAll(r)
			if err != nil {
				return
			}
			if _, err := r.Sum(); err != nil {
				return
			}
			if int64(len(body)) != e.Len {
				t.Fatalf("read %d bytes of an entry of %d", len(body), e.Len)
			}
		}
		if r.ObjectSum() == ([32]byte{}) {
			t.Fatal("accepted without a sum")
		}
	})
}
