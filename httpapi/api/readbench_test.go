package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

// BenchmarkReadBody reads and decodes bodies as bind does, into the
// growing buffer of readGrowing, and (declared-length-buffer) into a
// buffer of the declared length, as it did before: the cost of never
// trusting the declared length.
func BenchmarkReadBody(b *testing.B) {
	for _, size := range []int{64, 4 << 10, 1 << 20} {
		body := []byte(`{"identity":"` + strings.Repeat("a", size-len(`{"identity":"","password":"x"}`)) + `","password":"x"}`)
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				buf, err := readGrowing(bytes.NewReader(body), int64(len(body)))
				if err != nil {
					b.Fatal(err)
				}
				var v map[string]any
				if err := json.Unmarshal(buf, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprint(size)+"/declared-length-buffer", func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				buf := make([]byte, len(body))
				if _, err := io.ReadFull(bytes.NewReader(body), buf); err != nil {
					b.Fatal(err)
				}
				var v map[string]any
				if err := json.Unmarshal(buf, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
