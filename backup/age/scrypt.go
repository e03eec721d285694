package age

import (
	"crypto/rand"
	"fmt"
	"strconv"

	"golang.org/x/crypto/scrypt"
)

// The scrypt recipient type: a passphrase. Its stanza must be the only
// one of its header (so that a passphrase-encrypted file is known to be
// readable by no one else), and its work factor is bounded on decrypt.
const (
	scryptLabel    = "age-encryption.org/v1/scrypt"
	scryptSaltSize = 16
	// DefaultScryptWorkFactor is the log2 of scrypt's N that
	// ScryptRecipient uses: age's own default, about a second.
	DefaultScryptWorkFactor = 18
	// MaxScryptWorkFactor bounds the work factor an identity accepts
	// unless told otherwise: 2^22 is 4 GiB·r of work, a few seconds.
	MaxScryptWorkFactor = 22
)

// ScryptRecipient encrypts to a passphrase.
type ScryptRecipient struct {
	passphrase []byte
	workFactor int
}

// NewScryptRecipient returns a recipient for passphrase at
// [DefaultScryptWorkFactor].
func NewScryptRecipient(passphrase string) *ScryptRecipient {
	return &ScryptRecipient{passphrase: []byte(passphrase), workFactor: DefaultScryptWorkFactor}
}

// SetWorkFactor sets the log2 of scrypt's N (1 to 30), for tests.
func (r *ScryptRecipient) SetWorkFactor(logN int) { r.workFactor = logN }

// Wrap seals the file key under scrypt(passphrase, label || salt).
func (r *ScryptRecipient) Wrap(fileKey []byte) ([]*Stanza, error) {
	if r.workFactor < 1 || r.workFactor > 30 {
		return nil, fmt.Errorf("age: scrypt work factor %d out of range", r.workFactor)
	}
	salt := make([]byte, scryptSaltSize)
	rand.Read(salt)
	key, err := scrypt.Key(r.passphrase, append([]byte(scryptLabel), salt...), 1<<r.workFactor, 8, 1, 32)
	if err != nil {
		return nil, fmt.Errorf("age: scrypt: %w", err)
	}
	body, err := aeadSeal(key, fileKey)
	if err != nil {
		return nil, err
	}
	args := []string{b64.EncodeToString(salt), strconv.Itoa(r.workFactor)}
	return []*Stanza{{Type: "scrypt", Args: args, Body: body}}, nil
}

// ScryptIdentity decrypts what was encrypted to a passphrase.
type ScryptIdentity struct {
	passphrase    []byte
	maxWorkFactor int
}

// NewScryptIdentity returns an identity for passphrase that accepts work
// factors up to [MaxScryptWorkFactor].
func NewScryptIdentity(passphrase string) *ScryptIdentity {
	return &ScryptIdentity{passphrase: []byte(passphrase), maxWorkFactor: MaxScryptWorkFactor}
}

// Unwrap opens the scrypt stanza: [ErrIncorrectIdentity] if there is none
// or the passphrase is wrong; an error if it is not alone, malformed, or
// asks for more work than allowed.
func (i *ScryptIdentity) Unwrap(stanzas []*Stanza) ([]byte, error) {
	var s *Stanza
	for _, st := range stanzas {
		if st.Type == "scrypt" {
			s = st
		}
	}
	if s == nil {
		return nil, ErrIncorrectIdentity
	}
	if len(stanzas) != 1 {
		return nil, headerErr("an scrypt stanza that is not alone")
	}
	if len(s.Args) != 2 {
		return nil, headerErr("an scrypt stanza with %d arguments", len(s.Args))
	}
	salt, err := b64.DecodeString(s.Args[0])
	if err != nil || len(salt) != scryptSaltSize {
		return nil, headerErr("an scrypt stanza with a malformed salt")
	}
	logN, ok := workFactor(s.Args[1])
	if !ok {
		return nil, headerErr("an scrypt stanza with a malformed work factor")
	}
	if logN > i.maxWorkFactor {
		return nil, headerErr("an scrypt work factor of %d, more than %d", logN, i.maxWorkFactor)
	}
	if len(s.Body) != wrappedKeySize {
		return nil, headerErr("an scrypt stanza with a body of %d bytes", len(s.Body))
	}
	key, err := scrypt.Key(i.passphrase, append([]byte(scryptLabel), salt...), 1<<logN, 8, 1, 32)
	if err != nil {
		return nil, fmt.Errorf("age: scrypt: %w", err)
	}
	fileKey, err := aeadOpen(key, s.Body)
	if err != nil {
		return nil, ErrIncorrectIdentity
	}
	return fileKey, nil
}

// workFactor parses a work factor: decimal digits, no sign and no leading
// zero, 1 to 30 (beyond, N overflows scrypt's bounds anyway).
func workFactor(s string) (int, bool) {
	if s == "" || len(s) > 2 || s[0] == '0' {
		return 0, false
	}
	n := 0
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, n >= 1 && n <= 30
}
