package age

import (
	"encoding/binary"
	"math/big"
	"math/bits"
)

// The plain reference of RFC 8439 that FuzzAEAD compares chacha.go with:
// ChaCha20 as §2.3's block function over a state array, a byte at a time,
// and Poly1305 in math/big, exactly §2.5's arithmetic. Slow and obvious.

func refChaCha20(key, nonce []byte, counter uint32, msg []byte) []byte {
	var st [16]uint32
	st[0], st[1], st[2], st[3] = 0x61707865, 0x3320646e, 0x79622d32, 0x6b206574
	for i := range 8 {
		st[4+i] = binary.LittleEndian.Uint32(key[4*i:])
	}
	for i := range 3 {
		st[13+i] = binary.LittleEndian.Uint32(nonce[4*i:])
	}
	qr := func(x *[16]uint32, a, b, c, d int) {
		x[a] += x[b]
		x[d] = bits.RotateLeft32(x[d]^x[a], 16)
		x[c] += x[d]
		x[b] = bits.RotateLeft32(x[b]^x[c], 12)
		x[a] += x[b]
		x[d] = bits.RotateLeft32(x[d]^x[a], 8)
		x[c] += x[d]
		x[b] = bits.RotateLeft32(x[b]^x[c], 7)
	}
	out := make([]byte, len(msg))
	var ks [64]byte
	for i := range msg {
		if i%64 == 0 {
			st[12] = counter + uint32(i/64)
			x := st
			for range 10 {
				qr(&x, 0, 4, 8, 12)
				qr(&x, 1, 5, 9, 13)
				qr(&x, 2, 6, 10, 14)
				qr(&x, 3, 7, 11, 15)
				qr(&x, 0, 5, 10, 15)
				qr(&x, 1, 6, 11, 12)
				qr(&x, 2, 7, 8, 13)
				qr(&x, 3, 4, 9, 14)
			}
			for j := range 16 {
				binary.LittleEndian.PutUint32(ks[4*j:], x[j]+st[j])
			}
		}
		out[i] = msg[i] ^ ks[i%64]
	}
	return out
}

// leInt reads b as a little-endian integer.
func leInt(b []byte) *big.Int {
	be := make([]byte, len(b))
	for i := range b {
		be[len(b)-1-i] = b[i]
	}
	return new(big.Int).SetBytes(be)
}

func refPoly1305(key, msg []byte) []byte {
	clamp := leInt([]byte{0xff, 0xff, 0xff, 0x0f, 0xfc, 0xff, 0xff, 0x0f, 0xfc, 0xff, 0xff, 0x0f, 0xfc, 0xff, 0xff, 0x0f})
	r := new(big.Int).And(leInt(key[:16]), clamp)
	s := leInt(key[16:32])
	p := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 130), big.NewInt(5))
	acc := new(big.Int)
	for i := 0; i < len(msg); i += 16 {
		block := append(append([]byte(nil), msg[i:min(i+16, len(msg))]...), 1)
		acc.Add(acc, leInt(block))
		acc.Mul(acc, r)
		acc.Mod(acc, p)
	}
	acc.Add(acc, s)
	tag := make([]byte, 16)
	for i, b := range acc.Bytes() { // big-endian; keep the low 16 bytes
		if j := len(acc.Bytes()) - 1 - i; j < 16 {
			tag[j] = b
		}
	}
	return tag
}

func pad16(b []byte) []byte { return append(b, make([]byte, (16-len(b)%16)%16)...) }

// refSeal is RFC 8439 §2.8's AEAD construction over the references.
func refSeal(key, nonce, plain, aad []byte) []byte {
	polyKey := refChaCha20(key, nonce, 0, make([]byte, 32))
	ct := refChaCha20(key, nonce, 1, plain)
	var lens [16]byte
	binary.LittleEndian.PutUint64(lens[:8], uint64(len(aad)))
	binary.LittleEndian.PutUint64(lens[8:], uint64(len(ct)))
	mac := append(append(pad16(append([]byte(nil), aad...)), pad16(append([]byte(nil), ct...))...), lens[:]...)
	return append(ct, refPoly1305(polyKey, mac)...)
}
