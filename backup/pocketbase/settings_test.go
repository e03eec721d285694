package pocketbase

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

const testKey = "0123456789abcdef0123456789abcdef" // 32 bytes, as PocketBase wants

// seal encrypts plain as PocketBase's settings encryption does:
// AES-256-GCM, the nonce first, standard base64.
func seal(t testing.TB, plain, key string) string {
	block, err := aes.NewCipher([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	nonce := []byte("fixed nonce!")[:gcm.NonceSize()]
	return base64.StdEncoding.EncodeToString(gcm.Seal(nonce, nonce, []byte(plain), nil))
}

// TestSettings reads the _params row "settings" plain, as a blob (as
// PocketBase writes it) and encrypted, with the right, no and a wrong key.
func TestSettings(t *testing.T) {
	const plain = `{"meta":{"appName":"Acme"},"smtp":{"password":"s3cret"}}`
	sealed := seal(t, plain, testKey)
	tests := []struct {
		name, value string // value is SQL
		opts        Options
		want        string
		err         string
	}{
		{name: "text", value: "'" + plain + "'", want: plain},
		{name: "blob", value: "CAST('" + plain + "' AS BLOB)", want: plain},
		{name: "encrypted", value: "'" + sealed + "'", opts: Options{EncryptionKey: testKey, EncryptionEnv: "PB_KEY"}, want: plain},
		{name: "encrypted, no key", value: "'" + sealed + "'", opts: Options{EncryptionEnv: "PB_KEY"},
			err: "the settings are encrypted: start the import with --encryption-env PB_KEY, the variable PocketBase's --encryptionEnv named"},
		{name: "encrypted, no key nor name", value: "'" + sealed + "'",
			err: "the settings are encrypted: start the import with --encryption-env NAME, the variable PocketBase's --encryptionEnv named"},
		{name: "encrypted, wrong key", value: "'" + sealed + "'", opts: Options{EncryptionKey: strings.ToUpper(testKey), EncryptionEnv: "PB_KEY"},
			err: "the settings are encrypted: the key in PB_KEY does not open them (authentication failed)"},
		{name: "encrypted, short key", value: "'" + sealed + "'", opts: Options{EncryptionKey: "short", EncryptionEnv: "PB_KEY"},
			err: "the settings are encrypted: the key in PB_KEY does not open them (the key is 5 bytes; PocketBase's keys are 32)"},
		{name: "garbage", value: "'not JSON, not base64'", opts: Options{EncryptionKey: testKey, EncryptionEnv: "PB_KEY"},
			err: "the settings are encrypted: the key in PB_KEY does not open them (the stored value is neither JSON nor base64)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := fixtureDir(t, "INSERT INTO _params VALUES ('other', '{}', '', ''), ('settings', "+tt.value+", '', '');", "-")
			d, err := Open(dir, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			got, err := d.Settings()
			if tt.err != "" {
				want := "pocketbase: " + dir + "/data.db: table _params, row \"settings\": " + tt.err
				if !errors.Is(err, ErrEncrypted) || err.Error() != want {
					t.Errorf("Settings() error:\n got %v\nwant %s", err, want)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Errorf("Settings() = %s, %v, want %s", got, err, tt.want)
			}
		})
	}
}

// FuzzDecodeSettings checks that decodeSettings never panics and opens
// what seal sealed.
func FuzzDecodeSettings(f *testing.F) {
	f.Add([]byte(`{"meta":{}}`), testKey)
	f.Add([]byte(seal(f, `{"a":1}`, testKey)), testKey)
	f.Add([]byte("AAAA"), testKey)
	f.Add([]byte(""), "")
	f.Fuzz(func(t *testing.T, value []byte, key string) {
		got, err := decodeSettings(value, key, "K")
		if err == nil && !isObject(got) {
			t.Fatalf("decodeSettings(%q) = %q, not an object", value, got)
		}
		if len(key) == 32 && isObject(value) {
			back, err := decodeSettings([]byte(seal(t, string(value), key)), key, "K")
			if err != nil || string(back) != string(value) {
				t.Fatalf("decodeSettings(seal(%q)) = %q, %v", value, back, err)
			}
		}
	})
}

// FuzzParseTime checks that parseTime never panics and reads back what it
// accepts in PocketBase's layout.
func FuzzParseTime(f *testing.F) {
	f.Add("2025-01-02 03:04:05.678Z")
	f.Add("2025-01-02T03:04:05Z")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		tm, err := parseTime(s)
		if err != nil || s == "" {
			return
		}
		if _, err := parseTime(tm.Format("2006-01-02 15:04:05.000Z")); err != nil {
			t.Fatalf("parseTime(%q) = %v, whose text does not parse: %v", s, tm, err)
		}
	})
}
