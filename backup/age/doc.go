// Package age reads and writes age v1 files (the C2SP age format,
// https://c2sp.org/age), the encryption of strongbox's backup archives,
// so that Debian's `age -d -i key.txt` opens an archive and strongbox
// opens a file `age -r age1…` wrote. It is written from the spec, imports
// nothing of the project, and holds only what the archives need: X25519
// recipients and identities, scrypt (passphrase) recipients, and no
// armor, plugin or hybrid (ML-KEM) recipient.
//
// # Format
//
// A file is a text header and a binary payload:
//
//	age-encryption.org/v1
//	-> X25519 <ephemeral share, base64>
//	<the file key wrapped for one recipient, base64, 64 columns a line>
//	-> …one stanza per recipient…
//	--- <HMAC-SHA256 of the header up to "---", base64>
//	<16-byte nonce><payload>
//
// A random 16-byte file key is wrapped once per recipient. For X25519
// the stanza's argument is an ephemeral public key E, and the body the
// file key sealed with ChaCha20-Poly1305 (zero nonce) under
// HKDF-SHA256(X25519(e, R), salt E‖R, "age-encryption.org/v1/X25519"); a
// share whose shared secret is all zeros is refused. For scrypt, the key
// is scrypt(passphrase, "age-encryption.org/v1/scrypt"‖salt, 2^logN, 8, 1),
// and its stanza must be alone. The header's MAC key is HKDF(file key,
// "header"), the payload key HKDF(file key, salt nonce, "payload"). The
// payload is STREAM: 64 KiB chunks, each sealed under a nonce of an
// 11-byte counter and a last-chunk flag, so a truncation, a reordering or
// any flipped byte fails the chunk (stream.go).
//
// Base64 is the standard alphabet without padding and must be canonical;
// lines end in "\n" alone; types and arguments are printable ASCII. Keys
// are bech32 (BIP 173): "age1…" for a recipient, "AGE-SECRET-KEY-1…" for
// an identity, as age-keygen prints them.
//
// # Bounds and errors
//
// Nothing of a hostile file costs more than a bounded amount: a header is
// at most [MaxHeaderSize] bytes of at most [MaxStanzas] stanzas, checked
// as it is read; an scrypt work factor above [MaxScryptWorkFactor] is
// refused before any work; a chunk is at most 64 KiB. No input panics
// (FuzzParseHeader, FuzzDecrypt). Errors: [ErrNotAge] (no intro line),
// [ErrIncorrectIdentity] (no identity opens a stanza), [*HeaderError] (a
// malformed header, or a MAC that does not match), [ErrPayload] (a chunk
// that does not authenticate). An error never repeats a secret key.
//
// # Streams and random access
//
// [Encrypt] returns a writer that seals as it goes and [Decrypt] a
// reader that returns each chunk only once authenticated. [NewReaderAt]
// opens a file at random offsets instead (a zip archive's directory is at
// its end): it authenticates the last chunk first, so its Size is the
// plaintext's, and each ReadAt decrypts only the chunks it covers.
//
// ChaCha20-Poly1305 (aead.go) and ChaCha20 and Poly1305 themselves
// (chacha.go) are written here, the portable RFC 8439 algorithms:
// x/crypto's packages would add golang.org/x/sys to the module, and with
// it `go mod vendor` would fail. ChaCha20's block is unrolled over local
// words and XORs 8 bytes at a time; Poly1305 has three 64-bit limbs
// (math/bits); neither allocates. They are checked against RFC 8439's
// vectors (Appendix A.3's Poly1305 corner cases among them), against a
// plain reference (ref_test.go: the block function a byte at a time,
// Poly1305 in math/big) by the differential FuzzAEAD, the C2SP test kit
// (testdata/testkit), and the real age binary (STRONGBOX_AGE) in both
// directions. HKDF is the standard library's.
//
// # Cost
//
// In MB per CPU second (the test binary's user and system time for a fixed
// number of 64 KiB operations, which a machine loaded by other work
// disturbs less than the wall clock), on this project's 2-core test
// machine, three runs each: ChaCha20 371–401 (237–264 before, each block
// written to a buffer and then XORed; x/crypto's portable Go 378–437),
// Poly1305 1,771–1,820 (701–758 with 26-bit limbs before; x/crypto's portable Go
// 1,618–1,796, its amd64 assembly 2,260–2,427), and the two sealing a
// 64 KiB chunk 349–400 (175–213 before; x/crypto's portable Go 301–400,
// its amd64 assembly, which the module cannot take, 1,638–2,048)
// (BenchmarkChaCha20, BenchmarkPoly1305, BenchmarkSeal64K). In
// `strongbox backup create` of 1,000,000 seeded logs, a 60 MB archive,
// perf's cpu-clock samples put this package at 0.16–0.19 CPU-s, 3.3–3.6%
// of the create (0.28–0.31 s, 6.0–6.5%, before).
package age
