package totp

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base32"
	"encoding/binary"
	"errors"
	"hash"
	"net/url"
	"strings"
	"time"
)

// The parameters of the codes (RFC 6238 §4, §5.2; the defaults of the Key
// URI Format).
const (
	Digits     = 6
	Period     = 30 * time.Second
	SecretSize = 20 // bytes
	// Skew is how many steps before and after the current one Verify
	// accepts.
	Skew = 1
)

// Encoding is the base32 of secrets: RFC 4648's alphabet, without padding.
var Encoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// ErrSecret reports a secret that is not unpadded base32 of SecretSize
// bytes.
var ErrSecret = errors.New("totp: the secret is not base32 of 20 bytes")

// HOTP returns the RFC 4226 code of counter under key: HMAC-SHA1, dynamic
// truncation (§5.3), Digits decimal digits with leading zeros.
func HOTP(key []byte, counter uint64) string {
	return format(hotp(hmac.New(sha1.New, key), counter), Digits)
}

// hotp is HOTP's truncated value of counter with m, an HMAC-SHA1 of the
// key, which it resets first.
func hotp(m hash.Hash, counter uint64) uint32 {
	var msg [8]byte
	var sum [sha1.Size]byte
	binary.BigEndian.PutUint64(msg[:], counter)
	m.Reset()
	m.Write(msg[:])
	return truncate(m.Sum(sum[:0]))
}

// truncate is RFC 4226's DT: 31 bits read at the offset the last nibble
// names.
func truncate(sum []byte) uint32 {
	off := sum[len(sum)-1] & 0x0f
	return binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
}

// format writes the last n decimal digits of v, zero-padded.
func format(v uint32, n int) string { return string(appendDigits(make([]byte, 0, n), v, n)) }

// appendDigits appends the last n decimal digits of v, zero-padded, to b.
func appendDigits(b []byte, v uint32, n int) []byte {
	b = append(b, make([]byte, n)...)
	d := b[len(b)-n:]
	for i := n - 1; i >= 0; i-- {
		d[i] = byte('0' + v%10)
		v /= 10
	}
	return b
}

// Step returns the TOTP time step of t: the number of whole periods since
// the Unix epoch (RFC 6238 §4.2; T0 = 0). A time before the epoch is step 0.
func Step(t time.Time) int64 {
	u := t.Unix()
	if u < 0 {
		return 0
	}
	return u / int64(Period/time.Second)
}

// Code returns the TOTP code of key at t.
func Code(key []byte, t time.Time) string { return HOTP(key, uint64(Step(t))) }

// Verify reports whether code is key's code for a step within Skew of
// t's, and if so the latest such step that matched. Steps up to after are
// refused (after < 0 refuses none): the caller passes the last step it
// accepted, so that no code is accepted twice. code must be exactly
// Digits ASCII digits (ParseCode normalises what a user types).
func Verify(key []byte, code string, t time.Time, after int64) (step int64, ok bool) {
	if len(code) != Digits || !digits(code) {
		return 0, false
	}
	now := Step(t)
	matched := int64(-1)
	m := hmac.New(sha1.New, key)
	var buf [Digits]byte
	for s := now - Skew; s <= now+Skew; s++ {
		if s < 0 {
			continue
		}
		eq := subtle.ConstantTimeCompare(appendDigits(buf[:0], hotp(m, uint64(s)), Digits), []byte(code)) == 1
		if eq && s > after {
			matched = s
		}
	}
	return matched, matched >= 0
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// ParseCode returns the code in what a user typed: spaces and dashes
// dropped (apps show "123 456"), and ok only for Digits ASCII digits.
func ParseCode(s string) (string, bool) {
	if len(s) > 32 {
		return "", false
	}
	c := strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return -1
		}
		return r
	}, s)
	if len(c) != Digits || !digits(c) {
		return "", false
	}
	return c, true
}

// EncodeSecret returns key in unpadded base32, as apps read it.
func EncodeSecret(key []byte) string { return Encoding.EncodeToString(key) }

// DecodeSecret reads an unpadded base32 secret of SecretSize bytes;
// lower case and spaces are accepted, as people copy them.
func DecodeSecret(s string) ([]byte, error) {
	s = strings.ToUpper(strings.ReplaceAll(s, " ", ""))
	key, err := Encoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil || len(key) != SecretSize {
		return nil, ErrSecret
	}
	return key, nil
}

// URI returns the otpauth URI an app enrols key from, for account (an
// email) of issuer (the application's name): the Key URI Format's
// otpauth://totp/ISSUER:ACCOUNT?secret=…&issuer=….
func URI(issuer, account string, key []byte) string {
	label := pathEscape(account)
	if issuer != "" {
		label = pathEscape(issuer) + ":" + label
	}
	q := "secret=" + EncodeSecret(key)
	if issuer != "" {
		q += "&issuer=" + strings.ReplaceAll(url.QueryEscape(issuer), "+", "%20")
	}
	return "otpauth://totp/" + label + "?" + q
}

// pathEscape escapes s as one segment of the label: url.PathEscape, and
// the colon that would otherwise split issuer from account. (Query values
// are query-escaped with a space as %20, which every app reads, not +,
// which some show as it is.)
func pathEscape(s string) string {
	return strings.ReplaceAll(url.PathEscape(s), ":", "%3A")
}
