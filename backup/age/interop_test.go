package age

import (
	"bytes"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// ageBinary is the real age command named by STRONGBOX_AGE (Debian's
// package age: /usr/bin/age), or the test is skipped.
func ageBinary(t *testing.T) string {
	t.Helper()
	p := os.Getenv("STRONGBOX_AGE")
	if p == "" {
		t.Skip("STRONGBOX_AGE is not set (the age binary, Debian package age: STRONGBOX_AGE=/usr/bin/age)")
	}
	return p
}

func runAge(t *testing.T, bin string, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("age %v: %v: %s", args, err, errb.String())
	}
	return out.Bytes()
}

// TestAgeInterop checks both directions against the real age: what we
// encrypt, `age -d -i key.txt` decrypts; what `age -r age1…` and
// `age -e -i key.txt` encrypt, we decrypt, at every size of sizes
// (empty, and exact multiples of 64 KiB among them).
func TestAgeInterop(t *testing.T) {
	bin := ageBinary(t)
	id := newIdentity(t)
	keyFile := filepath.Join(t.TempDir(), "key.txt")
	if err := os.WriteFile(keyFile, []byte("# test key\n"+id.String()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := newIdentity(t)
	for _, n := range sizes {
		plain := make([]byte, n)
		rand.Read(plain)
		ours := encrypt(t, plain, other.Recipient(), id.Recipient())
		if got := runAge(t, bin, ours, "-d", "-i", keyFile); !bytes.Equal(got, plain) {
			t.Errorf("age -d of our %d-byte file: %d bytes, not the plaintext", n, len(got))
		}
		for _, args := range [][]string{{"-r", id.Recipient().String()}, {"-e", "-i", keyFile}} {
			theirs := runAge(t, bin, plain, args...)
			if got, err := decryptAll(theirs, id); err != nil || !bytes.Equal(got, plain) {
				t.Errorf("Decrypt of age %v's %d-byte file: %v", args, n, err)
			}
			if got, err := readAllAt(theirs, id); err != nil || !bytes.Equal(got, plain) {
				t.Errorf("ReaderAt of age %v's %d-byte file: %v", args, n, err)
			}
		}
	}
}
