package age

import (
	"encoding/binary"
	"math/bits"
)

// ChaCha20 and Poly1305 of RFC 8439, written here: x/crypto's chacha20
// and poly1305 packages import golang.org/x/sys/cpu (for their assembly
// on some platforms), a module this project does not depend on. Both are
// the portable reference algorithms; aead_test.go checks them against
// RFC 8439's vectors, and the test kit and the real age check the whole.

// chachaCipher is ChaCha20 with a 32-byte key and a 12-byte nonce, its
// block counter starting at counter.
type chachaCipher struct {
	state   [16]uint32
	block   [64]byte
	used    int // bytes of block already used; 64: none left
	counter uint32
}

func newChaCha(key *[32]byte, nonce []byte, counter uint32) *chachaCipher {
	c := &chachaCipher{used: 64, counter: counter}
	c.state[0], c.state[1], c.state[2], c.state[3] = 0x61707865, 0x3320646e, 0x79622d32, 0x6b206574 // "expand 32-byte k"
	for i := range 8 {
		c.state[4+i] = binary.LittleEndian.Uint32(key[4*i:])
	}
	for i := range 3 {
		c.state[13+i] = binary.LittleEndian.Uint32(nonce[4*i:])
	}
	return c
}

func quarterRound(a, b, c, d uint32) (uint32, uint32, uint32, uint32) {
	a += b
	d = bits.RotateLeft32(d^a, 16)
	c += d
	b = bits.RotateLeft32(b^c, 12)
	a += b
	d = bits.RotateLeft32(d^a, 8)
	c += d
	b = bits.RotateLeft32(b^c, 7)
	return a, b, c, d
}

// next computes the key stream block of the current counter and advances it.
func (c *chachaCipher) next() {
	c.state[12] = c.counter
	x := c.state
	for range 10 {
		x[0], x[4], x[8], x[12] = quarterRound(x[0], x[4], x[8], x[12])
		x[1], x[5], x[9], x[13] = quarterRound(x[1], x[5], x[9], x[13])
		x[2], x[6], x[10], x[14] = quarterRound(x[2], x[6], x[10], x[14])
		x[3], x[7], x[11], x[15] = quarterRound(x[3], x[7], x[11], x[15])
		x[0], x[5], x[10], x[15] = quarterRound(x[0], x[5], x[10], x[15])
		x[1], x[6], x[11], x[12] = quarterRound(x[1], x[6], x[11], x[12])
		x[2], x[7], x[8], x[13] = quarterRound(x[2], x[7], x[8], x[13])
		x[3], x[4], x[9], x[14] = quarterRound(x[3], x[4], x[9], x[14])
	}
	for i := range 16 {
		binary.LittleEndian.PutUint32(c.block[4*i:], x[i]+c.state[i])
	}
	c.counter++
	c.used = 0
}

// XORKeyStream writes src XOR the key stream into dst (which may be src).
func (c *chachaCipher) XORKeyStream(dst, src []byte) {
	dst = dst[:len(src)]
	for len(src) > 0 && c.used < 64 { // the rest of the last block
		dst[0] = src[0] ^ c.block[c.used]
		c.used++
		dst, src = dst[1:], src[1:]
	}
	for len(src) >= 64 { // whole blocks, eight bytes at a time
		c.next()
		for i := 0; i < 64; i += 8 {
			binary.LittleEndian.PutUint64(dst[i:], binary.LittleEndian.Uint64(src[i:])^binary.LittleEndian.Uint64(c.block[i:]))
		}
		c.used = 64
		dst, src = dst[64:], src[64:]
	}
	if len(src) > 0 {
		c.next()
		for i := range src {
			dst[i] = src[i] ^ c.block[i]
		}
		c.used = len(src)
	}
}

// poly1305MAC is Poly1305 (RFC 8439 §2.5) with 26-bit limbs.
type poly1305MAC struct {
	r   [5]uint32
	s   [4]uint32
	h   [5]uint32
	buf [16]byte
	n   int
}

const mask26 = 1<<26 - 1

func newPoly1305(key *[32]byte) *poly1305MAC {
	p := &poly1305MAC{}
	p.r[0] = binary.LittleEndian.Uint32(key[0:]) & 0x3ffffff
	p.r[1] = (binary.LittleEndian.Uint32(key[3:]) >> 2) & 0x3ffff03
	p.r[2] = (binary.LittleEndian.Uint32(key[6:]) >> 4) & 0x3ffc0ff
	p.r[3] = (binary.LittleEndian.Uint32(key[9:]) >> 6) & 0x3f03fff
	p.r[4] = (binary.LittleEndian.Uint32(key[12:]) >> 8) & 0x00fffff
	for i := range 4 {
		p.s[i] = binary.LittleEndian.Uint32(key[16+4*i:])
	}
	return p
}

// blockOf adds the 16-byte block m (with the 2^128 bit when full) and
// multiplies by r, modulo 2^130 - 5.
func (p *poly1305MAC) blockOf(m []byte, hibit uint32) {
	r0, r1, r2, r3, r4 := uint64(p.r[0]), uint64(p.r[1]), uint64(p.r[2]), uint64(p.r[3]), uint64(p.r[4])
	s1, s2, s3, s4 := r1*5, r2*5, r3*5, r4*5
	h0 := uint64(p.h[0] + binary.LittleEndian.Uint32(m[0:])&mask26)
	h1 := uint64(p.h[1] + (binary.LittleEndian.Uint32(m[3:])>>2)&mask26)
	h2 := uint64(p.h[2] + (binary.LittleEndian.Uint32(m[6:])>>4)&mask26)
	h3 := uint64(p.h[3] + (binary.LittleEndian.Uint32(m[9:])>>6)&mask26)
	h4 := uint64(p.h[4] + (binary.LittleEndian.Uint32(m[12:])>>8 | hibit))
	d0 := h0*r0 + h1*s4 + h2*s3 + h3*s2 + h4*s1
	d1 := h0*r1 + h1*r0 + h2*s4 + h3*s3 + h4*s2
	d2 := h0*r2 + h1*r1 + h2*r0 + h3*s4 + h4*s3
	d3 := h0*r3 + h1*r2 + h2*r1 + h3*r0 + h4*s4
	d4 := h0*r4 + h1*r3 + h2*r2 + h3*r1 + h4*r0
	c := d0 >> 26
	p.h[0] = uint32(d0) & mask26
	d1 += c
	c = d1 >> 26
	p.h[1] = uint32(d1) & mask26
	d2 += c
	c = d2 >> 26
	p.h[2] = uint32(d2) & mask26
	d3 += c
	c = d3 >> 26
	p.h[3] = uint32(d3) & mask26
	d4 += c
	c = d4 >> 26
	p.h[4] = uint32(d4) & mask26
	p.h[0] += uint32(c) * 5
	p.h[1] += p.h[0] >> 26
	p.h[0] &= mask26
}

// Write adds b to the message.
func (p *poly1305MAC) Write(b []byte) {
	if p.n > 0 {
		k := copy(p.buf[p.n:], b)
		p.n += k
		b = b[k:]
		if p.n < 16 {
			return
		}
		p.blockOf(p.buf[:], 1<<24)
		p.n = 0
	}
	for len(b) >= 16 {
		p.blockOf(b[:16], 1<<24)
		b = b[16:]
	}
	p.n = copy(p.buf[:], b)
}

// Sum appends the 16-byte tag to out.
func (p *poly1305MAC) Sum(out []byte) []byte {
	if p.n > 0 {
		var last [16]byte
		copy(last[:], p.buf[:p.n])
		last[p.n] = 1
		p.blockOf(last[:], 0)
	}
	h0, h1, h2, h3, h4 := p.h[0], p.h[1], p.h[2], p.h[3], p.h[4]
	c := h1 >> 26
	h1 &= mask26
	h2 += c
	c = h2 >> 26
	h2 &= mask26
	h3 += c
	c = h3 >> 26
	h3 &= mask26
	h4 += c
	c = h4 >> 26
	h4 &= mask26
	h0 += c * 5
	c = h0 >> 26
	h0 &= mask26
	h1 += c
	// g = h + 5 - 2^130: h itself if that is negative.
	g0 := h0 + 5
	c = g0 >> 26
	g0 &= mask26
	g1 := h1 + c
	c = g1 >> 26
	g1 &= mask26
	g2 := h2 + c
	c = g2 >> 26
	g2 &= mask26
	g3 := h3 + c
	c = g3 >> 26
	g3 &= mask26
	g4 := h4 + c - 1<<26
	keep := (g4 >> 31) - 1 // all ones when g >= 0
	h0 = h0&^keep | g0&keep
	h1 = h1&^keep | g1&keep
	h2 = h2&^keep | g2&keep
	h3 = h3&^keep | g3&keep
	h4 = h4&^keep | g4&keep
	// h mod 2^128, plus s.
	w0 := h0 | h1<<26
	w1 := h1>>6 | h2<<20
	w2 := h2>>12 | h3<<14
	w3 := h3>>18 | h4<<8
	f := uint64(w0) + uint64(p.s[0])
	var tag [16]byte
	binary.LittleEndian.PutUint32(tag[0:], uint32(f))
	f = uint64(w1) + uint64(p.s[1]) + f>>32
	binary.LittleEndian.PutUint32(tag[4:], uint32(f))
	f = uint64(w2) + uint64(p.s[2]) + f>>32
	binary.LittleEndian.PutUint32(tag[8:], uint32(f))
	f = uint64(w3) + uint64(p.s[3]) + f>>32
	binary.LittleEndian.PutUint32(tag[12:], uint32(f))
	return append(out, tag[:]...)
}
