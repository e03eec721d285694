package age

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// TestAEADVector checks the ChaCha20-Poly1305 composition against the
// AEAD test vector of RFC 8439 §2.8.2, and that Open refuses a flipped
// byte of the ciphertext, the tag or the associated data.
func TestAEADVector(t *testing.T) {
	unhex := func(s string) []byte {
		b, err := hex.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	key := unhex("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f")
	nonce := unhex("070000004041424344454647")
	aad := unhex("50515253c0c1c2c3c4c5c6c7")
	plain := []byte("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.")
	want := unhex("d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6" +
		"3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36" +
		"92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc" +
		"3ff4def08e4b7a9de576d26586cec64b6116" + "1ae10b594f09e26a7e902ecbd0600691")
	a, err := newAEAD(key)
	if err != nil {
		t.Fatal(err)
	}
	got := a.Seal(nil, nonce, plain, aad)
	if !bytes.Equal(got, want) {
		t.Fatalf("Seal = %x, want %x", got, want)
	}
	if ref := refSeal(key, nonce, plain, aad); !bytes.Equal(ref, want) { // FuzzAEAD's reference
		t.Fatalf("refSeal = %x, want %x", ref, want)
	}
	if p, err := a.Open(nil, nonce, got, aad); err != nil || !bytes.Equal(p, plain) {
		t.Fatalf("Open = %q, %v", p, err)
	}
	for i := range got {
		bad := bytes.Clone(got)
		bad[i] ^= 0x80
		if _, err := a.Open(nil, nonce, bad, aad); err == nil {
			t.Fatalf("Open with byte %d flipped succeeded", i)
		}
	}
	if _, err := a.Open(nil, nonce, got, aad[1:]); err == nil {
		t.Fatal("Open with other associated data succeeded")
	}
}

// TestPoly1305Vector: RFC 8439 §2.5.2, the message written whole and in
// pieces of every size (the buffering of partial blocks).
func TestPoly1305Vector(t *testing.T) {
	key := [32]byte{0x85, 0xd6, 0xbe, 0x78, 0x57, 0x55, 0x6d, 0x33, 0x7f, 0x44, 0x52, 0xfe, 0x42, 0xd5, 0x06, 0xa8,
		0x01, 0x03, 0x80, 0x8a, 0xfb, 0x0d, 0xb2, 0xfd, 0x4a, 0xbf, 0xf6, 0xaf, 0x41, 0x49, 0xf5, 0x1b}
	msg := []byte("Cryptographic Forum Research Group")
	want := "a8061dc1305136c6c22b8baf0c0127a9"
	for step := 1; step <= len(msg); step++ {
		p := newPoly1305(&key)
		for i := 0; i < len(msg); i += step {
			p.Write(msg[i:min(i+step, len(msg))])
		}
		if got := hex.EncodeToString(p.Sum(nil)); got != want {
			t.Fatalf("Poly1305 in pieces of %d = %s, want %s", step, got, want)
		}
	}
}

// TestChaCha20Block: RFC 8439 §2.3.2's block (key 00…1f, counter 1), and
// §2.4.2's first bytes of key stream XORed in two uneven writes.
func TestChaCha20Block(t *testing.T) {
	var key [32]byte
	for i := range key {
		key[i] = byte(i)
	}
	nonce := []byte{0, 0, 0, 9, 0, 0, 0, 0x4a, 0, 0, 0, 0}
	c := newChaCha(&key, nonce, 1)
	out := make([]byte, 64)
	c.XORKeyStream(out[:7], out[:7])
	c.XORKeyStream(out[7:], out[7:])
	want := "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e" +
		"d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e"
	if got := hex.EncodeToString(out); got != want {
		t.Errorf("ChaCha20 block = %s, want %s", got, want)
	}
}

// poly1305Edges are RFC 8439 Appendix A.3's vectors #5 to #11, the
// corner cases of the arithmetic: a result not fully reduced, s
// overflowing 2^128, carries into an all-ones limb, results of exactly
// 2^130-5 and 2^130-6, and a 131-bit intermediate. Key is r then s.
var poly1305Edges = []struct{ name, key, msg, tag string }{
	{"#5 partial reduction", "02" + zero15 + zero16, ones16, "03" + zero15},
	{"#6 s overflows", "02" + zero15 + ones16, "02" + zero15, "03" + zero15},
	{"#7 carry into all ones", "01" + zero15 + zero16, ones16 + "f0" + ones15 + "11" + zero15, "05" + zero15},
	{"#8 exactly 2^130-5", "01" + zero15 + zero16, ones16 + "fb" + "fefefefefefefefefefefefefefefe" + "01010101010101010101010101010101", zero16},
	{"#9 exactly 2^130-6", "02" + zero15 + zero16, "fd" + ones15, "fa" + ones15},
	{"#10 131-bit intermediate", "0100000000000000" + "0400000000000000" + zero16,
		"e33594d7505e43b900000000000000003394d7505e4379cd01000000000000000000000000000000000000000000000001000000000000000000000000000000",
		"14000000000000005500000000000000"},
	{"#11 131-bit intermediate, 48 bytes", "0100000000000000" + "0400000000000000" + zero16,
		"e33594d7505e43b900000000000000003394d7505e4379cd010000000000000000000000000000000000000000000000", "13" + zero15},
}

const (
	zero15 = "000000000000000000000000000000"
	zero16 = zero15 + "00"
	ones15 = "ffffffffffffffffffffffffffffff"
	ones16 = ones15 + "ff"
)

// TestPoly1305Edges: chacha.go's Poly1305 and the math/big reference of
// ref_test.go on poly1305Edges.
func TestPoly1305Edges(t *testing.T) {
	for _, v := range poly1305Edges {
		key, _ := hex.DecodeString(v.key)
		msg, _ := hex.DecodeString(v.msg)
		p := newPoly1305((*[32]byte)(key))
		p.Write(msg)
		if got := hex.EncodeToString(p.Sum(nil)); got != v.tag {
			t.Errorf("%s: Poly1305 = %s, want %s", v.name, got, v.tag)
		}
		if got := hex.EncodeToString(refPoly1305(key, msg)); got != v.tag {
			t.Errorf("%s: reference = %s, want %s", v.name, got, v.tag)
		}
	}
}
