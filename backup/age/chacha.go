package age

import (
	"encoding/binary"
	"math/bits"
)

// ChaCha20 and Poly1305 of RFC 8439, written here: x/crypto's chacha20
// and poly1305 packages import golang.org/x/sys/cpu (for their assembly
// on some platforms), a module this project does not depend on. Both are
// portable Go: ChaCha20's block is unrolled over sixteen local words and
// XORed into the output 4 bytes at a time, Poly1305 keeps its
// accumulator in three 64-bit limbs and multiplies with math/bits, and
// neither allocates. aead_test.go checks them against RFC 8439's vectors
// and, by a differential fuzz test, against the plain reference of
// ref_test.go (math/big for Poly1305); the test kit and the real age
// check the whole.

// chachaCipher is ChaCha20 with a 32-byte key and a 12-byte nonce, its
// block counter starting at counter.
type chachaCipher struct {
	state [16]uint32 // state[12] is the counter of the next block
	block [64]byte   // key stream of the last block, for a partial write
	used  int        // bytes of block already used; 64: none left
}

func newChaCha(key *[32]byte, nonce []byte, counter uint32) chachaCipher {
	c := chachaCipher{used: 64}
	c.state[0], c.state[1], c.state[2], c.state[3] = 0x61707865, 0x3320646e, 0x79622d32, 0x6b206574 // "expand 32-byte k"
	for i := range 8 {
		c.state[4+i] = binary.LittleEndian.Uint32(key[4*i:])
	}
	c.state[12] = counter
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

// xorBlocks writes src XOR the key stream into dst (len(src) a multiple
// of 64, dst may be src), a block at a time, advancing the counter. Only
// the first column of the first round reads the counter, so the other
// three columns of that round are computed once for all the blocks.
func xorBlocks(s *[16]uint32, dst, src []byte) {
	s0, s1, s2, s3 := s[0], s[1], s[2], s[3]
	s4, s5, s6, s7 := s[4], s[5], s[6], s[7]
	s8, s9, s10, s11 := s[8], s[9], s[10], s[11]
	s12, s13, s14, s15 := s[12], s[13], s[14], s[15]
	p1, p5, p9, p13 := quarterRound(s1, s5, s9, s13)
	p2, p6, p10, p14 := quarterRound(s2, s6, s10, s14)
	p3, p7, p11, p15 := quarterRound(s3, s7, s11, s15)
	le := binary.LittleEndian
	for ; len(src) >= 64 && len(dst) >= 64; dst, src = dst[64:], src[64:] {
		x0, x4, x8, x12 := quarterRound(s0, s4, s8, s12)
		x1, x5, x9, x13 := p1, p5, p9, p13
		x2, x6, x10, x14 := p2, p6, p10, p14
		x3, x7, x11, x15 := p3, p7, p11, p15
		x0, x5, x10, x15 = quarterRound(x0, x5, x10, x15)
		x1, x6, x11, x12 = quarterRound(x1, x6, x11, x12)
		x2, x7, x8, x13 = quarterRound(x2, x7, x8, x13)
		x3, x4, x9, x14 = quarterRound(x3, x4, x9, x14)
		for range 9 {
			x0, x4, x8, x12 = quarterRound(x0, x4, x8, x12)
			x1, x5, x9, x13 = quarterRound(x1, x5, x9, x13)
			x2, x6, x10, x14 = quarterRound(x2, x6, x10, x14)
			x3, x7, x11, x15 = quarterRound(x3, x7, x11, x15)
			x0, x5, x10, x15 = quarterRound(x0, x5, x10, x15)
			x1, x6, x11, x12 = quarterRound(x1, x6, x11, x12)
			x2, x7, x8, x13 = quarterRound(x2, x7, x8, x13)
			x3, x4, x9, x14 = quarterRound(x3, x4, x9, x14)
		}
		le.PutUint64(dst[0:], le.Uint64(src[0:])^(uint64(x0+s0)|uint64(x1+s1)<<32))
		le.PutUint64(dst[8:], le.Uint64(src[8:])^(uint64(x2+s2)|uint64(x3+s3)<<32))
		le.PutUint64(dst[16:], le.Uint64(src[16:])^(uint64(x4+s4)|uint64(x5+s5)<<32))
		le.PutUint64(dst[24:], le.Uint64(src[24:])^(uint64(x6+s6)|uint64(x7+s7)<<32))
		le.PutUint64(dst[32:], le.Uint64(src[32:])^(uint64(x8+s8)|uint64(x9+s9)<<32))
		le.PutUint64(dst[40:], le.Uint64(src[40:])^(uint64(x10+s10)|uint64(x11+s11)<<32))
		le.PutUint64(dst[48:], le.Uint64(src[48:])^(uint64(x12+s12)|uint64(x13+s13)<<32))
		le.PutUint64(dst[56:], le.Uint64(src[56:])^(uint64(x14+s14)|uint64(x15+s15)<<32))
		s12++
	}
	s[12] = s12
}

// XORKeyStream writes src XOR the key stream into dst (which may be src).
func (c *chachaCipher) XORKeyStream(dst, src []byte) {
	dst = dst[:len(src)]
	for len(src) > 0 && c.used < 64 { // the rest of the last block
		dst[0] = src[0] ^ c.block[c.used]
		c.used++
		dst, src = dst[1:], src[1:]
	}
	if full := len(src) &^ 63; full > 0 {
		xorBlocks(&c.state, dst[:full], src[:full])
		dst, src = dst[full:], src[full:]
	}
	if len(src) > 0 {
		c.block = [64]byte{}
		xorBlocks(&c.state, c.block[:], c.block[:])
		for i := range src {
			dst[i] = src[i] ^ c.block[i]
		}
		c.used = len(src)
	}
}

// poly1305MAC is Poly1305 (RFC 8439 §2.5). The accumulator h is h0 +
// h1<<64 + h2<<128, kept below 2^131 between blocks (partly reduced);
// r is r0 + r1<<64, clamped (the top 4 bits of each 32-bit word zero),
// which keeps the column sums of the products within 128 bits.
type poly1305MAC struct {
	h0, h1, h2 uint64
	r0, r1     uint64
	s0, s1     uint64
	buf        [16]byte
	n          int
}

func newPoly1305(key *[32]byte) poly1305MAC {
	le := binary.LittleEndian
	return poly1305MAC{
		r0: le.Uint64(key[0:]) & 0x0ffffffc0fffffff,
		r1: le.Uint64(key[8:]) & 0x0ffffffc0ffffffc,
		s0: le.Uint64(key[16:]),
		s1: le.Uint64(key[24:]),
	}
}

// blocks adds each 16-byte block of m (len(m) a multiple of 16) with its
// 2^128 bit when hibit is 1, multiplying by r modulo 2^130 - 5 after each.
func (p *poly1305MAC) blocks(m []byte, hibit uint64) {
	h0, h1, h2 := p.h0, p.h1, p.h2
	r0, r1 := p.r0, p.r1
	for ; len(m) >= 16; m = m[16:] {
		var c uint64
		h0, c = bits.Add64(h0, binary.LittleEndian.Uint64(m[0:]), 0)
		h1, c = bits.Add64(h1, binary.LittleEndian.Uint64(m[8:]), c)
		h2 += c + hibit
		// h·r as t0 + t1<<64 + t2<<128 + t3<<192. h2 < 8 and r's
		// clamped top bits keep h2·r0, h2·r1 and the sums of each column
		// within 128 bits.
		a1, a0 := bits.Mul64(h0, r0)
		b1, b0 := bits.Mul64(h1, r0)
		c1, c0 := bits.Mul64(h0, r1)
		d1, d0 := bits.Mul64(h1, r1)
		e0 := h2 * r0
		f0 := h2 * r1
		t0 := a0
		m1lo, k := bits.Add64(b0, c0, 0)
		m1hi := b1 + c1 + k
		m2lo, k := bits.Add64(d0, e0, 0)
		m2hi := d1 + k
		t1, k := bits.Add64(m1lo, a1, 0)
		t2, k := bits.Add64(m2lo, m1hi, k)
		t3 := f0 + m2hi + k
		// 2^130 ≡ 5: the part from bit 130 up, u = (t2 &^ 3) + t3<<64,
		// is 4·(u/4); add it once as u and once as u/4.
		h0, h1, h2 = t0, t1, t2&3
		u0, u1 := t2&^3, t3
		h0, c = bits.Add64(h0, u0, 0)
		h1, c = bits.Add64(h1, u1, c)
		h2 += c
		u0, u1 = u0>>2|u1<<62, u1>>2
		h0, c = bits.Add64(h0, u0, 0)
		h1, c = bits.Add64(h1, u1, c)
		h2 += c
	}
	p.h0, p.h1, p.h2 = h0, h1, h2
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
		p.blocks(p.buf[:], 1)
		p.n = 0
	}
	if full := len(b) &^ 15; full > 0 {
		p.blocks(b[:full], 1)
		b = b[full:]
	}
	p.n = copy(p.buf[:], b)
}

// Sum appends the 16-byte tag to out.
func (p *poly1305MAC) Sum(out []byte) []byte {
	if p.n > 0 {
		var last [16]byte
		copy(last[:], p.buf[:p.n])
		last[p.n] = 1
		p.blocks(last[:], 0)
	}
	// h mod 2^130 - 5: h - p when that does not borrow, else h (h < 2p).
	g0, b := bits.Sub64(p.h0, 0xfffffffffffffffb, 0)
	g1, b := bits.Sub64(p.h1, 0xffffffffffffffff, b)
	_, b = bits.Sub64(p.h2, 3, b)
	keep := b - 1 // all ones when h >= p
	h0 := p.h0&^keep | g0&keep
	h1 := p.h1&^keep | g1&keep
	// h mod 2^128, plus s.
	h0, c := bits.Add64(h0, p.s0, 0)
	h1, _ = bits.Add64(h1, p.s1, c)
	var tag [16]byte
	binary.LittleEndian.PutUint64(tag[0:], h0)
	binary.LittleEndian.PutUint64(tag[8:], h1)
	return append(out, tag[:]...)
}
