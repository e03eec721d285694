package age

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
)

// Recipient encrypts a file key: it returns the stanzas that carry it.
type Recipient interface {
	Wrap(fileKey []byte) ([]*Stanza, error)
}

// Identity decrypts a file key from the stanzas of a header: it returns
// [ErrIncorrectIdentity] if none is for it, and any other error for a
// stanza of its type that is malformed (which fails the file).
type Identity interface {
	Unwrap(stanzas []*Stanza) ([]byte, error)
}

// ErrIncorrectIdentity: no identity given opens any stanza of the header.
var ErrIncorrectIdentity = errors.New("age: no identity matches any of the file's recipients")

// ErrNotAge: the input does not start with the age v1 intro line.
var ErrNotAge = errors.New("age: not an age v1 file")

// IsEncrypted reports whether prefix, the first bytes of a file, are the
// start of an age v1 file: the intro line, or as much of it as prefix
// holds (at least "age-").
func IsEncrypted(prefix []byte) bool {
	n := min(len(prefix), len(intro))
	return n >= 4 && bytes.Equal(prefix[:n], []byte(intro[:n]))
}

// Encrypt returns a writer whose input is encrypted to recipients and
// written to w: the header first, then the payload as it is written. The
// caller must Close it to write the last chunk (Close does not close w).
// An scrypt recipient must be the only one.
func Encrypt(w io.Writer, recipients ...Recipient) (io.WriteCloser, error) {
	if len(recipients) == 0 {
		return nil, errors.New("age: no recipients")
	}
	fileKey := make([]byte, fileKeySize)
	rand.Read(fileKey)
	var hdr bytes.Buffer
	hdr.WriteString(intro)
	n := 0
	for _, r := range recipients {
		stanzas, err := r.Wrap(fileKey)
		if err != nil {
			return nil, err
		}
		for _, s := range stanzas {
			if s.Type == "scrypt" && len(recipients) > 1 {
				return nil, errors.New("age: an scrypt recipient must be the only one")
			}
			s.marshal(&hdr)
			n++
		}
	}
	if n > MaxStanzas {
		return nil, fmt.Errorf("age: more than %d stanzas", MaxStanzas)
	}
	hdr.WriteString("---")
	mac := headerMAC(fileKey, hdr.Bytes())
	hdr.WriteString(" " + b64.EncodeToString(mac) + "\n")
	nonce := make([]byte, nonceSize)
	rand.Read(nonce)
	hdr.Write(nonce)
	if hdr.Len() > MaxHeaderSize+nonceSize {
		return nil, fmt.Errorf("age: header larger than %d bytes", MaxHeaderSize)
	}
	if _, err := w.Write(hdr.Bytes()); err != nil {
		return nil, err
	}
	return newWriter(hkdfKey(fileKey, nonce, "payload"), w)
}

// Decrypt reads the header of an age file from r, finds the file key
// with the first identity that opens a stanza, checks the header's MAC,
// and returns a reader of the plaintext. Each chunk is returned only once
// authenticated; a damaged or truncated payload makes a Read fail with
// [ErrPayload] (after the chunks before the damage). Errors: [ErrNotAge],
// [ErrIncorrectIdentity], a [*HeaderError], or the read's.
func Decrypt(r io.Reader, identities ...Identity) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 4096)
	key, err := openHeader(br, identities)
	if err != nil {
		return nil, err
	}
	return newReader(key, br)
}

// openHeader parses the header at br and returns the payload key, br
// left at the first chunk.
func openHeader(br *bufio.Reader, identities []Identity) ([]byte, error) {
	h, err := parseHeader(br)
	if err != nil {
		return nil, err
	}
	fileKey, err := unwrap(h, identities)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, nonceSize)
	if _, err := io.ReadFull(br, nonce); err != nil {
		return nil, headerErr("no payload nonce")
	}
	return hkdfKey(fileKey, nonce, "payload"), nil
}

// unwrap finds the file key and checks the header's MAC with it.
func unwrap(h *header, identities []Identity) ([]byte, error) {
	if len(identities) == 0 {
		return nil, errors.New("age: no identities")
	}
	for _, s := range h.stanzas {
		if s.Type == "scrypt" && len(h.stanzas) > 1 {
			return nil, headerErr("an scrypt stanza that is not alone")
		}
	}
	for _, id := range identities {
		fileKey, err := id.Unwrap(h.stanzas)
		if errors.Is(err, ErrIncorrectIdentity) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if len(fileKey) != fileKeySize {
			return nil, headerErr("a file key of %d bytes", len(fileKey))
		}
		if !hmac.Equal(headerMAC(fileKey, h.signed), h.mac) {
			return nil, headerErr("its MAC does not match")
		}
		return fileKey, nil
	}
	return nil, ErrIncorrectIdentity
}
