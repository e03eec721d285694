package backup_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"strongbox/backup"
	"strongbox/backup/age"
)

// secret is a file's content that must never appear in a stored archive
// while encryption is on. Deflate hides it in a plain archive too, so
// the scans also look for the entry names, which a plain zip file holds
// as they are (checked below).
const secret = "alice@example.com:token-secret-2f1c9a7d44e0b3c1"

// plainText reports whether b shows anything of a plain archive.
func plainText(b []byte) bool {
	return bytes.Contains(b, []byte("alice@example.com")) || bytes.Contains(b, []byte("manifest.json")) ||
		bytes.Contains(b, []byte("auth.journal"))
}

func newKeys(t *testing.T) (backup.Keys, *age.X25519Identity) {
	t.Helper()
	id, err := age.GenerateX25519Identity(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return backup.Keys{Identities: []age.Identity{id}, Recipients: []age.Recipient{id.Recipient()}}, id
}

// storages returns the folder and a bucket storage, each with keys.
func storages(t *testing.T, k backup.Keys) map[string]struct {
	st     backup.Storage
	stored func(key string) []byte
} {
	t.Helper()
	path := filepath.Join(t.TempDir(), "backups")
	d, err := backup.OpenDir(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	f := newS3Fixture(t)
	return map[string]struct {
		st     backup.Storage
		stored func(key string) []byte
	}{
		"folder": {backup.WithKeys(d.Storage(), k), func(key string) []byte {
			b, err := os.ReadFile(filepath.Join(path, key))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}},
		"bucket": {backup.WithKeys(f.st, k), func(key string) []byte {
			rc, _, err := f.bucket.Get(t.Context(), key, 0, -1)
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			b, _ := io.ReadAll(rc)
			return b
		}},
	}
}

// TestKeysCreateFetch: with keys, a created archive is stored as an age
// file holding no plaintext, and fetches, verifies and extracts.
func TestKeysCreateFetch(t *testing.T) {
	k, id := newKeys(t)
	for name, s := range storages(t, k) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			if _, err := s.st.Create(ctx, "enc.zip", oneFile("auth.journal", secret), backup.Meta{}); err != nil {
				t.Fatal(err)
			}
			stored := s.stored("enc.zip")
			if !age.IsEncrypted(stored) || bytes.HasPrefix(stored, []byte("PK")) {
				t.Fatalf("stored archive starts %q, want the age intro", stored[:min(len(stored), 22)])
			}
			if plainText(stored) {
				t.Fatal("stored archive holds plaintext")
			}
			// The real age opens it as `age -d -i` would (same package).
			r, err := age.Decrypt(bytes.NewReader(stored), id)
			if err != nil {
				t.Fatal(err)
			}
			if plain, _ := io.ReadAll(r); !bytes.HasPrefix(plain, []byte("PK\x03\x04")) {
				t.Fatal("plaintext is not a zip file")
			}
			a, err := backup.FetchVerified(ctx, s.st, "enc.zip", backup.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			dst := filepath.Join(t.TempDir(), "out")
			if err := a.Extract(dst, backup.Limits{}); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(filepath.Join(dst, "auth.journal")); string(got) != secret {
				t.Errorf("extracted %q, want the secret", got)
			}
		})
	}
}

// TestKeysRefuse: an encrypted archive that the keys cannot open, or
// that is damaged, is an ArchiveError at fetch, naming why.
func TestKeysRefuse(t *testing.T) {
	k, _ := newKeys(t)
	other, _ := newKeys(t)
	for name, s := range storages(t, k) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			if _, err := s.st.Create(ctx, "enc.zip", oneFile("auth.journal", secret), backup.Meta{}); err != nil {
				t.Fatal(err)
			}
			tests := []struct {
				name string
				keys backup.Keys
				want string
			}{
				{"no identity", backup.Keys{}, "no identity is set"},
				{"another identity", backup.Keys{Identities: other.Identities}, "not among"},
			}
			for _, tc := range tests {
				_, err := backup.FetchVerified(ctx, backup.WithKeys(s.st, tc.keys), "enc.zip", backup.Limits{})
				ae, ok := errors.AsType[*backup.ArchiveError](err)
				if !ok || !strings.Contains(ae.Reason, tc.want) {
					t.Errorf("%s: FetchVerified = %v, want an ArchiveError saying %q", tc.name, err, tc.want)
				}
			}
		})
	}
}

// TestKeysUpload: an upload may be plain or encrypted; with recipients,
// a plain one is stored encrypted; an encrypted upload the identity
// cannot open, or a damaged one, is refused and leaves nothing.
func TestKeysUpload(t *testing.T) {
	k, _ := newKeys(t)
	other, _ := newKeys(t)
	plain := archiveOf(t, secret)
	if !plainText(plain) {
		t.Fatal("the secret does not show in a plain archive: the scans below prove nothing")
	}
	sealed := func(keys backup.Keys) []byte {
		var b bytes.Buffer
		w, _ := age.Encrypt(&b, keys.Recipients...)
		w.Write(plain)
		w.Close()
		return b.Bytes()
	}
	mine, theirs := sealed(k), sealed(other)
	damaged := bytes.Clone(mine)
	damaged[len(damaged)-3] ^= 1
	for name, s := range storages(t, k) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			for key, body := range map[string][]byte{"plain.zip": plain, "mine.zip": mine} {
				if _, err := s.st.Put(ctx, key, bytes.NewReader(body), 1<<20, backup.Limits{}); err != nil {
					t.Fatalf("Put(%s) = %v", key, err)
				}
				if got := s.stored(key); !age.IsEncrypted(got) || plainText(got) {
					t.Errorf("%s stored in plain", key)
				}
				a, err := backup.FetchVerified(ctx, s.st, key, backup.Limits{})
				if err != nil {
					t.Fatalf("FetchVerified(%s) = %v", key, err)
				}
				a.Close()
			}
			for key, body := range map[string][]byte{"theirs.zip": theirs, "damaged.zip": damaged} {
				_, err := s.st.Put(ctx, key, bytes.NewReader(body), 1<<20, backup.Limits{})
				if !errors.Is(err, backup.ErrInvalidArchive) {
					t.Errorf("Put(%s) = %v, want ErrInvalidArchive", key, err)
				}
				if ok, _ := s.st.Exists(ctx, key); ok {
					t.Errorf("%s stored after a refusal", key)
				}
			}
		})
	}
}

// TestKeysPlainArchives: without recipients nothing is encrypted, and a
// plain archive still opens with keys (one from before encryption).
func TestKeysPlainArchives(t *testing.T) {
	k, _ := newKeys(t)
	for name, s := range storages(t, backup.Keys{}) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			if _, err := s.st.Create(ctx, "p.zip", oneFile("auth.journal", secret), backup.Meta{}); err != nil {
				t.Fatal(err)
			}
			if got := s.stored("p.zip"); !bytes.HasPrefix(got, []byte("PK\x03\x04")) {
				t.Fatal("archive without recipients is not a plain zip")
			}
			a, err := backup.FetchVerified(ctx, backup.WithKeys(s.st, k), "p.zip", backup.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			a.Close()
		})
	}
}
