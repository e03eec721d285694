// Package mail sends strongbox's outgoing mail: the one-time passwords,
// verification, password-reset and email-change mails of record auth
// (interface §4.5, §5), and the new-location login alerts, through SMTP
// when the settings configure it and into <data dir>/mail/ as .eml files
// when they do not.
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
//     route, naming the outbox file when SMTP is off; Close drains
//     within a bound.
//
// # Templates
//
// Each auth collection holds its templates (verificationTemplate,
// resetPasswordTemplate, confirmEmailChangeTemplate, otp.emailTemplate,
// authAlert.emailTemplate, each {subject, body}); a new collection gets
// PocketBase's subjects and bodies ("Verify your {APP_NAME} email", "Reset
// your {APP_NAME} password", "Confirm your {APP_NAME} new email address",
// "OTP for {APP_NAME}", "Login from a new location"), and a PATCH of the
// collection changes them. The body is HTML. Placeholders: {APP_NAME} and
// {APP_URL} (the settings' meta.appName and meta.appURL), {TOKEN} (the
// links: {APP_URL}/_/#/auth/confirm-verification/{TOKEN} and so on),
// {OTP} and {OTP_ID} (the OTP mail), and {RECORD:field} for each field of
// the record that is not hidden. In a body, every value is HTML-escaped
// (&, <, >, ", '), so that none can break out of the text or of a quoted
// attribute such as href="{APP_URL}/…" (PocketBase escapes only the record
// values). A subject is plain text and escapes nothing (PocketBase escapes
// record values there too, showing &amp; in a mail client); every value is
// kept on one line in it (line breaks become spaces). Values are put in
// one pass, so a value holding a placeholder stays as it is; unknown
// placeholders stay as written.
//
// Every mail is RFC 5322: From is meta.senderName <meta.senderAddress>
// (Support <support@example.com> by default), then To, Subject, Date,
// Message-ID, and a multipart/alternative body with a text part (derived
// from the HTML) and the HTML part; ASCII parts are sent as they are
// (7bit), others quoted-printable. A mail whose subject, sender name or
// address holds a CR, LF or NUL is refused whole: no header can be
// injected.
//
// # Transport
//
// The settings' smtp section (enabled, host, port (587), username,
// password, authMethod, tls, localName; validated by package
// strongbox/httpapi/settings) says how mail goes out; a change applies
// to the next mail, no restart.
//
//   - smtp.enabled false (a fresh data dir): each mail is written to
//     <data dir>/mail/ as <UTC time>-<random>.eml (temporary file, fsync,
//     rename), and the server logs "mail: written to the outbox (SMTP is
//     disabled)" at info level with the file's path and the recipient. So
//     strongbox serve alone can sign in with OTP: read the code from the
//     file. The folder keeps the newest 1000 mails; older ones are removed
//     as new ones arrive. (PocketBase, without SMTP, hands mail to a local
//     sendmail and drops it when there is none.)
//   - smtp.enabled true: SMTP to host:port. tls true is TLS from the first
//     byte (port 465). tls false connects in clear and upgrades with
//     STARTTLS whenever the server offers it (as PocketBase's mailer and
//     Go's net/smtp do); a server that offers no STARTTLS gets the mail in
//     clear. The server's certificate is checked against the system roots
//     for host. With a username or password, the client authenticates with
//     authMethod PLAIN (the default) or LOGIN; it sends credentials only
//     over TLS or to a loopback host, never in clear over a network. EHLO
//     names localName (localhost when empty). Every step (connect, TLS
//     handshake, each command and its reply, the message data) has a 10 s
//     deadline (DefaultStepTimeout). The password is stored in
//     settings.journal and never reported.
//
// # Queue
//
// A request that sends mail only queues it (up to DefaultQueueSize, 256
// mails) and answers; one worker delivers them, taking each recipient's
// mails in order and the recipients in turn. An answer never waits for
// SMTP. A failed delivery is logged at error level ("mail: send failed",
// the recipient and the reason, such as "mail: smtp auth: 535 5.7.8 …"); a
// mail the queue cannot take is dropped and logged ("mail: queue full: …"
// or "mail: recipient's backlog full: …"). At most DefaultPerRecipient (8)
// mails wait per recipient, and a full queue drops the newest mail of the
// longest backlog, so a flood aimed at some addresses delays and drops
// only their mails, never another person's (package strongbox/httpapi/api
// also limits the requests that send mail). A graceful stop delivers what
// is queued for at most 10 s, then abandons the rest and logs how many.
// The log never holds a password, an OTP, a token or a mail's subject or
// body.
//
// mail/ is not a store: a backup does not archive it, and a restore, which
// replaces every entry of the data dir but backups/, moves it aside with
// the old data and deletes it once the restore is confirmed. Mails queued
// when a restore re-executes the server are lost.
//
// The SMTP sink of its tests is package strongbox/conformance/smtpsink.
package mail
