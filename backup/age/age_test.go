package age

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	mrand "math/rand/v2"
	"testing"
)

func newIdentity(tb testing.TB) *X25519Identity {
	tb.Helper()
	id, err := GenerateX25519Identity(rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	return id
}

func encrypt(tb testing.TB, plain []byte, recipients ...Recipient) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w, err := Encrypt(&buf, recipients...)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := w.Write(plain); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func decryptAll(file []byte, ids ...Identity) ([]byte, error) {
	r, err := Decrypt(bytes.NewReader(file), ids...)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

func readAllAt(file []byte, ids ...Identity) ([]byte, error) {
	ra, err := NewReaderAt(bytes.NewReader(file), int64(len(file)), ids...)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(io.NewSectionReader(ra, 0, ra.Size()))
}

// sizes are the plaintext lengths every round trip tries: empty, within
// a chunk, and on either side of chunk boundaries.
var sizes = []int{0, 1, 100, ChunkSize - 1, ChunkSize, ChunkSize + 1, 2 * ChunkSize, 3*ChunkSize + 7}

func TestRoundTrip(t *testing.T) {
	a, b, other := newIdentity(t), newIdentity(t), newIdentity(t)
	for _, n := range sizes {
		plain := make([]byte, n)
		rand.Read(plain)
		file := encrypt(t, plain, a.Recipient(), b.Recipient())
		if !IsEncrypted(file) {
			t.Fatalf("IsEncrypted(%d-byte file) = false", n)
		}
		for _, id := range []*X25519Identity{a, b} {
			if got, err := decryptAll(file, other, id); err != nil || !bytes.Equal(got, plain) {
				t.Errorf("Decrypt of %d bytes: %v (plaintext equal: %v)", n, err, bytes.Equal(got, plain))
			}
			if got, err := readAllAt(file, id); err != nil || !bytes.Equal(got, plain) {
				t.Errorf("ReaderAt of %d bytes: %v (plaintext equal: %v)", n, err, bytes.Equal(got, plain))
			}
		}
		if _, err := decryptAll(file, other); !errors.Is(err, ErrIncorrectIdentity) {
			t.Errorf("Decrypt with another identity: %v, want ErrIncorrectIdentity", err)
		}
		if _, err := readAllAt(file, other); !errors.Is(err, ErrIncorrectIdentity) {
			t.Errorf("ReaderAt with another identity: %v, want ErrIncorrectIdentity", err)
		}
	}
}

func TestScryptRoundTrip(t *testing.T) {
	r := NewScryptRecipient("correct horse")
	r.SetWorkFactor(10)
	file := encrypt(t, []byte("hello"), r)
	if got, err := decryptAll(file, NewScryptIdentity("correct horse")); err != nil || string(got) != "hello" {
		t.Errorf("Decrypt = %q, %v", got, err)
	}
	if _, err := decryptAll(file, NewScryptIdentity("wrong")); !errors.Is(err, ErrIncorrectIdentity) {
		t.Errorf("Decrypt with a wrong passphrase: %v, want ErrIncorrectIdentity", err)
	}
	if _, err := Encrypt(io.Discard, r, newIdentity(t).Recipient()); err == nil {
		t.Error("Encrypt to scrypt and X25519 succeeded, want an error")
	}
}

// TestReaderAtRandom reads random ranges of a multi-chunk file.
func TestReaderAtRandom(t *testing.T) {
	id := newIdentity(t)
	plain := make([]byte, 3*ChunkSize+123)
	rand.Read(plain)
	file := encrypt(t, plain, id.Recipient())
	ra, err := NewReaderAt(bytes.NewReader(file), int64(len(file)), id)
	if err != nil {
		t.Fatal(err)
	}
	if ra.Size() != int64(len(plain)) {
		t.Fatalf("Size() = %d, want %d", ra.Size(), len(plain))
	}
	rng := mrand.New(mrand.NewPCG(1, 2))
	for range 200 {
		off := rng.IntN(len(plain) + 10)
		n := rng.IntN(2*ChunkSize + 1)
		buf := make([]byte, n)
		got, err := ra.ReadAt(buf, int64(off))
		want := max(0, min(n, len(plain)-off))
		if got != want || (got < n && err != io.EOF) || (got == n && err != nil) {
			t.Fatalf("ReadAt(%d bytes at %d) = %d, %v; want %d", n, off, got, err, want)
		}
		if !bytes.Equal(buf[:got], plain[off:off+got]) {
			t.Fatalf("ReadAt(%d bytes at %d): wrong bytes", n, off)
		}
	}
}

// TestTamper flips bytes of the header, the nonce and the payload, and
// truncates the file: every damaged file fails, with either reader, and
// no unauthenticated plaintext comes out.
func TestTamper(t *testing.T) {
	id := newIdentity(t)
	plain := make([]byte, 2*ChunkSize+50)
	rand.Read(plain)
	file := encrypt(t, plain, id.Recipient())
	var offsets []int
	for i := 0; i < 400; i++ { // header and nonce, every byte
		offsets = append(offsets, i)
	}
	for i := 400; i < len(file); i += 997 {
		offsets = append(offsets, i)
	}
	offsets = append(offsets, len(file)-1)
	for _, off := range offsets {
		bad := bytes.Clone(file)
		bad[off] ^= 0x01
		checkDamaged(t, "flip", off, bad, plain, id)
	}
	hdr := len(file) - 2*sealedChunk - (50 + aeadOverhead)
	for _, n := range []int{0, 1, 21, 22, hdr - 1, hdr, hdr + sealedChunk, hdr + 2*sealedChunk, len(file) - 1} {
		checkDamaged(t, "truncate", n, file[:n], plain, id)
	}
	checkDamaged(t, "append", len(file), append(bytes.Clone(file), 0), plain, id)
}

func checkDamaged(t *testing.T, what string, off int, bad, plain []byte, id Identity) {
	t.Helper()
	r, err := Decrypt(bytes.NewReader(bad), id)
	if err == nil {
		var got []byte
		got, err = io.ReadAll(r)
		// What came out before the error is whole authenticated chunks
		// of the plaintext.
		if len(got)%ChunkSize != 0 || !bytes.Equal(got, plain[:len(got)]) {
			t.Errorf("%s at %d: Decrypt returned %d bytes not of the plaintext", what, off, len(got))
		}
	}
	if err == nil {
		t.Errorf("%s at %d: Decrypt succeeded", what, off)
	}
	if _, err := readAllAt(bad, id); err == nil {
		t.Errorf("%s at %d: ReaderAt succeeded", what, off)
	}
}

func TestIsEncrypted(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"age-encryption.org/v1\n-> X25519", true},
		{"age-encryption.org/v1\n", true},
		{"age-", true},
		{"age", false},
		{"", false},
		{"PK\x03\x04", false},
		{"age-encryption.org/v2\n", false},
		{"-----BEGIN AGE ENCRYPTED FILE-----", false},
	}
	for _, tc := range tests {
		if got := IsEncrypted([]byte(tc.in)); got != tc.want {
			t.Errorf("IsEncrypted(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestBounds refuses a header past MaxHeaderSize or MaxStanzas, and
// Encrypt to more recipients than a header may hold.
func TestBounds(t *testing.T) {
	id := newIdentity(t)
	var many []Recipient
	for range MaxStanzas + 1 {
		many = append(many, id.Recipient())
	}
	if _, err := Encrypt(io.Discard, many...); err == nil {
		t.Error("Encrypt to MaxStanzas+1 recipients succeeded")
	}
	var b bytes.Buffer
	b.WriteString(intro)
	for range MaxStanzas + 1 {
		b.WriteString("-> grease\n\n")
	}
	if _, err := Decrypt(&b, id); err == nil || !bytes.Contains([]byte(err.Error()), []byte("stanzas")) {
		t.Errorf("Decrypt of %d stanzas: %v, want a stanza count error", MaxStanzas+1, err)
	}
	b.Reset()
	b.WriteString(intro + "-> grease")
	b.Write(bytes.Repeat([]byte(" a"), MaxHeaderSize))
	if _, err := Decrypt(&b, id); err == nil || !bytes.Contains([]byte(err.Error()), []byte("larger than")) {
		t.Errorf("Decrypt of a huge header: %v, want a size error", err)
	}
	if _, err := Decrypt(bytes.NewReader([]byte("PK\x03\x04")), id); !errors.Is(err, ErrNotAge) {
		t.Errorf("Decrypt of a zip: %v, want ErrNotAge", err)
	}
}
