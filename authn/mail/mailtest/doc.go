// Package mailtest runs an SMTP sink on loopback for tests: a small SMTP
// server that keeps every mail it accepts, speaking plain SMTP, STARTTLS
// or implicit TLS with a certificate made in-process, AUTH PLAIN and
// LOGIN, and failing on demand (rejecting a recipient, or hanging at a
// chosen step so that a client's deadline must end the exchange).
package mailtest
