package authn

import (
	"crypto/rand"
	"fmt"
	"io"
	"strings"
	"sync"

	"strongbox/authn/validation"
)

// Alphabets of generated strings.
const (
	idAlphabet     = "abcdefghijklmnopqrstuvwxyz0123456789"
	secretAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
)

// IDLength is the length of record ids.
const IDLength = 15

// Random draws uniformly distributed strings from an injected source of
// randomness (crypto/rand in production, a fixed stream in tests).
type Random struct {
	mu  sync.Mutex
	src io.Reader
	buf [64]byte
}

// NewRandom returns a Random reading from src, or from crypto/rand if src is nil.
func NewRandom(src io.Reader) *Random {
	if src == nil {
		src = rand.Reader
	}
	return &Random{src: src}
}

// String returns n characters drawn uniformly from alphabet (at most 256
// characters long), by rejection sampling so that no character is favoured.
func (r *Random) String(alphabet string, n int) (string, error) {
	limit := 256 - 256%len(alphabet)
	out := make([]byte, 0, n)
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(out) < n {
		if _, err := io.ReadFull(r.src, r.buf[:]); err != nil {
			return "", fmt.Errorf("authn: read randomness: %w", err)
		}
		for _, b := range r.buf {
			if int(b) < limit && len(out) < n {
				out = append(out, alphabet[int(b)%len(alphabet)])
			}
		}
	}
	return string(out), nil
}

// ID returns a new 15-character [a-z0-9] id.
func (r *Random) ID() (string, error) { return r.String(idAlphabet, IDLength) }

// Password returns a random password of n letters and digits.
func (r *Random) Password(n int) (string, error) { return r.String(secretAlphabet, n) }

// ValidID reports whether s is a well-formed record id.
func ValidID(s string) bool {
	if len(s) != IDLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune(idAlphabet, rune(s[i])) {
			return false
		}
	}
	return true
}

// ValidEmail reports whether s can be the email of an auth record: an
// address in the one email format (validation.Email) of at most 255 bytes,
// the length of the record's email field.
func ValidEmail(s string) bool { return len(s) <= 255 && validation.Email(s) }

// Bytes returns n random bytes.
func (r *Random) Bytes(n int) ([]byte, error) {
	b := make([]byte, n)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := io.ReadFull(r.src, b); err != nil {
		return nil, fmt.Errorf("authn: read randomness: %w", err)
	}
	return b, nil
}
