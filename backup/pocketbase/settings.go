package pocketbase

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// Settings returns the settings as PocketBase stores them (decrypted with
// Options.EncryptionKey when they are encrypted), nil when none are
// stored: the sections its settings API shows (meta, smtp, backups, s3,
// logs, rateLimits, trustedProxy, batch), with the secrets that API masks
// (smtp.password, s3.secret, backups.s3.secret).
func (d *Data) Settings() (json.RawMessage, error) {
	var value []byte
	found := false
	err := d.each(d.db, "data.db", "_params", func(dec *decoder) error {
		// PocketBase keeps its settings in the _params row "settings".
		if dec.text("id") != "settings" || dec.err != nil {
			return dec.err
		}
		found = true
		value = []byte(dec.text("value"))
		return dec.err
	})
	if err != nil || !found {
		return nil, err
	}
	settings, err := decodeSettings(value, d.opts.EncryptionKey, d.opts.EncryptionEnv)
	if err != nil {
		return nil, fmt.Errorf("pocketbase: %s: table _params, row \"settings\": %w", d.name("data.db"), err)
	}
	return settings, nil
}

// decodeSettings returns the settings object of a _params value: the JSON
// object itself, or, when PocketBase ran with --encryptionEnv, that object
// encrypted with AES-256-GCM (the nonce first), in standard base64.
func decodeSettings(value []byte, key, env string) (json.RawMessage, error) {
	value = bytes.TrimSpace(value)
	if isObject(value) {
		return json.RawMessage(value), nil
	}
	if env == "" {
		env = "NAME"
	}
	if key == "" {
		return nil, fmt.Errorf("%w: start the import with --encryption-env %s, the variable PocketBase's --encryptionEnv named", ErrEncrypted, env)
	}
	plain, err := decrypt(value, []byte(key))
	if err != nil {
		return nil, fmt.Errorf("%w: the key in %s does not open them (%v)", ErrEncrypted, env, err)
	}
	if !isObject(plain) {
		return nil, fmt.Errorf("%w: the key in %s opens them, but they are not a JSON object", ErrEncrypted, env)
	}
	return json.RawMessage(plain), nil
}

// isObject reports whether b is a JSON object.
func isObject(b []byte) bool {
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

// decrypt opens an AES-GCM sealed value, base64(nonce || ciphertext),
// as PocketBase's settings encryption seals it.
func decrypt(value, key []byte) ([]byte, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("the key is %d bytes; PocketBase's keys are 32", len(key))
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	sealed := make([]byte, base64.StdEncoding.DecodedLen(len(value)))
	n, err := base64.StdEncoding.Decode(sealed, value)
	if err != nil {
		return nil, errors.New("the stored value is neither JSON nor base64")
	}
	sealed = sealed[:n]
	if len(sealed) < gcm.NonceSize()+gcm.Overhead() {
		return nil, errors.New("the stored value is too short to be sealed")
	}
	nonce, box := sealed[:gcm.NonceSize()], sealed[gcm.NonceSize():]
	plain, err := gcm.Open(nil, nonce, box, nil)
	if err != nil {
		return nil, errors.New("authentication failed")
	}
	return plain, nil
}
