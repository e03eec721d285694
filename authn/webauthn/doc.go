// Package webauthn verifies WebAuthn Level 3 ceremonies for a relying
// party: registration (attestation) and authentication (assertion). It
// knows nothing of HTTP, records or storage; its caller issues the
// challenges, keeps the credentials and checks their counters.
//
// # CBOR
//
// Decode reads the subset of CBOR (RFC 8949) that WebAuthn needs:
// integers that fit an int64, byte and text strings (text valid UTF-8),
// arrays, maps keyed by integers or text with no key twice, false, true,
// null and undefined; definite lengths only, at most MaxDepth (16) levels.
// Tags, floats and indefinite lengths are refused. Every declared length
// is compared with the bytes left before anything is allocated (an item
// takes at least a byte, a map pair two), so a short input cannot declare
// a huge array; strings alias the input.
//
// # Keys and signatures
//
// ParseKey reads a COSE_Key (RFC 9052 §7, RFC 9053): EC2 P-256 with ES256
// (-7; the point is checked to be on the curve), OKP Ed25519 with EdDSA
// (-8), RSA with RS256 (-257; 2048 to 4096 bits, odd exponent ≥ 3). The
// alg label is required. ES256 signatures are ASN.1 DER, as
// authenticators produce them.
//
// # Authenticator data and attestation
//
// ParseAuthData reads the RP ID hash, the flags (UP, UV, BE, BS, AT, ED;
// BS without BE is refused), the counter, the attested credential data
// (credential id of 1 to 1023 bytes, the COSE key) and the extensions map,
// and refuses bytes left over. ParseAttestation reads the attestation
// object (at most 16 KiB). The formats are "none" (an empty statement)
// and "packed" (§8.2): self attestation is verified with the credential's
// own key and alg; with x5c, the signature is verified with the first
// certificate's key, which must be a version 3 leaf, but the chain is not
// verified against any trust anchor (the relying party asks for
// attestation "none" and trusts no authenticator model more than another).
// Other formats (tpm, android-key, apple, fido-u2f) are refused.
//
// # Ceremonies
//
// NewRelyingParty derives the RP ID (the host of the app URL, which must
// be a domain name: browsers refuse an IP address) and the one accepted
// origin. VerifyRegistration follows §7.1 and VerifyAssertion §7.2: the
// client data (at most 4 KiB: type, the challenge compared in constant
// time after base64url decoding, the exact origin, crossOrigin false),
// the RP ID hash, UP always and UV when required, then the attestation
// statement or the signature over authenticatorData ‖
// SHA-256(clientDataJSON). CounterOK is step 22: a counter must grow
// unless both it and the stored one are zero.
//
// The JSON forms (CreationOptions, RequestOptions, RegistrationResponse,
// AuthenticationResponse) are Level 3's, with byte strings as unpadded
// base64url (Bytes), so that a browser's
// PublicKeyCredential.parseCreationOptionsFromJSON and toJSON() speak them
// as they are. Responses are at most 32 KiB and a user handle 64 bytes.
//
// Cost of one assertion's verification (client data, authenticator data,
// the COSE key parsed, the signature; go test ./authn/webauthn -run '^$'
// -bench VerifyAssertion -benchtime 3000x -count 5), best of five on a
// shared 2-vCPU machine under a load average of 12, so an upper bound:
// ES256 120 µs (2.9 KB, 39 allocations), EdDSA 131 µs (1.7 KB, 21), RS256
// 2048 bits 58 µs (3.4 KB, 31). A sign-in adds one journal write (the
// counter), whose fsync costs more than any of them.
//
// Package strongbox/authn/webauthntest is a software authenticator for
// tests.
package webauthn
