package age

import (
	"bytes"
	"crypto/rand"
	"io"
	"testing"
)

const benchSize = 16 << 20

// BenchmarkEncrypt measures Encrypt's throughput (MB/s) on 16 MiB.
func BenchmarkEncrypt(b *testing.B) {
	id := newIdentity(b)
	plain := make([]byte, benchSize)
	rand.Read(plain)
	b.SetBytes(benchSize)
	for b.Loop() {
		w, err := Encrypt(io.Discard, id.Recipient())
		if err != nil {
			b.Fatal(err)
		}
		w.Write(plain)
		w.Close()
	}
}

// BenchmarkDecrypt measures Decrypt's throughput (MB/s) on 16 MiB.
func BenchmarkDecrypt(b *testing.B) {
	id := newIdentity(b)
	plain := make([]byte, benchSize)
	rand.Read(plain)
	file := encrypt(b, plain, id.Recipient())
	b.SetBytes(benchSize)
	for b.Loop() {
		r, err := Decrypt(bytes.NewReader(file), id)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReaderAt measures a sequential read through the ReaderAt, as
// a zip reader does, on 16 MiB.
func BenchmarkReaderAt(b *testing.B) {
	id := newIdentity(b)
	plain := make([]byte, benchSize)
	rand.Read(plain)
	file := encrypt(b, plain, id.Recipient())
	b.SetBytes(benchSize)
	for b.Loop() {
		ra, err := NewReaderAt(bytes.NewReader(file), int64(len(file)), id)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, io.NewSectionReader(ra, 0, ra.Size())); err != nil {
			b.Fatal(err)
		}
	}
}
