package logstore

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"os"
	"testing"
	"time"
)

// fuzzSeg is the segment FuzzDecodeSidecar's sidecars describe: the first
// of a store opened with testOptions (id key 0x0707…), 1 GiB long.
var fuzzSeg = sidecarFile{size: 1 << 30, tail: 7, limit: math.MaxInt64}

// withHeader returns body behind a header that matches fuzzSeg, with its
// checksum, so that the fuzzer explores the body's decoding.
func withHeader(body []byte) []byte {
	b := make([]byte, sidecarHead, sidecarHead+len(body))
	copy(b, sidecarMagic)
	binary.LittleEndian.PutUint64(b[8:], 1)
	binary.LittleEndian.PutUint64(b[16:], 0x0707070707070707)
	binary.LittleEndian.PutUint64(b[24:], uint64(fuzzSeg.size))
	binary.LittleEndian.PutUint32(b[32:], fuzzSeg.tail)
	binary.LittleEndian.PutUint32(b[36:], crc32.Checksum(body, crcTable))
	binary.LittleEndian.PutUint64(b[40:], uint64(len(body)))
	return append(b, body...)
}

// FuzzDecodeSidecar: no sidecar, whatever its bytes, makes the decoder
// panic or allocate past what it holds, and one it accepts answers every
// accessor a query uses, for every row, without panicking.
func FuzzDecodeSidecar(f *testing.F) {
	dir := f.TempDir()
	c := newClock()
	opts := testOptions(c, &logRecorder{})
	s, err := Open(dir, opts)
	if err != nil {
		f.Fatal(err)
	}
	for i, e := range []Entry{
		req("GET", "/a", 200), req("POST", "/b?x=%20", 404),
		{ID: "abcdefghijklmno", Message: "imported", Request: &Request{Method: "GET", URL: "/x", Status: 200, ExecTime: 123456.789123}},
		{Message: "job", Level: 4, Attrs: map[string]any{"status": "abc", "n": 1.0}},
		{Message: "POST /é", Request: &Request{Method: "POST", URL: "/é", Status: 400, Error: "bad", Details: map[string]any{"a": 1.0}, AuthID: "u1", Auth: "users"}},
	} {
		e.Created = c.Now()
		c.Add(time.Duration(i) * 5 * time.Hour)
		s.Add(e)
	}
	if err := s.Close(); err != nil {
		f.Fatal(err)
	}
	files, _ := os.ReadDir(dir)
	for _, de := range files {
		if b, err := os.ReadFile(dir + "/" + de.Name()); err == nil && len(b) > sidecarHead && string(b[:6]) == "SBLIDX" {
			f.Add(b[sidecarHead:], false)
			f.Add(b, true)
		}
	}
	f.Add([]byte{}, false)
	f.Add([]byte{1, 0, 0, 1, 1, 1, 0}, false)
	f.Fuzz(func(t *testing.T, data []byte, raw bool) {
		b := data
		if !raw {
			b = withHeader(data)
		}
		sf := fuzzSeg
		sf.seg = &segment{path: "fuzz.seg", firstSeq: 1, key: 0x0707070707070707, lastSeq: 0}
		y, err := decodeSidecar(b, sf)
		if err != nil {
			return
		}
		x := newIndex(defaultTuning)
		x.merge([]*index{y})
		for _, c := range x.chunks {
			for i := range c.n {
				r := row{c, i}
				for k := range numDcols {
					c.d[k].at(i)
				}
				_, _, _, _ = c.createdAt(i), c.execAt(i), c.offAt(i), r.seq()
				_ = r.extra()
				_ = x.message(r)
				_ = x.id(r)
				if c.flagsAt(i)&rowOther == 0 {
					x.requestEntry(r)
				}
				if _, ok := x.find(r.seq()); !ok {
					t.Fatalf("row %d not found by its seq", r.seq())
				}
			}
			c.hourCounts(0, c.n)
		}
	})
}
