// Package smtpsink runs an SMTP sink: a small SMTP server that keeps every
// mail it accepts. It is the mailbox of the conformance suite's checks that
// read mail, and the SMTP server of the mail tests of the other packages.
//
// It speaks just enough ESMTP (RFC 5321) for one plain session: EHLO or
// HELO, MAIL, RCPT, DATA, RSET, NOOP, QUIT, and AUTH PLAIN or LOGIN (RFC
// 4954), whose credentials it accepts without looking at them unless
// Options.Username asks for these; STARTTLS or implicit TLS on demand, with
// a certificate made in-process that Sink.ClientTLS trusts. It fails on
// demand too (rejecting every recipient, or hanging at a chosen step so
// that a client's deadline must end the exchange).
//
// Each accepted message is parsed (net/mail, mime/multipart,
// quoted-printable and base64 parts) and queued: Sink.Wait takes the first
// mail of one recipient, Sink.Next the next mail of any. Everything is
// bounded: the size of a line, of a message and of the queue, the
// recipients of a message, the commands of a session, the sessions at
// once, and the time of each read and of a whole session.
//
// It imports only the standard library (not even testing: the helpers for
// tests take a TB), so that the conformance suite, which imports nothing
// else from the project, can use it.
package smtpsink
