// Package mail sends strongbox's outgoing mail: the one-time passwords,
// verification, password-reset and email-change mails of record auth
// (interface §4.5, §5), through SMTP when the settings configure it and
// into <data dir>/mail/ as .eml files when they do not.
//
// It knows nothing of HTTP and nothing of the stores: a caller renders a
// Message (Render fills a template's placeholders) and hands it to a Sender.
//
// The pieces:
//
//   - Render and RenderTemplate fill {APP_NAME}, {APP_URL}, {OTP},
//     {OTP_ID}, {TOKEN} and {RECORD:field}, HTML-escaping every value in
//     bodies (PocketBase escapes only the record's).
//   - Message.Encode writes an RFC 5322 message (multipart/alternative,
//     text and HTML); Message.Validate refuses CR, LF or NUL in a header
//     value (ErrHeaderInjection) and anything that is not one address.
//   - SendSMTP delivers one message: plain, STARTTLS (whenever offered) or
//     implicit TLS, AUTH PLAIN or LOGIN (only over TLS or to loopback),
//     a deadline on every step; failures are *SMTPError, naming the step
//     and the server's reply, never the password.
//   - Outbox writes .eml files (temporary file, fsync, rename), keeping
//     the newest DefaultOutboxMax.
//   - Queue is the server's Sender: Send checks and enqueues, one worker
//     delivers through the Transport of the moment (SMTP or the outbox)
//     and logs failures; SendNow delivers at once for the test-email
//     route; Close drains within a bound.
//
// The SMTP sink of its tests is package strongbox/conformance/smtpsink.
package mail
