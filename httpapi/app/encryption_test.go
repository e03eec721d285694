package app

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"strongbox/backup"
	"strongbox/backup/age"
)

func newAgeIdentity(t *testing.T) *age.X25519Identity {
	t.Helper()
	id, err := age.GenerateX25519Identity(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// plainMarks are bytes of a strongbox archive that show in a plain zip
// file (its entry names; deflate hides the records themselves) and the
// email of a record created below.
var plainMarks = []string{"manifest.json", "auth.journal", "settings.journal", "enc-user@example.com"}

// TestEncryptedBackups: with backups.encryption on, an archive created by
// POST /api/backups is an age file encrypted to the identity (and the
// extra recipients), with nothing of the plaintext in the backups folder;
// the settings answer shows the recipient, never the identity; an
// identity that cannot open the archive refuses its restore and its
// upload with a 400 before anything changes; the right one opens both,
// and a plain archive still uploads (stored encrypted).
func TestEncryptedBackups(t *testing.T) {
	t.Parallel()
	es := startEventsServer(t, nil)
	id, offline, wrong := newAgeIdentity(t), newAgeIdentity(t), newAgeIdentity(t)
	es.call("PATCH", "/api/settings", `{"backups":{"cronMaxKeep":3}}`, 200)
	plainSrc, err := backups{es.Server}.Create(t.Context(), "plain.zip")
	if err != nil {
		t.Fatal(err)
	}
	answer := es.call("PATCH", "/api/settings", fmt.Sprintf(`{"backups":{"encryption":{"enabled":true,"identity":%q,"recipients":[%q]}}}`,
		id.String(), offline.Recipient().String()), 200)
	if bytes.Contains(answer, []byte(id.String())) || !bytes.Contains(answer, []byte(`"recipient":"`+id.Recipient().String()+`"`)) {
		t.Errorf("PATCH /api/settings answer: %s; want the recipient, not the identity", answer)
	}
	if got := es.call("GET", "/api/settings", "", 200); bytes.Contains(got, []byte(id.String())) {
		t.Error("GET /api/settings holds the identity")
	}
	es.call("POST", "/api/collections/users/records", `{"email":"enc-user@example.com","password":"user-password-1","passwordConfirm":"user-password-1"}`, 200)
	es.call("POST", "/api/backups", `{"name":"enc.zip"}`, 204)

	folder := filepath.Join(es.dir, "backups")
	stored, err := os.ReadFile(filepath.Join(folder, "enc.zip"))
	if err != nil {
		t.Fatal(err)
	}
	if !age.IsEncrypted(stored) || bytes.HasPrefix(stored, []byte("PK")) {
		t.Fatalf("enc.zip starts %q, want the age intro", stored[:8])
	}
	plainZip, _ := os.ReadFile(filepath.Join(folder, plainSrc.Key))
	for _, m := range plainMarks[:3] {
		if !bytes.Contains(plainZip, []byte(m)) {
			t.Fatalf("a plain archive does not hold %q: the scan below proves nothing", m)
		}
	}
	scanFolder(t, folder, "enc.zip")
	// Both recipients open it, as `age -d -i` would.
	for _, k := range []*age.X25519Identity{id, offline} {
		r, err := age.Decrypt(bytes.NewReader(stored), k)
		if err != nil {
			t.Fatalf("Decrypt: %v", err)
		}
		if p, _ := io.ReadAll(r); !bytes.HasPrefix(p, []byte("PK\x03\x04")) || !bytes.Contains(p, []byte("manifest.json")) {
			t.Fatal("the plaintext is not the archive")
		}
	}
	// The restore's fetch and full check (stores opened) pass.
	if a, err := backup.FetchVerified(t.Context(), backups{es.Server}.Storage(), "enc.zip", backups{es.Server}.Limits()); err != nil {
		t.Fatalf("FetchVerified(enc.zip) = %v", err)
	} else {
		a.Close()
	}

	// The scheduled check reads them through the keys: the plain and the
	// encrypted archive are both good.
	if rep := backup.CheckAll(t.Context(), backups{es.Server}.Storage(), backups{es.Server}.Limits(), time.Now); rep.Checked != 2 || len(rep.Bad) != 0 || rep.Err != "" {
		t.Errorf("CheckAll with encryption on = %d good, bad %v, err %q; want 2 good", rep.Checked, rep.Bad, rep.Err)
	}

	// Another identity: restore and upload refused, nothing changed.
	es.call("PATCH", "/api/settings", fmt.Sprintf(`{"backups":{"encryption":{"identity":%q}}}`, wrong.String()), 200)
	rep := backup.CheckAll(t.Context(), backups{es.Server}.Storage(), backups{es.Server}.Limits(), time.Now)
	if len(rep.Bad) != 1 || rep.Bad[0].Key != "enc.zip" || !strings.Contains(rep.Bad[0].Reason, "encrypted (age) to recipients") {
		t.Errorf("CheckAll with another identity: bad %+v; want enc.zip, saying the identity cannot open it", rep.Bad)
	}
	body := es.call("POST", "/api/backups/enc.zip/restore", "", 400)
	if !strings.Contains(string(body), "encrypted (age)") {
		t.Errorf("restore with another identity: %s; want a message saying it is encrypted", body)
	}
	if code, b := uploadZip(t, es.testServer, es.token, "up_enc.zip", stored); code != 400 || !strings.Contains(string(b), "encrypted (age)") {
		t.Errorf("upload with another identity = %d %s, want 400 saying it is encrypted", code, b)
	}
	if _, err := os.Stat(filepath.Join(folder, "up_enc.zip")); err == nil {
		t.Error("a refused upload was stored")
	}
	es.call("GET", "/api/collections/users/records", "", 200) // still serving the old data

	// The identity back: the encrypted upload and a plain one are kept,
	// the plain one encrypted.
	es.call("PATCH", "/api/settings", fmt.Sprintf(`{"backups":{"encryption":{"identity":%q}}}`, id.String()), 200)
	for name, data := range map[string][]byte{"up_enc.zip": stored, "up_plain.zip": plainZip} {
		if code, b := uploadZip(t, es.testServer, es.token, name, data); code != 204 {
			t.Fatalf("upload %s = %d %s", name, code, b)
		}
	}
	scanFolder(t, folder, "enc.zip", "up_enc.zip", "up_plain.zip")
}

// scanFolder fails if an archive named is not an age file or holds any
// of plainMarks, or if the folder holds any other file with them (a
// temporary file left behind).
func scanFolder(t *testing.T, folder string, encrypted ...string) {
	t.Helper()
	ents, err := os.ReadDir(folder)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(folder, e.Name()))
		isEnc := false
		for _, n := range encrypted {
			isEnc = isEnc || n == e.Name()
		}
		if isEnc && !age.IsEncrypted(b) {
			t.Errorf("%s is not an age file", e.Name())
		}
		if !isEnc && strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left in the backups folder", e.Name())
		}
		for _, m := range plainMarks {
			if isEnc && bytes.Contains(b, []byte(m)) {
				t.Errorf("%s holds %q in plain", e.Name(), m)
			}
		}
	}
}
