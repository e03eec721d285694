package backup

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"strongbox/backup/age"
)

// Keys are the age keys of a storage's archives ([WithKeys]): the one
// place where archives are encrypted and decrypted. With Recipients,
// every archive the storage creates, and every plain upload it stores,
// is an age v1 file encrypted to them (package strongbox/backup/age),
// so neither the backups folder nor a bucket ever holds its plaintext;
// the key stays the archive's name.zip. Every archive the storage
// fetches for a restore or receives as an upload is opened with
// Identities if it is an age file, and read as a zip file if not (an
// archive from before encryption was on): Verify, Extract and the
// check see the plaintext, read chunk by chunk, each chunk
// authenticated before use, and never written to disk. A download
// serves the stored bytes, encrypted as they are.
type Keys struct {
	// Identities open the encrypted archives.
	Identities []age.Identity
	// Recipients, if any, encrypt the archives written.
	Recipients []age.Recipient
}

// encrypting reports whether archives written are encrypted.
func (k Keys) encrypting() bool { return len(k.Recipients) > 0 }

// WithKeys returns st with the keys k, for the archives it writes and
// reads from now on; a storage that is not this package's is returned
// as it is.
func WithKeys(st Storage, k Keys) Storage {
	switch s := st.(type) {
	case dirStorage:
		s.keys = k
		return s
	case *s3Storage:
		c := *s
		c.keys = k
		return &c
	}
	return st
}

// keysOf returns the keys of st (none for a storage not this package's).
func keysOf(st Storage) Keys {
	switch s := st.(type) {
	case dirStorage:
		return s.keys
	case *s3Storage:
		return s.keys
	}
	return Keys{}
}

// IsEncrypted reports whether head, the first bytes of an archive, are
// those of an age file (at least "age-"; see [age.IsEncrypted]).
func IsEncrypted(head []byte) bool { return age.IsEncrypted(head) }

// seal returns the writer an archive is written through into out, and
// the function that ends it (the age file's last chunk), which the
// caller calls before out is complete; out itself if not encrypting.
func (k Keys) seal(out io.Writer) (io.Writer, func() error, error) {
	if !k.encrypting() {
		return out, func() error { return nil }, nil
	}
	w, err := age.Encrypt(out, k.Recipients...)
	if err != nil {
		return nil, nil, err
	}
	return w, w.Close, nil
}

// open returns the zip file held by r, of size bytes: r itself if it is
// not an age file, else its plaintext, opened with the identities. An
// encrypted archive they cannot open is an [*ArchiveError] saying why.
func (k Keys) open(r io.ReaderAt, size int64) (io.ReaderAt, int64, error) {
	head := make([]byte, 32)
	n, err := r.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return nil, 0, unpath(err)
	}
	if !age.IsEncrypted(head[:n]) {
		return r, size, nil
	}
	if len(k.Identities) == 0 {
		return nil, 0, invalid("it is encrypted (age), and no identity is set to open it (backups.encryption.identity)")
	}
	ra, err := age.NewReaderAt(r, size, k.Identities...)
	switch {
	case err == nil:
		return ra, ra.Size(), nil
	case errors.Is(err, age.ErrIncorrectIdentity):
		return nil, 0, invalid("it is encrypted (age) to recipients that the identity of backups.encryption is not among")
	}
	if _, ok := errors.AsType[*age.HeaderError](err); ok || errors.Is(err, age.ErrPayload) {
		return nil, 0, invalid("it is encrypted (age) and damaged: %s", err.Error())
	}
	return nil, 0, fmt.Errorf("read: %w", unpath(err))
}

// Sealer is the encryption of the continuous backup's objects (package
// strongbox/backup/stream's Options.Seal): an age file to the
// recipients, or nil when the keys encrypt nothing.
func (k Keys) Sealer() func(io.Writer) (io.WriteCloser, error) {
	if !k.encrypting() {
		return nil
	}
	return func(w io.Writer) (io.WriteCloser, error) { return age.Encrypt(w, k.Recipients...) }
}

// Opener is the decryption of the continuous backup's objects (package
// strongbox/backup/stream's RestoreOptions.Open): an age file is opened
// with the identities, anything else is read as it is (objects shipped
// before encryption was on). Each chunk is authenticated before it is
// read.
func (k Keys) Opener() func(io.Reader) (io.Reader, error) {
	return func(r io.Reader) (io.Reader, error) {
		br := bufio.NewReader(r)
		head, _ := br.Peek(len("age-encryption.org/v1\n"))
		if !age.IsEncrypted(head) {
			return br, nil
		}
		if len(k.Identities) == 0 {
			return nil, errors.New("it is encrypted (age), and no identity was given to open it (STRONGBOX_AGE_IDENTITY or --identity-file)")
		}
		d, err := age.Decrypt(br, k.Identities...)
		if errors.Is(err, age.ErrIncorrectIdentity) {
			return nil, errors.New("it is encrypted (age) to recipients that the identity given is not among")
		}
		return d, err
	}
}
