package age

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// vector is one file of the C2SP test kit (testdata/testkit/README.md).
type vector struct {
	name       string
	expect     string // success, no match, header failure, HMAC failure, payload failure
	payload    string // SHA-256 of the plaintext, in hex
	identities []Identity
	file       []byte
}

func readVectors(tb testing.TB) []vector {
	tb.Helper()
	paths, err := filepath.Glob("testdata/testkit/*")
	if err != nil {
		tb.Fatal(err)
	}
	var out []vector
	for _, p := range paths {
		if b := filepath.Base(p); b == "LICENSE" || b == "README.md" {
			continue
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, parseVector(tb, filepath.Base(p), raw))
	}
	if len(out) < 80 {
		tb.Fatalf("%d test kit vectors, want the 92 kept", len(out))
	}
	return out
}

func parseVector(tb testing.TB, name string, raw []byte) vector {
	v := vector{name: name}
	br := bufio.NewReader(bytes.NewReader(raw))
	compressed := false
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			tb.Fatalf("%s: no blank line", name)
		}
		l = strings.TrimSuffix(l, "\n")
		if l == "" {
			break
		}
		k, val, _ := strings.Cut(l, ": ")
		switch k {
		case "expect":
			v.expect = val
		case "payload":
			v.payload = val
		case "identity":
			id, err := ParseX25519Identity(val)
			if err != nil {
				tb.Fatalf("%s: %v", name, err)
			}
			v.identities = append(v.identities, id)
		case "passphrase":
			v.identities = append(v.identities, NewScryptIdentity(val))
		case "compressed":
			compressed = val == "zlib"
		}
	}
	body, _ := io.ReadAll(br)
	if compressed {
		zr, err := zlib.NewReader(bytes.NewReader(body))
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		if body, err = io.ReadAll(zr); err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
	}
	v.file = body
	return v
}

// outcome names what decrypting a file did in the test kit's words.
func outcome(hdrErr, readErr error) string {
	switch {
	case errors.Is(hdrErr, ErrIncorrectIdentity):
		return "no match"
	case hdrErr != nil:
		if he, ok := errors.AsType[*HeaderError](hdrErr); ok && strings.Contains(he.Reason, "MAC does not match") {
			return "HMAC failure"
		}
		return "header failure"
	case readErr != nil:
		return "payload failure"
	}
	return "success"
}

// TestTestkit decrypts every vector of the C2SP age test kit, with the
// streaming reader and with the ReaderAt, and checks the outcome and the
// plaintext's SHA-256.
func TestTestkit(t *testing.T) {
	for _, v := range readVectors(t) {
		t.Run(v.name, func(t *testing.T) {
			var plain []byte
			r, hdrErr := Decrypt(bytes.NewReader(v.file), v.identities...)
			var readErr error
			if hdrErr == nil {
				plain, readErr = io.ReadAll(r)
			}
			if got := outcome(hdrErr, readErr); got != v.expect {
				t.Fatalf("Decrypt: %s (%v, %v), want %s", got, hdrErr, readErr, v.expect)
			}
			if v.expect == "success" {
				if sum := sha256.Sum256(plain); hex.EncodeToString(sum[:]) != v.payload {
					t.Errorf("Decrypt: payload SHA-256 %x, want %s", sum, v.payload)
				}
			}
			ra, err := NewReaderAt(bytes.NewReader(v.file), int64(len(v.file)), v.identities...)
			var got []byte
			if err == nil {
				got, err = io.ReadAll(io.NewSectionReader(ra, 0, ra.Size()))
			}
			switch {
			case v.expect == "success" && (err != nil || !bytes.Equal(got, plain)):
				t.Errorf("ReaderAt: %v, or a plaintext unlike Decrypt's", err)
			case v.expect != "success" && err == nil:
				t.Errorf("ReaderAt: no error, want %s", v.expect)
			}
		})
	}
}
