package age

import (
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
	"errors"
)

// chacha20Poly1305 is the AEAD of RFC 8439 §2.8, over the ChaCha20 and
// Poly1305 of chacha.go (x/crypto's packages would bring golang.org/x/sys
// into the module), checked against RFC 8439's §2.8.2 vector and the
// C2SP age test kit (aead_test.go, age_test.go).
type chacha20Poly1305 struct{ key [32]byte }

const (
	aeadNonceSize = 12
	aeadOverhead  = 16
)

var errOpen = errors.New("age: message authentication failed")

// newAEAD returns ChaCha20-Poly1305 under a 32-byte key.
func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, errors.New("age: bad key length")
	}
	a := &chacha20Poly1305{}
	copy(a.key[:], key)
	return a, nil
}

func (a *chacha20Poly1305) NonceSize() int { return aeadNonceSize }
func (a *chacha20Poly1305) Overhead() int  { return aeadOverhead }

// setup returns the cipher at block 1 and the one-time Poly1305 key of
// nonce (the first 32 bytes of block 0's keystream).
func (a *chacha20Poly1305) setup(nonce []byte) (chachaCipher, poly1305MAC) {
	var polyKey [32]byte
	c := newChaCha(&a.key, nonce, 0)
	c.XORKeyStream(polyKey[:], polyKey[:])
	return newChaCha(&a.key, nonce, 1), newPoly1305(&polyKey)
}

// writeWithPadding adds b to the MAC, zero-padded to 16 bytes.
func writeWithPadding(p *poly1305MAC, b []byte) {
	p.Write(b)
	if rem := len(b) % 16; rem != 0 {
		var pad [16]byte
		p.Write(pad[:16-rem])
	}
}

func writeLengths(p *poly1305MAC, aad, ct int) {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(aad))
	binary.LittleEndian.PutUint64(b[8:], uint64(ct))
	p.Write(b[:])
}

// Seal appends the encryption of plaintext and its tag to dst.
func (a *chacha20Poly1305) Seal(dst, nonce, plaintext, aad []byte) []byte {
	if len(nonce) != aeadNonceSize {
		panic("age: bad nonce length") // every caller passes a 12-byte nonce
	}
	ret, out := sliceForAppend(dst, len(plaintext)+aeadOverhead)
	ct, tag := out[:len(plaintext)], out[len(plaintext):]
	s, p := a.setup(nonce)
	s.XORKeyStream(ct, plaintext)
	writeWithPadding(&p, aad)
	writeWithPadding(&p, ct)
	writeLengths(&p, len(aad), len(ct))
	p.Sum(tag[:0])
	return ret
}

// Open checks the tag of ciphertext and appends its decryption to dst;
// nothing is decrypted unless the tag matches.
func (a *chacha20Poly1305) Open(dst, nonce, ciphertext, aad []byte) ([]byte, error) {
	if len(nonce) != aeadNonceSize || len(ciphertext) < aeadOverhead {
		return nil, errOpen
	}
	tag := ciphertext[len(ciphertext)-aeadOverhead:]
	ct := ciphertext[:len(ciphertext)-aeadOverhead]
	s, p := a.setup(nonce)
	writeWithPadding(&p, aad)
	writeWithPadding(&p, ct)
	writeLengths(&p, len(aad), len(ct))
	var sum [aeadOverhead]byte
	p.Sum(sum[:0])
	if subtle.ConstantTimeCompare(sum[:], tag) != 1 {
		return nil, errOpen
	}
	ret, out := sliceForAppend(dst, len(ct))
	s.XORKeyStream(out, ct)
	return ret, nil
}

// sliceForAppend extends in by n bytes, reusing its capacity, and
// returns the whole slice and the n new bytes.
func sliceForAppend(in []byte, n int) (head, tail []byte) {
	if total := len(in) + n; cap(in) >= total {
		head = in[:total]
	} else {
		head = make([]byte, total)
		copy(head, in)
	}
	return head, head[len(in):]
}
