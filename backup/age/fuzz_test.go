package age

import (
	"bufio"
	"bytes"
	"encoding/hex"
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

// FuzzAEAD is differential: ChaCha20-Poly1305 of chacha.go and aead.go
// against the reference of ref_test.go, on any key, nonce, associated
// data and plaintext; ChaCha20 written in two pieces and Poly1305 fed in
// two pieces must give what one write gives; Open undoes Seal and
// refuses the tag flipped.
func FuzzAEAD(f *testing.F) {
	f.Add(make([]byte, 32), make([]byte, 12), []byte(nil), []byte(nil), uint16(0))
	f.Add(bytes.Repeat([]byte{0xff}, 32), bytes.Repeat([]byte{0xff}, 12), []byte("aad"), bytes.Repeat([]byte{0xff}, 200), uint16(63))
	f.Add([]byte("0123456789abcdef0123456789abcdef"), []byte("nonce-12byte"), []byte{1}, bytes.Repeat([]byte("x"), 1000), uint16(17))
	for _, v := range poly1305Edges { // the key is Poly1305's too
		key, _ := hex.DecodeString(v.key)
		msg, _ := hex.DecodeString(v.msg)
		f.Add(key, make([]byte, 12), []byte(nil), msg, uint16(len(msg)/2))
	}
	f.Fuzz(func(t *testing.T, key, nonce, aad, plain []byte, split uint16) {
		if len(key) < 32 || len(nonce) < 12 {
			return
		}
		key, nonce = key[:32], nonce[:12]
		a, err := newAEAD(key)
		if err != nil {
			t.Fatal(err)
		}
		got := a.Seal(nil, nonce, plain, aad)
		if want := refSeal(key, nonce, plain, aad); !bytes.Equal(got, want) {
			t.Fatalf("Seal = %x, reference %x", got, want)
		}
		if p, err := a.Open(nil, nonce, got, aad); err != nil || !bytes.Equal(p, plain) {
			t.Fatalf("Open(Seal) = %x, %v", p, err)
		}
		got[len(got)-1] ^= 1
		if _, err := a.Open(nil, nonce, got, aad); err == nil {
			t.Fatal("Open accepted a flipped tag")
		}
		k := int(split) % (len(plain) + 1)
		c := newChaCha((*[32]byte)(key), nonce, 7)
		out := make([]byte, len(plain))
		c.XORKeyStream(out[:k], plain[:k])
		c.XORKeyStream(out[k:], plain[k:])
		if want := refChaCha20(key, nonce, 7, plain); !bytes.Equal(out, want) {
			t.Fatalf("ChaCha20 in pieces %d+%d = %x, reference %x", k, len(plain)-k, out, want)
		}
		p := newPoly1305((*[32]byte)(key))
		p.Write(plain[:k])
		p.Write(plain[k:])
		if got, want := p.Sum(nil), refPoly1305(key, plain); !bytes.Equal(got, want) {
			t.Fatalf("Poly1305 in pieces %d+%d = %x, reference %x", k, len(plain)-k, got, want)
		}
	})
}
