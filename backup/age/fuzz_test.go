package age

import (
	"bufio"
	"bytes"
	"io"
	"testing"
)

// fuzzIdentity is the test kit's identity, which opens its vectors.
const fuzzIdentity = "AGE-SECRET-KEY-1EGTZVFFV20835NWYV6270LXYVK2VKNX2MMDKWYKLMGR48UAWX40Q2P2LM0"

func addSeeds(f *testing.F) {
	for _, v := range readVectors(f) {
		f.Add(v.file)
	}
	id, _ := ParseX25519Identity(fuzzIdentity)
	f.Add(encrypt(f, nil, id.Recipient()))
	f.Add(encrypt(f, bytes.Repeat([]byte("x"), ChunkSize+3), id.Recipient()))
}

// FuzzParseHeader: no input panics, a header is bounded, and a parsed
// header marshals back to exactly the bytes its MAC covers.
func FuzzParseHeader(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		h, err := parseHeader(bufio.NewReader(bytes.NewReader(in)))
		if err != nil {
			return
		}
		if h.size > MaxHeaderSize || len(h.stanzas) > MaxStanzas {
			t.Fatalf("header of %d bytes, %d stanzas: past the bounds", h.size, len(h.stanzas))
		}
		var b bytes.Buffer
		b.WriteString(intro)
		for _, s := range h.stanzas {
			s.marshal(&b)
		}
		b.WriteString("---")
		if !bytes.Equal(b.Bytes(), h.signed) {
			t.Fatalf("marshal = %q, want %q", b.Bytes(), h.signed)
		}
	})
}

// FuzzDecrypt: no input panics, and the streaming reader and the
// ReaderAt agree: both open the file to the same plaintext, or both fail.
func FuzzDecrypt(f *testing.F) {
	addSeeds(f)
	id, _ := ParseX25519Identity(fuzzIdentity)
	f.Fuzz(func(t *testing.T, in []byte) {
		var plain []byte
		r, err := Decrypt(bytes.NewReader(in), id)
		if err == nil {
			plain, err = io.ReadAll(r)
		}
		got, errAt := readAllAt(in, id)
		if (err == nil) != (errAt == nil) {
			t.Fatalf("Decrypt: %v; ReaderAt: %v", err, errAt)
		}
		if err == nil && !bytes.Equal(plain, got) {
			t.Fatalf("Decrypt and ReaderAt disagree on the plaintext")
		}
		if len(plain) > len(in) {
			t.Fatalf("%d bytes of plaintext from %d bytes", len(plain), len(in))
		}
	})
}
