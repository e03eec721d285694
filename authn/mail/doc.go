// Package mail sends strongbox's outgoing mail: the one-time passwords,
// verification, password-reset and email-change mails of record auth
// (interface §4.5, §5), through SMTP when the settings configure it and
// into <data dir>/mail/ as .eml files when they do not.
//
// It knows nothing of HTTP and nothing of the stores: a caller renders a
// Message (Render fills a template's placeholders) and hands it to a Sender.
package mail
