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

// BenchmarkChaCha20 measures the key stream XORed over 64 KiB, one
// chunk of the payload (MB/s).
func BenchmarkChaCha20(b *testing.B) {
	var key [32]byte
	nonce := make([]byte, aeadNonceSize)
	buf := make([]byte, ChunkSize)
	b.SetBytes(ChunkSize)
	for b.Loop() {
		c := newChaCha(&key, nonce, 1)
		c.XORKeyStream(buf, buf)
	}
}

// BenchmarkPoly1305 measures the MAC of 64 KiB (MB/s).
func BenchmarkPoly1305(b *testing.B) {
	var key [32]byte
	key[0] = 1
	buf := make([]byte, ChunkSize)
	var tag []byte
	b.SetBytes(ChunkSize)
	for b.Loop() {
		p := newPoly1305(&key)
		p.Write(buf)
		tag = p.Sum(tag[:0])
	}
}

// BenchmarkSeal64K measures ChaCha20-Poly1305 sealing one 64 KiB chunk
// into a reused buffer, as the payload writer does (MB/s, allocations).
func BenchmarkSeal64K(b *testing.B) {
	a, _ := newAEAD(make([]byte, 32))
	nonce := make([]byte, aeadNonceSize)
	plain := make([]byte, ChunkSize)
	out := make([]byte, 0, ChunkSize+aeadOverhead)
	b.ReportAllocs()
	b.SetBytes(ChunkSize)
	for b.Loop() {
		out = a.Seal(out[:0], nonce, plain, nil)
	}
}
