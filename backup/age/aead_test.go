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
